//! Compaction survives quitting the interface: `/compact`, quit, `cairn -c`,
//! and the next request carries the summary and the later turns only,
//! while the transcript still shows the marker.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
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
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(15)).is_some(),
        "did not quit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_quit_and_resume_continues_from_the_summary() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Answer alpha."),
            Reply::text("A title"),
            Reply::text("Answer beta."),
            Reply::text("SUMMARY-MARK: they asked alpha."),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &[]);
    ask(&mut app, "first prompt alpha");
    app.wait_for_text("Answer alpha.");
    ask(&mut app, "second prompt beta");
    app.wait_for_text("Answer beta.");
    ask(&mut app, "/compact");
    app.wait_for_text("context compacted");
    drained(&mock);
    quit(&mut app);

    mock.push(Reply::text("Answer gamma."));
    let mut app = start(&home, &mock, &["-c"]);
    let screen = app.wait_for_text("context compacted");
    assert!(
        screen.contains("first prompt alpha"),
        "the transcript is whole:\n{screen}"
    );
    let before = mock.requests().len();
    ask(&mut app, "third prompt gamma");
    app.wait_for_text("Answer gamma.");
    let asked = mock.requests()[before..].to_vec();
    assert_eq!(asked.len(), 1, "no new summary");
    let next = asked[0].to_string();
    assert!(
        next.contains("SUMMARY-MARK"),
        "the summary is sent: {next:.400}"
    );
    assert!(next.contains("second prompt beta") && next.contains("third prompt gamma"));
    assert!(
        !next.contains("first prompt alpha"),
        "the summarised turn is not"
    );
    assert!(!next.contains("Answer alpha."));
    quit(&mut app);
}
