//! Issue 16's first start, the real binary in a pty: with no provider, the
//! set-up asks for one, checks a pasted key against the scripted models
//! endpoint (a wrong key is refused and the guide stays), stores the key
//! 0600 and starts; the next start needs no set-up.

use crate::{mock_model, pty, test_home};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

/// The test home's environment without any key: nothing is configured.
fn bare_vars(home: &TestHome, url: &str) -> Vec<(String, String)> {
    let mut vars: Vec<_> = home
        .vars(url)
        .into_iter()
        .filter(|(k, _)| k != "ANTHROPIC_API_KEY")
        .collect();
    // No local Ollama either.
    vars.push(("OLLAMA_HOST".into(), "127.0.0.1:9".into()));
    vars
}

fn spawn(home: &TestHome, url: &str) -> PtyApp {
    PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &bare_vars(home, url),
        home.project.path(),
        30,
        100,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_start_sets_up_a_provider_with_a_checked_key() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Set up and running."), Reply::text("Setup")],
    )
    .await;
    mock.require_key("sk-good");
    let mut app = spawn(&home, &mock.url());
    // The guide's frame may arrive in pieces: wait for the whole of it.
    app.wait_for("the set-up guide with its list", |s| {
        s.contains("Set up a model provider") && s.contains("Anthropic") && s.contains("base URL")
    });
    app.send(b"\r");
    let screen = app.wait_for_text("API key");
    assert!(
        screen.contains(&mock.url()),
        "the environment's URL: {screen}"
    );

    // A wrong key: refused, and the guide stays.
    app.type_text("wrong-key");
    app.send(b"\r");
    let screen = app.wait_for_text("the API key was refused (401)");
    assert!(screen.contains("Set up a model provider"), "{screen}");
    assert!(!screen.contains("wrong-key"), "the key is masked: {screen}");

    app.send(b"\x15");
    app.type_text("sk-good");
    app.send(b"\r");
    app.wait_for_text("Ask cairn");
    app.type_text("hello");
    app.send(b"\r");
    app.wait_for_text("Set up and running.");
    let headers = mock.request_headers();
    let sent = headers
        .iter()
        .flatten()
        .rfind(|(k, _)| k == "x-api-key")
        .map(|(_, v)| v.clone());
    assert_eq!(sent.as_deref(), Some("sk-good"));

    let key = home.home.path().join("data/cairn/keys/ANTHROPIC_API_KEY");
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "sk-good");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let config =
        std::fs::read_to_string(home.home.path().join("config/cairn/config.toml")).unwrap();
    assert!(config.contains("provider = \"anthropic\""), "{config}");
    // The turn is over (its title asked for) before quitting: a Ctrl+C
    // during a turn only stops the turn.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while mock.pending() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    app.send(b"\x03");
    app.send(b"\x03");
    assert!(app.wait_exit(Duration::from_secs(15)).is_some());

    // The next start goes straight in.
    let again = spawn(&home, &mock.url());
    let screen = again.wait_for_text("Ask cairn");
    assert!(!screen.contains("Set up a model provider"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_openai_compatible_server_is_set_up_by_its_url() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("Local hello.")]).await;
    let mut app = spawn(&home, "http://127.0.0.1:9");
    app.wait_for_text("Set up a model provider");
    for _ in 0..8 {
        app.send(b"\x1b[B");
    }
    app.send(b"\r");
    app.wait_for_text("Base URL");
    app.send(b"\x15");
    app.type_text(&mock.url());
    app.send(b"\r");
    app.wait_for_text("Ask cairn");
    app.type_text("hi");
    app.send(b"\r");
    app.wait_for_text("Local hello.");
    let config =
        std::fs::read_to_string(home.home.path().join("config/cairn/config.toml")).unwrap();
    assert!(config.contains("model = \"mock-large\""), "{config}");
}
