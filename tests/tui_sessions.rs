//! Issue 16's sessions through the front door: a resumed transcript keeps
//! its timings, cancel markers and error lines; todos belong to their
//! session; the browser marks the current session and says what it did
//! inside itself.

use crate::{mock_model, pty, test_home};
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
        36,
        120,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn ask(app: &mut PtyApp, prompt: &str) {
    app.type_text(prompt);
    app.send(b"\r");
}

/// Waits until the scripted model has used every reply (the title too).
fn drained(mock: &MockModel) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while mock.pending() > 0 {
        assert!(
            Instant::now() < deadline,
            "replies left: {}",
            mock.pending()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
}

fn quit(app: &mut PtyApp) {
    app.send(b"\x03");
    app.send(b"\x03");
    assert!(
        app.wait_exit(Duration::from_secs(15)).is_some(),
        "did not quit"
    );
}

/// The line of `screen` that holds `needle`.
fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{screen}"))
}

/// Session A: todos, a timed command, a cancelled turn and a failed one.
fn record_session_a(home: &TestHome, mock: &MockModel) {
    mock.push(Reply::tool(
        "t1",
        "todos",
        json!({"todos": [{"content": "write the parser", "status": "in_progress"}]}),
    ));
    mock.push(Reply::tool("b1", "bash", json!({"command": "sleep 1.2"})));
    mock.push(Reply::text("Slept."));
    mock.push(Reply::text("Parser work"));
    let mut app = start(home, mock, &["--mode", "auto"]);
    ask(&mut app, "start the parser");
    app.wait_for_text("Slept.");
    drained(mock);
    mock.push(
        Reply::text(&"a long answer that goes on ".repeat(40))
            .chunk_delay(Duration::from_millis(100)),
    );
    ask(&mut app, "write an essay");
    app.wait_for_text("a long answer");
    app.send(b"\x1b");
    app.wait_for_text("cancelled");
    mock.push(Reply::status(400));
    ask(&mut app, "one more");
    app.wait_for_text("the request was refused (400)");
    quit(&mut app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_transcript_keeps_timings_markers_errors_and_its_own_todos() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    record_session_a(&home, &mock);

    // Session B, with no todos.
    mock.push(Reply::text("Hello from B."));
    mock.push(Reply::text("Greeting"));
    let mut app = start(&home, &mock, &[]);
    ask(&mut app, "hi");
    app.wait_for_text("Hello from B.");
    drained(&mock);

    // Resume A from the browser: its transcript as it was left.
    app.send(b"\x13");
    let browser = app.wait_for_text("Parser work");
    assert!(
        line_with(&browser, "Greeting").contains("current"),
        "{browser}"
    );
    app.send(b"\x1b[B");
    std::thread::sleep(Duration::from_millis(200));
    app.send(b"\r");
    let screen = app.wait_for_text("Resumed session");
    let sleep = line_with(&screen, "sleep 1.2");
    assert!(sleep.contains("1s") && !sleep.contains("0ms"), "{sleep}");
    assert!(screen.contains("⊘ cancelled"), "{screen}");
    assert!(screen.contains("the request was refused (400)"), "{screen}");
    assert!(screen.contains("write the parser"), "todos of A:\n{screen}");

    // Back to B: A's todos go.
    app.send(b"\x13");
    app.wait_for_text("search:");
    std::thread::sleep(Duration::from_millis(300));
    app.send(b"\x1b[A");
    app.send(b"\x1b[A");
    std::thread::sleep(Duration::from_millis(200));
    app.send(b"\r");
    app.wait_for("B resumed", |s| {
        s.contains("Hello from B.") && !s.contains("search:")
    });
    let screen = app.wait_for("A's todos to go", |s| !s.contains("write the parser"));
    assert!(screen.contains("Hello from B."), "{screen}");
}

/// A first cairn holding a session titled "Held session".
fn holder(home: &TestHome, mock: &MockModel) -> PtyApp {
    mock.push(Reply::text("First answer."));
    mock.push(Reply::text("Held session"));
    let mut first = start(home, mock, &[]);
    ask(&mut first, "hello");
    first.wait_for_text("First answer.");
    drained(mock);
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_from_the_browser_a_session_open_elsewhere_offers_fork_or_read_only() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let _first = holder(&home, &mock);

    let mut second = start(&home, &mock, &[]);
    second.send(b"\x13");
    second.wait_for_text("Held session");
    second.send(b"\r");
    let dialog = second.wait_for_text("open it read-only");
    assert!(dialog.contains("open in another cairn"), "{dialog}");
    assert!(dialog.contains("fork it"), "{dialog}");

    // Read-only: the transcript is shown and a prompt is refused, kept.
    second.send(b"r");
    second.wait_for_text("Read-only:");
    second.wait_for_text("First answer.");
    let asked = mock.requests().len();
    ask(&mut second, "more please");
    let screen = second.wait_for_text("Not sent:");
    assert!(line_with(&screen, "more please").contains("more please"));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        mock.requests().len(),
        asked,
        "a read-only prompt reached the model"
    );

    // Fork: a new session, titled as a fork, that answers.
    for _ in 0.."more please".len() {
        second.send(b"\x7f");
    }
    second.send(b"\x13");
    second.wait_for_text("search:");
    std::thread::sleep(Duration::from_millis(300));
    second.send(b"\r");
    second.wait_for_text("open it read-only");
    second.send(b"f");
    second.wait_for_text("Resumed session");
    mock.push(Reply::text("Fork answer."));
    ask(&mut second, "go on");
    second.wait_for_text("Fork answer.");
    second.send(b"\x13");
    let browser = second.wait_for_text("Held session (fork)");
    assert!(
        line_with(&browser, "Held session (fork)").contains("current"),
        "{browser}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_read_only_from_the_command_line_refuses_prompts() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let _first = holder(&home, &mock);
    let mut second = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["-c"],
        &home.vars(&mock.url()),
        home.project.path(),
        36,
        120,
    );
    second.wait_for_text("[r]ead-only");
    second.send(b"r\r");
    second.wait_for_text("Ask cairn");
    let asked = mock.requests().len();
    ask(&mut second, "are you there?");
    let screen = second.wait_for_text("Not sent:");
    assert!(screen.contains("read-only"), "{screen}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(mock.requests().len(), asked);
}
