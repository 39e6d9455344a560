//! Plan mode through the front door: in a pty, `/plan` explores read-only,
//! an edit is refused, the plan is approved in its dialog and becomes the
//! todo list, and the next edit asks as usual; headless, the plan is
//! printed and nothing is written.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

const PLAN: &str = "# Rename old_name\n\nThe function is only used in lib.rs.\n\n1. Rename old_name to new_name in lib.rs\n2. Run the tests\n";

fn edit() -> serde_json::Value {
    json!({"file_path": "lib.rs", "old_string": "fn old_name() {}", "new_string": "fn new_name() {}"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_approved_in_its_dialog_and_work_continues_in_smart_mode() {
    let home = TestHome::new();
    std::fs::write(home.path("lib.rs"), "fn old_name() {}\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "lib.rs"})),
            Reply::tool("e1", "edit", edit()),
            Reply::tool("p1", "exit_plan_mode", json!({"plan": PLAN})),
            Reply::tool("e2", "edit", edit()),
            Reply::text("Renamed."),
            Reply::text("Rename"),
        ],
    )
    .await;
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("/plan rename old_name to new_name");
    app.send(b"\r");
    let dialog = app.wait_for("the plan dialog", |s| {
        s.contains("Plan ready") && s.contains("Approve, and continue in smart mode")
    });
    assert!(
        dialog.contains("Rename old_name to new_name in lib.rs"),
        "{dialog}"
    );
    assert!(dialog.contains("Keep planning"), "{dialog}");
    // The edit made while planning was refused, and said why.
    let refused = mock.requests()[2].to_string();
    assert!(refused.contains("you are in plan mode"), "{refused}");
    assert!(refused.contains("exit_plan_mode"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(home.path("lib.rs")).unwrap(),
        "fn old_name() {}\n"
    );
    // While planning, the model was offered the way out.
    assert!(
        mock.requests()[0]
            .to_string()
            .contains("\"exit_plan_mode\"")
    );

    app.send(b"1");
    // Approved: smart mode, the plan's steps are the todo list, and the
    // next edit asks as usual.
    let asked = app.wait_for("the edit's permission dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    assert!(asked.contains("todos 0/2"), "{asked}");
    assert!(asked.contains("Run the tests"), "{asked}");
    let approved = mock.requests()[3].to_string();
    assert!(approved.contains("approved the plan"), "{approved}");
    app.send(b"a");
    let screen = app.wait_for_text("Renamed.");
    assert!(screen.contains("smart"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(home.path("lib.rs")).unwrap(),
        "fn new_name() {}\n"
    );
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_planning_sends_the_note_back_and_stays_in_plan_mode() {
    let home = TestHome::new();
    std::fs::write(home.path("lib.rs"), "fn old_name() {}\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("p1", "exit_plan_mode", json!({"plan": PLAN})),
            Reply::tool("e1", "edit", edit()),
            Reply::text("Still planning."),
            Reply::text("Rename"),
        ],
    )
    .await;
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["--mode", "plan"],
        &home.vars(&mock.url()),
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("rename it");
    app.send(b"\r");
    app.wait_for_text("Approve, and continue in smart mode");
    app.send(b"3");
    app.type_text("also rename the tests");
    app.send(b"\r");
    app.wait_for_text("Still planning.");
    let reqs = mock.requests();
    let sent_back = reqs[1].to_string();
    assert!(sent_back.contains("keep planning"), "{sent_back}");
    assert!(sent_back.contains("also rename the tests"), "{sent_back}");
    assert!(reqs[2].to_string().contains("you are in plan mode"));
    assert_eq!(
        std::fs::read_to_string(home.path("lib.rs")).unwrap(),
        "fn old_name() {}\n"
    );
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}

#[tokio::test]
async fn a_headless_plan_run_prints_the_plan_and_writes_nothing() {
    let home = TestHome::new();
    std::fs::write(home.path("lib.rs"), "fn old_name() {}\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "w1",
                "write",
                json!({"file_path": "new.rs", "content": "x"}),
            ),
            Reply::tool("p1", "exit_plan_mode", json!({"plan": PLAN})),
            Reply::text("That is the plan."),
            Reply::text("Rename"),
        ],
    )
    .await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .args(["run", "--mode", "plan", "rename old_name"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("1. Rename old_name to new_name in lib.rs"),
        "{stdout}"
    );
    assert!(!home.path("new.rs").exists());
    assert!(
        mock.requests()[1]
            .to_string()
            .contains("you are in plan mode")
    );
}
