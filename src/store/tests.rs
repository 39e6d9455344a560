use std::path::Path;

use super::*;
use crate::conversation::{Message, Part, ResultContent, Role};

pub(super) fn new_session(store: &mut Store, root: &str) -> SessionId {
    store
        .create_session(&NewSession {
            cwd: PathBuf::from(root),
            project_root: Some(PathBuf::from(root)),
            provider: "anthropic".into(),
            model: "claude".into(),
            parent_id: None,
        })
        .unwrap()
}

pub(super) fn meta(turn: u64) -> MessageMeta {
    MessageMeta {
        turn,
        ..Default::default()
    }
}

pub(super) fn tool_exchange(output: &str) -> (Message, Message) {
    (
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                input: serde_json::json!({"command": "cargo build"}),
            }],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "c1".into(),
                content: vec![ResultContent::text(output)],
                is_error: true,
            }],
        },
    )
}

#[test]
fn append_and_load_round_trip_with_counters() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 7,
        ..Default::default()
    };
    store
        .append_message(&id, &Message::user_text("  fix the\n build  "), &meta(1))
        .unwrap();
    let answer = store
        .append_message(
            &id,
            &Message::assistant_text("done"),
            &MessageMeta {
                model: Some("claude".into()),
                usage: Some(usage),
                cost: Some(0.5),
                turn: 1,
                status: MessageStatus::Active,
            },
        )
        .unwrap();
    store
        .append_message(&id, &Message::user_text("second prompt"), &meta(2))
        .unwrap();

    let loaded = store.load_messages(&id).unwrap();
    assert_eq!(loaded.len(), 3);
    assert_eq!(loaded[1].0, answer);
    assert_eq!(loaded[1].1, Message::assistant_text("done"));
    assert_eq!(loaded[1].2.usage, Some(usage));
    let s = store.session(&id).unwrap();
    assert_eq!(s.message_count, 3);
    assert_eq!((s.input_tokens, s.output_tokens), (100, 7));
    assert_eq!(s.cost, 0.5);
    assert_eq!(s.first_prompt.as_deref(), Some("fix the build"));
    assert_eq!(s.display_title(), "fix the build");
}

#[test]
fn record_usage_adjusts_totals_by_the_difference() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    let m = store
        .append_message(&id, &Message::assistant_text("a"), &meta(1))
        .unwrap();
    let u1 = Usage {
        input_tokens: 10,
        output_tokens: 2,
        ..Default::default()
    };
    let u2 = Usage {
        input_tokens: 15,
        output_tokens: 5,
        ..Default::default()
    };
    store.record_usage(m, &u1, Some(1.0)).unwrap();
    store.record_usage(m, &u2, Some(1.5)).unwrap();
    let s = store.session(&id).unwrap();
    assert_eq!((s.input_tokens, s.output_tokens, s.cost), (15, 5, 1.5));
}

#[test]
fn append_to_missing_session_is_a_clear_error() {
    let mut store = Store::open_in_memory().unwrap();
    let err = store
        .append_message(
            &SessionId("nope".into()),
            &Message::user_text("x"),
            &meta(0),
        )
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NoSession(ref s) if s == "nope"),
        "{err}"
    );
}

#[test]
fn search_and_list_filter_by_project() {
    let mut store = Store::open_in_memory().unwrap();
    let a = new_session(&mut store, "/a");
    let b = new_session(&mut store, "/b");
    store
        .append_message(&a, &Message::user_text("shared word"), &meta(1))
        .unwrap();
    store
        .append_message(&b, &Message::user_text("shared word"), &meta(1))
        .unwrap();
    let only_b = store
        .search(
            "shared",
            &SearchFilter {
                project_root: Some(Path::new("/b")),
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(only_b.len(), 1);
    assert_eq!(only_b[0].session_id, b);
    let list = store
        .list_sessions(&ListFilter {
            project_root: Some(Path::new("/a")),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(list.iter().map(|s| &s.id).collect::<Vec<_>>(), vec![&a]);
    assert_eq!(
        store.latest_session(Path::new("/b")).unwrap().unwrap().id,
        b
    );
    assert!(store.latest_session(Path::new("/c")).unwrap().is_none());
}

#[test]
fn list_orders_by_last_activity_and_pages() {
    let mut store = Store::open_in_memory().unwrap();
    let ids: Vec<_> = (0..5).map(|_| new_session(&mut store, "/p")).collect();
    std::thread::sleep(std::time::Duration::from_millis(3));
    store
        .append_message(&ids[1], &Message::user_text("x"), &meta(1))
        .unwrap();
    let all = store.list_sessions(&ListFilter::default()).unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].id, ids[1]);
    let page = store
        .list_sessions(&ListFilter {
            project_root: None,
            limit: 2,
            offset: 1,
        })
        .unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0].id, all[1].id);
}

#[test]
fn resolve_id_takes_unique_prefixes() {
    let mut store = Store::open_in_memory().unwrap();
    let a = new_session(&mut store, "/p");
    let b = new_session(&mut store, "/p");
    assert_eq!(store.resolve_id(&a.0).unwrap(), a);
    assert_eq!(store.resolve_id(&b.0.to_uppercase()).unwrap(), b);
    // v7 ids made together share their time prefix.
    let common: String =
        a.0.chars()
            .zip(b.0.chars())
            .take_while(|(x, y)| x == y)
            .map(|p| p.0)
            .collect();
    assert!(!common.is_empty());
    assert!(matches!(
        store.resolve_id(&common),
        Err(StoreError::Ambiguous { .. })
    ));
    assert!(matches!(
        store.resolve_id("ffffffff"),
        Err(StoreError::NoMatch(_))
    ));
    assert!(matches!(
        store.resolve_id("ab*"),
        Err(StoreError::InvalidPrefix(_))
    ));
    assert!(matches!(
        store.resolve_id(""),
        Err(StoreError::InvalidPrefix(_))
    ));
}

#[test]
fn fork_copies_history_up_to_a_message() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store.set_title(&id, "original").unwrap();
    let first = store
        .append_message(&id, &Message::user_text("one"), &meta(1))
        .unwrap();
    let second = store
        .append_message(
            &id,
            &Message::assistant_text("two"),
            &MessageMeta {
                usage: Some(Usage {
                    input_tokens: 4,
                    output_tokens: 3,
                    ..Default::default()
                }),
                turn: 1,
                ..Default::default()
            },
        )
        .unwrap();
    store
        .append_message(&id, &Message::user_text("three"), &meta(2))
        .unwrap();
    store
        .record_file_version(&id, 1, Path::new("a.rs"), Some(b"old"))
        .unwrap();
    store
        .record_file_version(&id, 2, Path::new("b.rs"), None)
        .unwrap();

    let fork = store.fork_session(&id, Some(second)).unwrap();
    let copied = store.load_messages(&fork).unwrap();
    assert_eq!(
        copied.iter().map(|m| m.1.text()).collect::<Vec<_>>(),
        vec!["one", "two"]
    );
    assert!(copied.iter().all(|m| m.0 != first && m.0 != second));
    let s = store.session(&fork).unwrap();
    assert_eq!(s.parent_id.as_ref(), Some(&id));
    assert_eq!(s.title.as_deref(), Some("original (fork)"));
    assert_eq!(
        (s.message_count, s.input_tokens, s.output_tokens),
        (2, 4, 3)
    );
    assert_eq!(store.file_versions(&fork, 1).unwrap().len(), 1);
    assert!(store.file_versions(&fork, 2).unwrap().is_empty());
    // Copies are searchable in their own right.
    assert_eq!(
        store.search("two", &SearchFilter::default()).unwrap().len(),
        2
    );

    let whole = store.fork_session(&id, None).unwrap();
    assert_eq!(store.load_messages(&whole).unwrap().len(), 3);
    let other = new_session(&mut store, "/q");
    assert!(matches!(
        store.fork_session(&other, Some(first)),
        Err(StoreError::WrongSession { .. })
    ));
}

#[test]
fn delete_cascades_to_messages_versions_and_index() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store
        .append_message(&id, &Message::user_text("ocelot"), &meta(1))
        .unwrap();
    store
        .record_file_version(&id, 1, Path::new("f"), Some(b"x"))
        .unwrap();
    let fork = store.fork_session(&id, None).unwrap();
    store.delete_session(&id).unwrap();
    let count = |sql: &str| -> i64 { store.conn.query_row(sql, [&id.0], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT count(*) FROM messages WHERE session_id = ?1"),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM file_versions WHERE session_id = ?1"),
        0
    );
    let hits = store.search("ocelot", &SearchFilter::default()).unwrap();
    assert_eq!(hits.len(), 1, "only the fork's copy remains");
    assert_eq!(hits[0].session_id, fork);
    assert_eq!(store.session(&fork).unwrap().parent_id, None);
    assert!(matches!(store.session(&id), Err(StoreError::NoSession(_))));
    assert!(matches!(
        store.delete_session(&id),
        Err(StoreError::NoSession(_))
    ));
    store.integrity_check().unwrap();
}

#[test]
fn truncate_after_rewinds_in_place() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    let keep = store
        .append_message(&id, &Message::user_text("a"), &meta(1))
        .unwrap();
    store
        .append_message(&id, &Message::assistant_text("gnu"), &meta(1))
        .unwrap();
    store
        .append_message(&id, &Message::user_text("c"), &meta(2))
        .unwrap();
    store
        .record_file_version(&id, 2, Path::new("f"), None)
        .unwrap();
    store.truncate_after(&id, keep).unwrap();
    let left = store.load_messages(&id).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(store.session(&id).unwrap().message_count, 1);
    assert!(store.file_versions(&id, 2).unwrap().is_empty());
    assert!(
        store
            .search("gnu", &SearchFilter::default())
            .unwrap()
            .is_empty()
    );
    // New messages continue after the kept one.
    store
        .append_message(&id, &Message::user_text("d"), &meta(2))
        .unwrap();
    let texts: Vec<_> = store
        .load_messages(&id)
        .unwrap()
        .iter()
        .map(|m| m.1.text())
        .collect();
    assert_eq!(texts, vec!["a", "d"]);
}

#[test]
fn undone_turn_is_marked_and_left_out_of_markdown() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store
        .append_message(&id, &Message::user_text("keep me"), &meta(1))
        .unwrap();
    store
        .append_message(&id, &Message::user_text("drop me"), &meta(2))
        .unwrap();
    assert_eq!(store.mark_turn_undone(&id, 2).unwrap(), 1);
    let loaded = store.load_messages(&id).unwrap();
    assert_eq!(loaded[1].2.status, MessageStatus::Undone);
    let md = store.export_markdown(&id).unwrap();
    assert!(md.contains("keep me") && !md.contains("drop me"), "{md}");
    let json = store.export_json(&id).unwrap();
    assert_eq!(json["messages"][1]["status"], "undone");
}

#[test]
fn file_versions_keep_missing_and_binary_content() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store
        .record_file_version(&id, 3, Path::new("new.txt"), None)
        .unwrap();
    store
        .record_file_version(&id, 3, Path::new("img.png"), Some(&[0, 159, 255]))
        .unwrap();
    let v = store.file_versions(&id, 3).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].content, None);
    assert_eq!(v[1].content.as_deref(), Some(&[0u8, 159, 255][..]));
    assert_eq!(v[1].path, PathBuf::from("img.png"));
    assert!(store.file_versions(&id, 4).unwrap().is_empty());
}

#[test]
fn markdown_export_fences_tool_output_safely() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store
        .append_message(&id, &Message::user_text("show it"), &meta(1))
        .unwrap();
    let (call, result) = tool_exchange("```rust\nfn main() {}\n```");
    store.append_message(&id, &call, &meta(1)).unwrap();
    store.append_message(&id, &result, &meta(1)).unwrap();
    let md = store.export_markdown(&id).unwrap();
    assert!(md.starts_with("# show it\n"), "{md}");
    assert!(md.contains("**Tool call: bash**"));
    assert!(
        md.contains("````\n```rust\nfn main() {}\n```\n````"),
        "{md}"
    );
    assert!(md.contains("**Tool error**"));
}

#[test]
fn older_schema_is_migrated_after_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let conn = schema::create_at_version(&path, 1).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, cwd, provider, model, created_at, updated_at)
             VALUES ('s1', '/p', 'x', 'y', 1, 1)",
            [],
        )
        .unwrap();
        let parts = serde_json::to_string(&Message::user_text("legacy kestrel").parts).unwrap();
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, parts, created_at) VALUES ('s1', 1, 'user', ?1, 1)",
            [parts],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert!(dir.path().join("sessions.db.bak-v1").exists());
    let hits = store.search("kestrel", &SearchFilter::default()).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        store.load_messages(&SessionId("s1".into())).unwrap()[0]
            .2
            .status,
        MessageStatus::Active
    );
}

#[test]
fn store_can_move_to_a_worker_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<Store>();
}

#[test]
fn list_and_search_use_indexes_not_sorts() {
    let store = Store::open_in_memory().unwrap();
    let plan = |sql: &str| -> String {
        let mut stmt = store
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.join("; ")
    };
    let all = plan("SELECT id FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 50");
    assert!(!all.contains("TEMP B-TREE"), "{all}");
    let project = plan(
        "SELECT id FROM sessions WHERE project_root = 'x' ORDER BY updated_at DESC, id DESC LIMIT 50",
    );
    assert!(!project.contains("TEMP B-TREE"), "{project}");
}

fn run(call_id: &str, turn: u64, status: &str) -> ToolRun {
    let status = crate::conversation::ToolStatus::parse(status).unwrap();
    ToolRun {
        call_id: call_id.into(),
        turn,
        status,
        display: Some(serde_json::json!({"kind": "job", "job_id": call_id})),
        elapsed_ms: Some(1500),
    }
}

#[test]
fn tool_runs_round_trip_and_follow_forks_rewinds_and_deletes() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    assert!(matches!(
        store.record_tool_run(&SessionId("nope".into()), &run("c0", 1, "done")),
        Err(StoreError::NoSession(_))
    ));
    let keep = store
        .append_message(&id, &Message::user_text("one"), &meta(1))
        .unwrap();
    store
        .append_message(&id, &Message::user_text("two"), &meta(2))
        .unwrap();
    store.record_tool_run(&id, &run("c1", 1, "failed")).unwrap();
    store.record_tool_run(&id, &run("c2", 2, "done")).unwrap();
    // A second record for one call replaces the first.
    store.record_tool_run(&id, &run("c1", 1, "denied")).unwrap();

    let runs = store.tool_runs(&id).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs["c1"].status, crate::conversation::ToolStatus::Denied);
    assert_eq!(runs["c2"], run("c2", 2, "done"));

    let fork = store.fork_session(&id, Some(keep)).unwrap();
    let forked = store.tool_runs(&fork).unwrap();
    assert_eq!(forked.keys().collect::<Vec<_>>(), vec!["c1"]);

    store.truncate_after(&id, keep).unwrap();
    assert_eq!(store.tool_runs(&id).unwrap().len(), 1);

    store.delete_session(&id).unwrap();
    let left: i64 = store
        .conn
        .query_row(
            "SELECT count(*) FROM tool_runs WHERE session_id = ?1",
            [&id.0],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(store.tool_runs(&fork).unwrap().len(), 1);
}

#[test]
fn unreadable_tool_display_keeps_the_status() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store.record_tool_run(&id, &run("c1", 1, "done")).unwrap();
    store
        .conn
        .execute("UPDATE tool_runs SET display = '{not json'", [])
        .unwrap();
    let runs = store.tool_runs(&id).unwrap();
    assert_eq!(runs["c1"].status, crate::conversation::ToolStatus::Done);
    assert_eq!(runs["c1"].display, None);
}

#[test]
fn second_schema_is_migrated_to_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let conn = schema::create_at_version(&path, 2).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, cwd, provider, model, created_at, updated_at)
             VALUES ('s2', '/p', 'x', 'y', 1, 1)",
            [],
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    assert!(dir.path().join("sessions.db.bak-v2").exists());
    let sid = SessionId("s2".into());
    assert!(store.tool_runs(&sid).unwrap().is_empty());
    store.record_tool_run(&sid, &run("c1", 1, "done")).unwrap();
    let version: i64 = store
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn a_generated_title_never_replaces_the_persons_name() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store.set_title_if_unnamed(&id, "Generated one").unwrap();
    assert_eq!(
        store.session(&id).unwrap().title.as_deref(),
        Some("Generated one")
    );
    store.rename(&id, "Mine").unwrap();
    store.set_title_if_unnamed(&id, "Generated late").unwrap();
    assert_eq!(store.session(&id).unwrap().title.as_deref(), Some("Mine"));
}

#[test]
fn lost_files_follow_forks_rewinds_and_deletes() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    let keep = store
        .append_message(&id, &Message::user_text("one"), &meta(1))
        .unwrap();
    store
        .append_message(&id, &Message::user_text("two"), &meta(2))
        .unwrap();
    for turn in [1, 2] {
        store
            .record_lost_file(
                &id,
                &LostFile {
                    turn,
                    path: PathBuf::from(format!("/p/big{turn}.bin")),
                    why: "too large".into(),
                },
            )
            .unwrap();
    }
    assert_eq!(store.lost_files(&id).unwrap().len(), 2);
    let fork = store.fork_session(&id, Some(keep)).unwrap();
    let forked = store.lost_files(&fork).unwrap();
    assert_eq!(forked.len(), 1);
    assert_eq!(forked[0].path, PathBuf::from("/p/big1.bin"));
    store.truncate_after(&id, keep).unwrap();
    assert_eq!(store.lost_files(&id).unwrap().len(), 1);
    store.delete_session(&id).unwrap();
    let left: i64 = store
        .conn
        .query_row(
            "SELECT count(*) FROM lost_files WHERE session_id = ?1",
            [&id.0],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
}

#[test]
fn third_schema_gets_a_typed_status_for_every_tool_result() {
    use crate::conversation::{Part, ResultContent, ToolStatus};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let result = |id: &str, text: &str, is_error: bool| Part::ToolResult {
        call_id: id.into(),
        content: vec![ResultContent::text(text)],
        is_error,
    };
    {
        let conn = schema::create_at_version(&path, 3).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, cwd, provider, model, created_at, updated_at)
             VALUES ('s3', '/p', 'x', 'y', 1, 1)",
            [],
        )
        .unwrap();
        let parts = serde_json::to_string(&vec![
            result("ok", "fine", false),
            result("no", "The person denied this call.", true),
            result("stop", "The turn was cancelled before it ran.", true),
            result("wall", "Blocked: rm -rf / is never run", true),
            result("bad", "exit status 2", true),
            result("kept", "The person denied this call.", true),
        ])
        .unwrap();
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, parts, created_at, turn)
             VALUES ('s3', 1, 'user', ?1, 1, 4)",
            [parts],
        )
        .unwrap();
        // A row recorded by v3 itself stays as it was.
        conn.execute(
            "INSERT INTO tool_runs (session_id, call_id, turn, status, elapsed_ms)
             VALUES ('s3', 'kept', 4, 'done', 7)",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let runs = store.tool_runs(&SessionId("s3".into())).unwrap();
    let status = |id: &str| runs[id].status;
    assert_eq!(status("ok"), ToolStatus::Done);
    assert_eq!(status("no"), ToolStatus::Denied);
    assert_eq!(status("stop"), ToolStatus::Cancelled);
    assert_eq!(status("wall"), ToolStatus::Blocked);
    assert_eq!(status("bad"), ToolStatus::Failed);
    assert_eq!(status("kept"), ToolStatus::Done);
    assert_eq!(runs["kept"].elapsed_ms, Some(7));
    assert_eq!(runs["bad"].turn, 4);
}

#[test]
fn a_tool_run_with_an_unknown_status_is_left_out() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store.record_tool_run(&id, &run("c1", 1, "done")).unwrap();
    store.record_tool_run(&id, &run("c2", 1, "done")).unwrap();
    store
        .conn
        .execute(
            "UPDATE tool_runs SET status = 'exploded' WHERE call_id = 'c2'",
            [],
        )
        .unwrap();
    let runs = store.tool_runs(&id).unwrap();
    assert_eq!(runs.keys().collect::<Vec<_>>(), vec!["c1"]);
}

#[test]
fn a_sub_agents_session_is_marked_and_never_the_latest_to_continue() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("db.sqlite")).unwrap();
    let root = "/work/proj";
    let parent = new_session(&mut store, root);
    std::thread::sleep(std::time::Duration::from_millis(5));
    let child = store
        .create_session(&NewSession {
            cwd: PathBuf::from(root),
            project_root: Some(PathBuf::from(root)),
            parent_id: Some(parent.clone()),
            ..NewSession::default()
        })
        .unwrap();
    store.mark_subagent(&child).unwrap();
    let s = store.session(&child).unwrap();
    assert!(s.subagent && s.parent_id.as_ref() == Some(&parent));
    assert!(!store.session(&parent).unwrap().subagent);
    let latest = store.latest_session(Path::new(root)).unwrap().unwrap();
    assert_eq!(latest.id, parent);
}
