//! What a session keeps across restarts besides its messages (issue 25):
//! the model and mode it last used, and the note an undo leaves for the
//! model; and the ways a first prompt reaches cairn from the command line
//! (`cairn "PROMPT"`, `cairn -p`, `cairn -- NAME`, a pipe into `cairn run`);
//! file tools that take relative paths from the workspace root; and a
//! destructive part of a compound command named, with no broad rule; and
//! exports kept out of the project.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::process::Stdio;

use cairn::store::Store;
use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::{Value, json};
use test_home::TestHome;
use tokio::io::AsyncWriteExt;

/// What only a title request holds.
const TITLE: &str = "Write a title";

fn start(home: &TestHome, mock: &MockModel, args: &[&str]) -> PtyApp {
    PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
        &home.vars(&mock.url()),
        home.project.path(),
        36,
        120,
    )
}

async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> (String, String) {
    let out = home.command(&mock.url()).args(args).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stdout}\n{stderr}");
    (stdout, stderr)
}

fn store(home: &TestHome) -> Store {
    Store::open(home.home.path().join("data/cairn/sessions.db")).unwrap()
}

/// The request whose body holds `needle` (the title requests aside).
fn request_with(mock: &MockModel, needle: &str) -> Value {
    mock.requests()
        .into_iter()
        .find(|r| r.to_string().contains(needle))
        .unwrap_or_else(|| panic!("no request holds {needle:?}: {:?}", mock.requests()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_note_and_model_stay_with_their_session_across_clear_and_resume() {
    let home = TestHome::new();
    home.write("a.txt", "before\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "a.txt"})),
            Reply::tool(
                "w1",
                "write",
                json!({"file_path": "a.txt", "content": "after\n"}),
            ),
            Reply::text("Wrote it."),
            Reply::text("First title").when(TITLE),
            Reply::text("Second answer.").when("second question"),
            Reply::text("Second title").when(TITLE),
            Reply::text("Third answer.").when("back to the first"),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &["--mode", "auto"]);
    app.wait_for_text("Ask cairn");
    app.type_text("change a.txt");
    app.send(b"\r");
    app.wait_for_text("Wrote it.");
    app.type_text("/undo");
    app.send(b"\r");
    app.wait_for_text("Undo the file changes");
    app.send(b"y");
    app.wait_for_text("Undone");
    assert_eq!(
        std::fs::read_to_string(home.path("a.txt")).unwrap(),
        "before\n"
    );
    // A switch is confirmed in the transcript, not only the status line.
    app.type_text("/model claude-haiku-4-5");
    app.send(b"\r");
    app.wait_for_text("Model: claude-haiku-4-5");
    app.type_text("/clear");
    app.send(b"\r");
    app.wait_for_text("Started a new session");
    app.type_text("second question");
    app.send(b"\r");
    app.wait_for_text("Second answer.");
    app.ctrl_c_to_quit();

    // The new session got neither the note nor a title made from it.
    let second = request_with(&mock, "second question").to_string();
    assert!(!second.contains("undid"), "{second}");
    let st = store(&home);
    let sessions = st.list_sessions(&Default::default()).unwrap();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let (newer, older) = (&sessions[0], &sessions[1]);
    assert_eq!(newer.first_prompt.as_deref(), Some("second question"));
    assert!(
        older
            .pending_note
            .as_deref()
            .unwrap_or("")
            .contains("undid")
    );
    assert_eq!(older.model, "claude-haiku-4-5");
    assert_eq!(older.mode.as_deref(), Some("auto"));

    // Resumed headless, the first session sends its note with its model.
    let id = older.id.as_str().to_string();
    let (out, _) = run(
        &home,
        &mock,
        &["run", "--session", &id, "back to the first"],
    )
    .await;
    assert!(out.contains("Third answer."), "{out}");
    let third = request_with(&mock, "back to the first");
    assert_eq!(third["model"], "claude-haiku-4-5");
    let text = third.to_string();
    assert!(text.contains("undid") && text.contains("a.txt"), "{text}");
    // Sent once: the stored note is gone, and it is not the person's words.
    let older = store(&home).session(&older.id).unwrap();
    assert_eq!(older.pending_note, None);
    assert!(!older.first_prompt.unwrap_or_default().contains("undid"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_keeps_the_sessions_model_and_mode_unless_the_command_line_names_others() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("One."),
            Reply::text("A title").when(TITLE),
            Reply::text("Two."),
            Reply::text("Three."),
        ],
    )
    .await;
    run(
        &home,
        &mock,
        &[
            "run",
            "--model",
            "claude-haiku-4-5",
            "--mode",
            "auto",
            "PROMPT-ONE",
        ],
    )
    .await;
    let (_, err) = run(&home, &mock, &["run", "-c", "PROMPT-TWO"]).await;
    // Never looser than the default without the command line saying so.
    assert!(
        err.contains("last ran in auto mode; it goes on in smart"),
        "{err}"
    );
    assert_eq!(
        request_with(&mock, "PROMPT-TWO")["model"],
        "claude-haiku-4-5"
    );
    let (_, err) = run(
        &home,
        &mock,
        &[
            "run",
            "-c",
            "--model",
            "claude-sonnet-4-5",
            "--mode",
            "smart",
            "PROMPT-THREE",
        ],
    )
    .await;
    assert!(!err.contains("Mode: auto"), "{err}");
    assert_eq!(
        request_with(&mock, "PROMPT-THREE")["model"],
        "claude-sonnet-4-5"
    );
    let s = &store(&home).list_sessions(&Default::default()).unwrap()[0];
    assert_eq!(
        (s.model.as_str(), s.mode.as_deref()),
        ("claude-sonnet-4-5", Some("smart"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_on_the_command_line_starts_the_interface_with_it_sent() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Fixed the tests.").when("fix the tests"),
            Reply::text("A title").when(TITLE),
            Reply::text("About sessions.").when("sessions"),
            Reply::text("Another title").when(TITLE),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &["fix the tests"]);
    app.wait_for_text("Fixed the tests.");
    app.ctrl_c_to_quit();
    // A prompt that is a command's name goes after `--`.
    let mut app = start(&home, &mock, &["--", "sessions"]);
    app.wait_for_text("About sessions.");
    app.ctrl_c_to_quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_flag_and_a_pipe_into_run_answer_headless() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Printed.").when("say printed"),
            Reply::text("Summed up.").when("PIPED-LINE-42"),
            Reply::text("T").when(TITLE),
            Reply::text("T").when(TITLE),
        ],
    )
    .await;
    let (out, _) = run(&home, &mock, &["-p", "say printed"]).await;
    assert!(out.contains("Printed."), "{out}");
    let mut child = home
        .command(&mock.url())
        .args(["run", "summarise this"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"PIPED-LINE-42\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Summed up."),
        "{stdout}"
    );
    let sent = request_with(&mock, "PIPED-LINE-42").to_string();
    assert!(sent.contains("summarise this"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_take_relative_paths_from_the_root_after_a_shell_cd() {
    let home = TestHome::new();
    home.write("x.txt", "AT-ROOT\n");
    home.write("sub/x.txt", "IN-SUB\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": "cd sub"})),
            Reply::tool("v1", "view", json!({"file_path": "x.txt"})),
            Reply::text("Read it."),
            Reply::text("T").when(TITLE),
        ],
    )
    .await;
    let (out, _) = run(&home, &mock, &["run", "--mode", "auto", "read x.txt"]).await;
    assert!(out.contains("Read it."), "{out}");
    let after_view = mock.requests()[2].to_string();
    assert!(
        after_view.contains("AT-ROOT") && !after_view.contains("IN-SUB"),
        "{after_view}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_part_of_a_compound_command_is_named_and_gets_no_broad_rule() {
    let home = TestHome::new();
    let command = "mkdir -p out && git clean -fdx";
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": command})),
            Reply::text("Left it."),
            Reply::text("T").when(TITLE),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &[]);
    app.wait_for_text("Ask cairn");
    app.type_text("tidy up");
    app.send(b"\r");
    let dialog = app.wait_for("the dialog", |s| s.contains(" d  Deny"));
    assert!(
        dialog.contains("`git clean`"),
        "the why names it:\n{dialog}"
    );
    assert!(dialog.contains("bash(git clean -fdx)"), "{dialog}");
    assert!(!dialog.contains("bash(git clean*)"), "{dialog}");
    app.send(b"d");
    app.send(b"\r");
    app.wait_for_text("Left it.");
    app.ctrl_c_to_quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_goes_to_the_data_directory_not_the_project() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Answered."), Reply::text("T").when(TITLE)],
    )
    .await;
    let mut app = start(&home, &mock, &[]);
    app.wait_for_text("Ask cairn");
    app.type_text("a question");
    app.send(b"\r");
    app.wait_for_text("Answered.");
    app.type_text("/export");
    app.send(b"\r");
    let screen = app.wait_for_text("Exported to");
    app.ctrl_c_to_quit();
    let exports = home.home.path().join("data/cairn/exports");
    let written: Vec<_> = std::fs::read_dir(&exports).unwrap().flatten().collect();
    assert_eq!(written.len(), 1, "{screen}");
    let in_project = std::fs::read_dir(home.project.path())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("cairn-session-")
        })
        .count();
    assert_eq!(in_project, 0);
}
