//! `/undo` in the parent takes back what its sub-agents changed, in the
//! running session and after it was resumed from the store; the session
//! browser lists the sub-agents' sessions under their parent.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

fn start(home: &TestHome, mock: &MockModel, args: &[&str]) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
        &home.vars(&mock.url()),
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn quit(mut app: PtyApp) {
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}

/// The parent delegates `task` to a `general` sub-agent, which views and
/// edits `file`; then both answer.
fn delegated_edit(task: &str, file: &str, old: &str, new: &str, done: &str) -> Vec<Reply> {
    vec![
        Reply::tool(
            &format!("a-{file}"),
            "agent",
            json!({"subagent_type": "general", "description": format!("change {file}"), "prompt": task}),
        ),
        Reply::tool(&format!("v-{file}"), "view", json!({"file_path": file})).when(task),
        Reply::tool(
            &format!("e-{file}"),
            "edit",
            json!({"file_path": file, "old_string": old, "new_string": new}),
        )
        .when(task),
        Reply::text("Changed it.").when(task),
        Reply::text(done),
    ]
}

/// `/undo`, confirmed; waits until `path` holds `want` again.
fn undo(app: &mut PtyApp, file: &str, path: &Path, want: &str) {
    app.type_text("/undo");
    app.send(b"\r");
    let confirm = app.wait_for_text("Undo the file changes");
    assert!(confirm.contains(file), "{confirm}");
    app.send(b"y");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(path).unwrap() != want {
        let screen = app.screen();
        assert!(std::time::Instant::now() < deadline, "{screen}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_restores_what_a_sub_agent_changed_live_and_after_resume() {
    let env = TestHome::new();
    env.write("a.txt", "alpha = 1\n");
    env.write("b.txt", "beta = 2\n");
    let mut replies = delegated_edit(
        "TASK-A: set alpha to 100",
        "a.txt",
        "alpha = 1",
        "alpha = 100",
        "The sub-agent changed a.txt.",
    );
    replies.push(Reply::text("Alpha"));
    replies.extend(delegated_edit(
        "TASK-B: set beta to 200",
        "b.txt",
        "beta = 2",
        "beta = 200",
        "The sub-agent changed b.txt.",
    ));
    let mock = MockModel::start(Format::Anthropic, replies).await;

    let mut app = start(&env, &mock, &["--mode", "auto"]);
    app.type_text("change a through a sub-agent");
    app.send(b"\r");
    app.wait_for_text("The sub-agent changed a.txt.");
    assert_eq!(
        std::fs::read_to_string(env.path("a.txt")).unwrap(),
        "alpha = 100\n"
    );
    undo(&mut app, "a.txt", &env.path("a.txt"), "alpha = 1\n");

    app.type_text("now b through a sub-agent");
    app.send(b"\r");
    app.wait_for_text("The sub-agent changed b.txt.");
    assert_eq!(
        std::fs::read_to_string(env.path("b.txt")).unwrap(),
        "beta = 200\n"
    );
    quit(app);

    // Resumed from the store, the parent still knows the child's change.
    let mut app = start(&env, &mock, &["-c", "--mode", "auto"]);
    app.wait_for_text("The sub-agent changed b.txt.");
    undo(&mut app, "b.txt", &env.path("b.txt"), "beta = 2\n");
    // The browser lists each sub-agent's session under its parent.
    app.type_text("/sessions");
    app.send(b"\r");
    let screen = app.wait_for_text("sub-agent of");
    assert_eq!(
        screen.matches("sub-agent of “Alpha”").count(),
        2,
        "{screen}"
    );
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains(" msgs")).collect();
    assert_eq!(rows.len(), 3, "{screen}");
    assert!(rows[0].contains("Alpha"), "{screen}");
    assert!(rows[1].contains("↳ general: change"), "{screen}");
    assert!(rows[2].contains("↳ general: change"), "{screen}");
    app.send(b"\x1b");
    quit(app);
}
