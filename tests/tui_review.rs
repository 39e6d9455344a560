//! Found in a new-user review of issues 15 and 16, through the front door:
//! notices that outlived what they were about.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

fn config(home: &TestHome, text: &str) {
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn start(home: &TestHome, url: &str) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(url),
        home.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app
}

/// The session's title is asked for in the background once the first turn
/// is over. Its retries are nobody's business on screen: before, a failed
/// first try of the title request left "↻ retrying 2/5" in the transcript
/// and "retrying in 0s" in the status line for good, after the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_title_request_leaves_no_retry_notice() {
    let home = TestHome::new();
    config(&home, "[retry]\nmax_attempts = 3\nbase_delay_ms = 200\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("The answer."),
            Reply::status(529),
            Reply::text("Greeting the model"),
        ],
    )
    .await;
    let mut app = start(&home, &mock.url());
    app.type_text("hello");
    app.send(b"\r");
    app.wait_for_text("The answer.");
    // The title request was retried and answered.
    let deadline = Instant::now() + Duration::from_secs(10);
    while mock.requests().len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(mock.requests().len(), 3, "the title request was retried");
    std::thread::sleep(Duration::from_millis(500));
    let screen = app.screen();
    assert!(!screen.contains("retrying"), "{screen}");
}
