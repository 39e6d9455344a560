//! The session store against real files and real processes: schema
//! upgrades, refusing files it must not touch, concurrent writers, and a
//! writer killed mid-stream.

use crate::store_child;
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;

use cairn::conversation::Message;
use cairn::store::{
    MessageMeta, NewSession, SCHEMA_VERSION, SearchFilter, SessionId, Store, StoreError, V1_SQL,
};
use rusqlite::Connection;

/// Entry point for the child processes some tests start; a no-op otherwise.
#[test]
fn child_entry() {
    store_child::run_if_child();
}

fn session(store: &mut Store) -> SessionId {
    store
        .create_session(&NewSession {
            cwd: "/work/proj".into(),
            project_root: Some("/work/proj".into()),
            provider: "openai".into(),
            model: "gpt".into(),
            parent_id: None,
        })
        .unwrap()
}

fn message_count(path: &Path, id: &SessionId) -> (i64, i64) {
    let conn = Connection::open(path).unwrap();
    let rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM messages WHERE session_id = ?1",
            [&id.0],
            |r| r.get(0),
        )
        .unwrap();
    let distinct_seq: i64 = conn
        .query_row(
            "SELECT count(DISTINCT seq) FROM messages WHERE session_id = ?1",
            [&id.0],
            |r| r.get(0),
        )
        .unwrap();
    (rows, distinct_seq)
}

#[test]
fn v1_database_is_backed_up_and_migrated_with_data_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    // A v1 file whose latest rows are still only in the WAL: the backup must
    // include them.
    let old = Connection::open(&path).unwrap();
    old.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    old.execute_batch(V1_SQL).unwrap();
    old.execute_batch("PRAGMA user_version = 1").unwrap();
    old.execute(
        "INSERT INTO sessions (id, title, cwd, project_root, provider, model, created_at, updated_at, message_count)
         VALUES ('0190aaaa-0000-7000-8000-000000000001', 'old work', '/p', '/p', 'anthropic', 'claude', 10, 20, 2)",
        [],
    )
    .unwrap();
    for (seq, text) in [(1, "please rename the flamingo module"), (2, "renamed it")] {
        let parts = serde_json::to_string(&Message::user_text(text).parts).unwrap();
        old.execute(
            "INSERT INTO messages (session_id, seq, role, parts, created_at, turn)
             VALUES ('0190aaaa-0000-7000-8000-000000000001', ?1, 'user', ?2, 30, 1)",
            rusqlite::params![seq, parts],
        )
        .unwrap();
    }
    assert!(dir.path().join("sessions.db-wal").exists());

    let store = Store::open(&path).unwrap();
    drop(old);

    let backup = dir.path().join("sessions.db.bak-v1");
    let b = Connection::open(&backup).unwrap();
    let (version, rows): (i64, i64) = (
        b.query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap(),
        b.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .unwrap(),
    );
    assert_eq!(
        (version, rows),
        (1, 2),
        "backup is the v1 file with its WAL rows"
    );

    let id = store.resolve_id("0190aaaa").unwrap();
    let s = store.session(&id).unwrap();
    assert_eq!(s.title.as_deref(), Some("old work"));
    let texts: Vec<String> = store
        .load_messages(&id)
        .unwrap()
        .iter()
        .map(|m| m.1.text())
        .collect();
    assert_eq!(texts, ["please rename the flamingo module", "renamed it"]);
    let hits = store.search("flamingo", &SearchFilter::default()).unwrap();
    assert_eq!(hits.len(), 1, "old messages are indexed by the migration");
    let now: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(now, SCHEMA_VERSION);
    store.integrity_check().unwrap();
}

#[test]
fn reopening_a_current_database_makes_no_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let mut store = Store::open(&path).unwrap();
    let id = session(&mut store);
    drop(store);
    let store = Store::open(&path).unwrap();
    store.session(&id).unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".bak")), "{names:?}");
}

#[test]
fn newer_database_is_refused_and_left_byte_identical() {
    for wal in [false, true] {
        refuse_newer(wal);
    }
}

fn refuse_newer(wal: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let conn = Connection::open(&path).unwrap();
        if wal {
            conn.execute_batch("PRAGMA journal_mode = WAL").unwrap();
        }
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path)
        .err()
        .expect("a newer schema must be refused");
    match &err {
        StoreError::TooNew {
            found, supported, ..
        } => assert_eq!((*found, *supported), (99, SCHEMA_VERSION)),
        other => panic!("expected TooNew, got {other}"),
    }
    assert!(err.to_string().contains("newer cairn"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(!dir.path().join("sessions.db.bak-v99").exists());
}

#[test]
fn file_that_is_not_a_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        (
            "garbage.db",
            (0..8192u32)
                .map(|i| (i * 31 % 251) as u8)
                .collect::<Vec<u8>>(),
        ),
        ("notes.db", b"these are my notes, not a database\n".to_vec()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let err = Store::open(&path)
            .err()
            .expect("a corrupt file must be refused");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{name}: {err}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was modified");
    }
}

#[test]
fn another_programs_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');")
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path)
        .err()
        .expect("a foreign database must be refused");
    assert!(err.to_string().contains("not one cairn made"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn two_connections_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let mut store = Store::open(&path).unwrap();
    let id = session(&mut store);
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            let id = id.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(&path).unwrap();
                for i in 0..500 {
                    store
                        .append_message(
                            &id,
                            &Message::user_text(format!("t{t} m{i}")),
                            &MessageMeta::default(),
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(message_count(&path, &id), (1000, 1000));
    assert_eq!(store.session(&id).unwrap().message_count, 1000);
}

fn read_acks(child: &mut std::process::Child, stop_after: Option<usize>) -> Vec<i64> {
    let stdout = child.stdout.take().unwrap();
    let mut ids = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest may print its own words on the same line before ours.
        if let Some(rest) = line.find("ack ").map(|at| &line[at + 4..]) {
            ids.push(rest.rsplit(' ').next().unwrap().parse().unwrap());
            if Some(ids.len()) == stop_after {
                break;
            }
        }
    }
    ids
}

#[test]
fn two_writer_processes_interleave_without_losing_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let mut store = Store::open(&path).unwrap();
    let id = session(&mut store);
    let db = path.to_str().unwrap();
    let mut a = store_child::spawn("writer", &[db, &id.0, "500", "alpha"], &[]);
    let mut b = store_child::spawn("writer", &[db, &id.0, "500", "beta"], &[]);
    let acked_b = std::thread::spawn(move || {
        let ids = read_acks(&mut b, None);
        assert!(b.wait().unwrap().success());
        ids
    });
    let acked_a = read_acks(&mut a, None);
    assert!(a.wait().unwrap().success());
    let acked_b = acked_b.join().unwrap();
    assert_eq!((acked_a.len(), acked_b.len()), (500, 500));
    assert_eq!(message_count(&path, &id), (1000, 1000));
    let stored: HashSet<i64> = store
        .load_messages(&id)
        .unwrap()
        .iter()
        .map(|m| m.0.0)
        .collect();
    assert!(acked_a.iter().chain(&acked_b).all(|m| stored.contains(m)));
    assert_eq!(
        store
            .search(
                "alpha",
                &SearchFilter {
                    limit: 2000,
                    ..Default::default()
                }
            )
            .unwrap()
            .len(),
        500
    );
}

#[test]
fn killed_writer_loses_nothing_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let id = {
        let mut store = Store::open(&path).unwrap();
        session(&mut store)
    };
    let mut child = store_child::spawn(
        "writer",
        &[path.to_str().unwrap(), &id.0, "0", "doomed"],
        &[],
    );
    // Kill it mid-stream, then read what it acknowledged before it died:
    // acknowledgements still in the pipe count too, so the bound below
    // does not depend on how quickly this process read them.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = Vec::new();
    let ack = |line: String, acked: &mut Vec<i64>| {
        if let Some(rest) = line.find("ack ").map(|at| &line[at + 4..]) {
            acked.push(rest.rsplit(' ').next().unwrap().parse().unwrap());
        }
    };
    while acked.len() < 300 {
        ack(
            lines.next().expect("child stopped early").unwrap(),
            &mut acked,
        );
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    for line in lines.map_while(Result::ok) {
        ack(line, &mut acked);
    }
    assert!(acked.len() >= 300);

    let store = Store::open(&path).unwrap();
    store.integrity_check().unwrap();
    let stored: HashSet<i64> = store
        .load_messages(&id)
        .unwrap()
        .iter()
        .map(|m| m.0.0)
        .collect();
    let missing: Vec<_> = acked.iter().filter(|m| !stored.contains(m)).collect();
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");
    // At most the message being written when the kill landed is extra.
    assert!(
        stored.len() <= acked.len() + 1,
        "{} stored, {} acknowledged",
        stored.len(),
        acked.len()
    );
    assert_eq!(
        store.session(&id).unwrap().message_count as usize,
        stored.len()
    );
}

#[test]
fn default_path_honours_xdg_data_home() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut child = store_child::spawn(
        "default_path",
        &[],
        &[
            ("XDG_DATA_HOME", data.to_str().unwrap()),
            ("HOME", dir.path().to_str().unwrap()),
        ],
    );
    // Read to the end so the child never writes into a closed pipe.
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| l.unwrap())
        .collect();
    let out = lines
        .iter()
        .find_map(|l| l.find("path ").map(|at| l[at + 5..].to_string()))
        .expect("child printed a path");
    assert!(child.wait().unwrap().success());
    assert_eq!(Path::new(&out), data.join("cairn").join("sessions.db"));
}
