//! Issue 16, through the front door: what cairn says when a model request
//! fails (a retry as one line updated in place, a refused key naming its
//! variable, an unknown model suggesting `/model`, a refused connection
//! asking whether the server runs) and what it prints on exit.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

fn config(home: &TestHome, text: &str) {
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn start_at(home: &TestHome, url: &str, args: &[&str]) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
        &home.vars(url),
        home.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn ask(app: &mut PtyApp, prompt: &str) {
    app.type_text(prompt);
    app.send(b"\r");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_is_one_line_that_goes_once_the_retry_succeeds() {
    let home = TestHome::new();
    config(&home, "[retry]\nmax_attempts = 4\nbase_delay_ms = 1500\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::status(529),
            Reply::status(529),
            Reply::text("Back on track.").chunk_delay(Duration::from_millis(5)),
            Reply::text("Title"),
        ],
    )
    .await;
    let mut app = start_at(&home, &mock.url(), &[]);
    ask(&mut app, "hello");
    // The delay has jitter: 1.5 s ± 25 %.
    let screen = app.wait_for("the first retry line", |s| {
        s.contains("retrying 2/4 in ") && s.contains("s: server error 529")
    });
    assert_eq!(screen.matches("↻ retrying").count(), 1, "{screen}");
    let screen = app.wait_for_text("retrying 3/4");
    assert!(
        !screen.contains("retrying 2/4"),
        "updated in place:\n{screen}"
    );
    let screen = app.wait_for_text("Back on track.");
    let screen = if screen.contains("retrying 3/4") {
        app.wait_for("the retry line to go", |s| !s.contains("retrying 3/4"))
    } else {
        screen
    };
    assert!(!screen.contains("server error 529"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_names_the_variable() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::status(401)]).await;
    let mut app = start_at(&home, &mock.url(), &[]);
    ask(&mut app, "hello");
    let screen = app.wait_for_text("ANTHROPIC_API_KEY");
    assert!(screen.contains("the API key was refused (401)"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_model_suggests_the_model_command() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    mock.only_model("some-other-model");
    let mut app = start_at(&home, &mock.url(), &["--model", "claude-nine"]);
    ask(&mut app, "hello");
    let screen = app.wait_for_text("/model");
    assert!(screen.contains("model `claude-nine` not found"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_names_the_url_and_asks_about_the_server() {
    let home = TestHome::new();
    config(&home, "[retry]\nmax_attempts = 2\nbase_delay_ms = 50\n");
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let mut app = start_at(&home, &url, &[]);
    ask(&mut app, "hello");
    let screen = app.wait_for_text("is the server running?");
    assert!(screen.contains(&url), "{screen}");
    // One line of cause, not reqwest's chain.
    assert!(!screen.contains("error sending request"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_prints_the_title_the_id_and_how_to_continue() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Hi there."), Reply::text("Greeting a friend")],
    )
    .await;
    let mut app = start_at(&home, &mock.url(), &[]);
    ask(&mut app, "hello");
    app.wait_for_text("Hi there.");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while mock.pending() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    app.send(b"\x03");
    app.send(b"\x03");
    assert!(
        app.wait_exit(Duration::from_secs(15)).is_some(),
        "cairn did not quit"
    );
    let out = String::from_utf8_lossy(&app.raw_output()).into_owned();
    let tail = &out[out
        .rfind("\u{1b}[?1049l")
        .expect("left the alternate screen")..];
    assert!(tail.contains("Session: Greeting a friend"), "{tail:?}");
    let id = tail
        .split("cairn --resume ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no resume command in {tail:?}"))
        .to_string();
    // The id printed is the session on disk, and it resumes.
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sessions", "list"])
        .envs(home.vars(&mock.url()))
        .current_dir(home.project.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains(&id[..8]), "{id} not in:\n{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfocused_terminal_gets_a_notification_when_the_answer_is_ready() {
    let home = TestHome::new();
    config(&home, "[ui]\nnotify = \"osc9\"\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("First."),
            Reply::text("Title"),
            Reply::text("Second."),
        ],
    )
    .await;
    let mut app = start_at(&home, &mock.url(), &[]);
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    assert!(raw.contains("\u{1b}[?1004h"), "focus reporting is on");
    ask(&mut app, "one");
    app.wait_for_text("First.");
    std::thread::sleep(Duration::from_millis(300));
    let osc = "\u{1b}]9;cairn: the answer is ready\u{7}";
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    assert!(!raw.contains(osc), "focused: no notification");
    // The terminal reports that focus went elsewhere.
    app.send(b"\x1b[O");
    ask(&mut app, "two");
    app.wait_for_text("Second.");
    std::thread::sleep(Duration::from_millis(300));
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    assert!(raw.contains(osc), "no OSC 9 in the output");
    app.send(b"\x03");
    app.send(b"\x03");
    app.wait_exit(Duration::from_secs(15));
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    assert!(raw.contains("\u{1b}[?1004l"), "focus reporting restored");
}
