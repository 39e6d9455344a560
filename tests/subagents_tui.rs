//! Sub-agents in the interface: parallel panes with a live line, a
//! sub-agent's dialog naming it, and Esc stopping every sub-agent and the
//! commands they run.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

fn start(home: &TestHome, mock: &MockModel) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.starts_with("sleep ") && cmd.contains(needle) {
            found.push(cmd);
        }
    }
    found
}

fn agent(id: &str, description: &str, task: &str) -> (String, serde_json::Value) {
    (
        id.to_string(),
        json!({"subagent_type": "explore", "description": description, "prompt": task}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_stops_both_running_sub_agents_and_their_commands() {
    let home = TestHome::new();
    let tag = std::process::id() % 1000;
    let (a, b) = (format!("71.{tag}"), format!("72.{tag}"));
    let (ia, aa) = agent("t1", "wait alpha", "TASK-A: wait");
    let (ib, ab) = agent("t2", "wait beta", "TASK-B: wait");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Two at once.")
                .tool_call(&ia, "agent", aa)
                .tool_call(&ib, "agent", ab),
            Reply::tool("s1", "bash", json!({"command": format!("sleep {a}")})).when("TASK-A"),
            Reply::tool("s2", "bash", json!({"command": format!("sleep {b}")})).when("TASK-B"),
            Reply::text("never").when("TASK-A"),
            Reply::text("never").when("TASK-B"),
            Reply::text("never"),
        ],
    )
    .await;
    let mut app = start(&home, &mock);
    app.type_text("wait for both");
    app.send(b"\r");
    // Both panes run at once, each with its live line.
    let screen = app.wait_for("both sub-agents running their commands", |s| {
        s.contains(&format!("sleep {a}")) && s.contains(&format!("sleep {b}"))
    });
    assert!(screen.contains("explore: wait alpha"), "{screen}");
    assert!(screen.contains("explore: wait beta"), "{screen}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while (processes_with(&a).is_empty() || processes_with(&b).is_empty())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!processes_with(&a).is_empty() && !processes_with(&b).is_empty());
    let asked = mock.requests().len();

    app.send(b"\x1b");
    app.wait_for_text("cancelled");
    let deadline = Instant::now() + Duration::from_secs(8);
    while !(processes_with(&a).is_empty() && processes_with(&b).is_empty())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(processes_with(&a).is_empty(), "{:?}", processes_with(&a));
    assert!(processes_with(&b).is_empty(), "{:?}", processes_with(&b));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(mock.requests().len(), asked, "nothing was asked after Esc");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_edit_asks_naming_it_and_deny_returns_to_it() {
    let home = TestHome::new();
    std::fs::write(home.path("notes.md"), "old\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "t1",
                "agent",
                json!({"subagent_type": "general", "description": "update the notes", "prompt": "TASK-N: update notes.md"}),
            ),
            Reply::tool("v1", "view", json!({"file_path": "notes.md"})).when("TASK-N"),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "notes.md", "old_string": "old", "new_string": "new"}),
            )
            .when("TASK-N"),
            Reply::text("SUB-REPORT: the person said no.").when("TASK-N"),
            Reply::text("The sub-agent was refused."),
            Reply::text("Notes"),
        ],
    )
    .await;
    let mut app = start(&home, &mock);
    app.type_text("update the notes");
    app.send(b"\r");
    let dialog = app.wait_for("the sub-agent's dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    assert!(dialog.contains("sub-agent `general`"), "{dialog}");
    assert!(dialog.contains("update the notes"), "{dialog}");
    app.send(b"d");
    app.type_text("not today");
    app.send(b"\r");
    app.wait_for_text("The sub-agent was refused.");
    assert_eq!(
        std::fs::read_to_string(home.path("notes.md")).unwrap(),
        "old\n"
    );
    let sub: Vec<_> = mock
        .requests()
        .into_iter()
        .filter(|r| {
            r.to_string().contains("TASK-N") && !r.to_string().contains("update the notes\"")
        })
        .collect();
    let last = sub.last().unwrap().to_string();
    assert!(
        last.contains("not today"),
        "the refusal went back to the sub-agent: {last}"
    );
    // Enter on its pane lists its calls in place; Enter again opens its
    // whole transcript, read-only.
    app.send(b"\t");
    let (mut inline, mut opened) = (String::new(), String::new());
    for _ in 0..4 {
        app.send(b"k");
        std::thread::sleep(Duration::from_millis(100));
        app.send(b"\r");
        std::thread::sleep(Duration::from_millis(300));
        if app.screen().contains("⊘ edit notes.md") {
            inline = app.screen();
            app.send(b"\r");
            opened = app.wait_for_text("(read-only)");
            break;
        }
    }
    assert!(inline.contains("⊘ edit notes.md"), "{}", app.screen());
    assert!(
        opened.contains("sub-agent general: update the notes (read-only)"),
        "{}",
        app.screen()
    );
    assert!(
        opened.contains("→ edit notes.md") && opened.contains("denied"),
        "{opened}"
    );
    assert!(opened.contains("SUB-REPORT"), "{opened}");
    app.send(b"\x1b");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}
