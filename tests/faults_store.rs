//! Issue 11, section 1: a store that refuses writes is never silent, and
//! what it refused is written once it accepts writes again — the real
//! binary against a locked, full, read-only and immutable store.

use crate::{mock_model, test_home};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use test_home::TestHome;

async fn run(home: &TestHome, mock: &MockModel, prompt: &str) -> (Output, String) {
    let out = home
        .command(&mock.url())
        .args(["run", prompt])
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

fn db(home: &TestHome) -> PathBuf {
    home.home.path().join("data/cairn/sessions.db")
}

/// Every prompt stored in the database, oldest first.
fn stored_prompts(db: &Path) -> Vec<String> {
    let store = cairn::store::Store::open(db).unwrap();
    let mut prompts = Vec::new();
    let list = store
        .list_sessions(&cairn::store::ListFilter::default())
        .unwrap();
    for s in list.iter().rev() {
        for (_, m, _) in store.load_messages(&s.id).unwrap() {
            if m.role == cairn::conversation::Role::User {
                prompts.push(format!("{:?}", m.parts));
            }
        }
    }
    prompts
}

fn answers(n: usize) -> Vec<Reply> {
    vec![Reply::text("Fine."); n]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_store_locked_past_the_timeout_is_waited_for_and_nothing_is_lost() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, answers(6)).await;
    let (out, err) = run(&home, &mock, "first prompt").await;
    assert!(out.status.success(), "{err}");

    // Another process (this test) takes the write lock and keeps it past
    // the 20 s cairn waits per write.
    let path = db(&home);
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        locked_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_secs(24));
        conn.execute_batch("COMMIT").unwrap();
    });
    locked_rx.recv().unwrap();
    let (out, err) = run(&home, &mock, "second prompt").await;
    holder.join().unwrap();
    assert!(
        err.contains("not saved") && err.contains("busy"),
        "the wait was silent: {err}"
    );
    assert!(out.status.success(), "{err}");
    let prompts = stored_prompts(&db(&home));
    assert!(
        prompts.iter().any(|p| p.contains("second prompt")),
        "{prompts:?}"
    );
}

/// A small tmpfs mounted over the data directory, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }

    fn remount_read_only(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_full_disk_is_reported_and_run_exits_non_zero() {
    let home = TestHome::new();
    let Some(_fs) = Tmpfs::mount(&home.home.path().join("data"), "2m") else {
        return;
    };
    let mock = MockModel::start(Format::Anthropic, answers(2)).await;
    let (out, err) = run(&home, &mock, "first prompt").await;
    assert!(out.status.success(), "{err}");
    // Fill what is left.
    let filler = home.home.path().join("data/filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![b'x'; 64 * 1024];
    while std::io::Write::write_all(&mut f, &block).is_ok() {}
    drop(f);
    let long = "a long answer that needs room. ".repeat(2000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text(&long).chunk_chars(5000)],
    )
    .await;
    let (out, err) = run(&home, &mock, "second prompt").await;
    assert_eq!(out.status.code(), Some(3), "{out:?} {err}");
    // Whether the store already fails to open or fails at the first write
    // depends on how full the tmpfs got; either way it is said.
    assert!(
        err.contains("will not be saved") || err.contains("could not be saved"),
        "{err}"
    );
    assert!(err.contains("full"), "{err}");
}

#[tokio::test]
async fn a_read_only_data_directory_is_reported_and_run_exits_non_zero() {
    let home = TestHome::new();
    let Some(fs) = Tmpfs::mount(&home.home.path().join("data"), "8m") else {
        return;
    };
    let mock = MockModel::start(Format::Anthropic, answers(3)).await;
    let (out, err) = run(&home, &mock, "first prompt").await;
    assert!(out.status.success(), "{err}");
    fs.remount_read_only();
    let (out, err) = run(&home, &mock, "second prompt").await;
    assert_eq!(out.status.code(), Some(3), "{out:?} {err}");
    assert!(
        err.contains("will not be saved") || err.contains("could not be saved"),
        "{err}"
    );
    assert!(
        err.contains("read-only") || err.contains("readonly"),
        "{err}"
    );
}

#[tokio::test]
async fn an_immutable_database_is_reported_and_run_exits_non_zero() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, answers(3)).await;
    let (out, err) = run(&home, &mock, "first prompt").await;
    assert!(out.status.success(), "{err}");
    let path = db(&home);
    let chattr = Command::new("chattr").arg("+i").arg(&path).status();
    if !chattr.is_ok_and(|s| s.success()) {
        eprintln!("skipped: chattr +i is not possible here (needs root and ext4 or similar)");
        return;
    }
    let (out, err) = run(&home, &mock, "second prompt").await;
    let _ = Command::new("chattr").arg("-i").arg(&path).status();
    assert_eq!(out.status.code(), Some(3), "{out:?} {err}");
    assert!(
        err.contains("will not be saved") || err.contains("could not be saved"),
        "{err}"
    );
}

/// The database deleted while a run streams its answer: the run writes it
/// back whole (the earlier session too), says so, and exits 0.
#[tokio::test]
async fn a_database_deleted_mid_run_is_written_back_whole() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, answers(2)).await;
    let (out, err) = run(&home, &mock, "first prompt").await;
    assert!(out.status.success(), "{err}");
    let slow = Reply::text(&"slowly. ".repeat(40))
        .chunk_chars(16)
        .chunk_delay(Duration::from_millis(100));
    let mock = MockModel::start(Format::Anthropic, vec![slow, Reply::text("Title")]).await;
    let child = home
        .command(&mock.url())
        .args(["run", "second prompt"])
        .output();
    let remover = async {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        std::fs::remove_file(db(&home)).expect("the database exists");
    };
    let (out, ()) = tokio::join!(child, remover);
    let out = out.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("was deleted while cairn ran"), "{err}");
    let prompts = stored_prompts(&db(&home)).join(" ");
    assert!(prompts.contains("first prompt"), "{prompts}");
    assert!(prompts.contains("second prompt"), "{prompts}");
}

/// Under `ulimit -f` the store's writes fail with EFBIG instead of the
/// signal killing cairn: the run says so and exits 3.
#[tokio::test]
async fn a_file_size_limit_is_reported_not_fatal() {
    use std::os::unix::process::ExitStatusExt;
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, answers(2)).await;
    let mut command = home.command(&mock.url());
    command.args(["run", "a prompt"]);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 16 * 1024,
                rlim_max: 16 * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = command.output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "killed by a signal: {err}");
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("will not be saved") || err.contains("could not be saved"),
        "{err}"
    );
}
