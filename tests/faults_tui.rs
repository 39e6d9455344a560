//! Issue 11 in the interface, the real binary in a pty: SIGHUP while a
//! command runs leaves nothing behind; Ctrl+Z suspends to the shell and
//! `fg` redraws; a session open in another cairn is offered as a fork.

#[path = "support/mock_model.rs"]
mod mock_model;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/test_home.rs"]
mod test_home;

use std::path::Path;
use std::time::{Duration, Instant};

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
        30,
        100,
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
        if cmd.contains(needle) {
            found.push(cmd);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_while_a_command_runs_leaves_no_process_and_records_the_cancellation() {
    let home = TestHome::new();
    let marker = format!("61.{}", std::process::id() % 1000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": format!("sleep {marker}")})),
            Reply::text("never"),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &["--mode", "auto"]);
    app.type_text("wait a while");
    app.send(b"\r");
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(app.pid().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    assert!(
        app.wait_exit(Duration::from_secs(20)).is_some(),
        "cairn did not exit on SIGHUP"
    );
    let left = processes_with(&format!("sleep {marker}"));
    assert!(left.is_empty(), "left behind: {left:?}");
    // The terminal was given back: the alternate screen left, the cursor shown.
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    let tail = &raw[raw.rfind("\u{1b}[?1049h").unwrap_or(0)..];
    assert!(
        tail.contains("\u{1b}[?1049l"),
        "still in the alternate screen"
    );
    // The call was answered as cancelled and stored.
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(db).unwrap();
    let s = store.latest_session(home.project.path()).unwrap().unwrap();
    let all = format!("{:?}", store.load_messages(&s.id).unwrap());
    assert!(all.contains("ToolResult") && all.contains("b1"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_z_suspends_to_the_shell_and_fg_redraws() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("An answer worth seeing again."),
            Reply::text("T"),
        ],
    )
    .await;
    // A shell with job control is what makes Ctrl+Z mean anything.
    let mut env = home.vars(&mock.url());
    env.push(("PS1".into(), "shell$ ".into()));
    let mut shell = PtyApp::spawn(
        Path::new("bash"),
        &["--norc", "--noprofile", "-i"],
        &env,
        home.project.path(),
        30,
        100,
    );
    shell.wait_for_text("shell$");
    shell.type_text(&format!(
        "exec_path={}; $exec_path\r",
        env!("CARGO_BIN_EXE_cairn")
    ));
    shell.wait_for_text("Ask cairn");
    shell.type_text("say something");
    shell.send(b"\r");
    shell.wait_for_text("worth seeing again");
    shell.send(b"\x1a");
    let screen = shell.wait_for("the shell after Ctrl+Z", |s| {
        s.contains("Stopped") && !s.contains("Ask cairn")
    });
    assert!(!screen.contains("worth seeing again"), "{screen}");
    shell.type_text("fg\r");
    shell.wait_for("cairn redrawn after fg", |s| {
        s.contains("worth seeing again") && s.contains("Ask cairn")
    });
    // Raw mode is back: a key goes to cairn, not to the shell's line editor.
    shell.type_text("typed after fg");
    shell.wait_for_text("typed after fg");
    shell.send(b"\x03");
    std::thread::sleep(Duration::from_millis(100));
    shell.send(b"\x03");
    shell.wait_for_text("shell$");
    shell.type_text("exit\r");
    shell.wait_exit(Duration::from_secs(10));
}
