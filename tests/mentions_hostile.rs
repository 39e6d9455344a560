//! `@path` mentions against a hostile repository, through `cairn run`: a
//! pipe or a device must not hang the turn, and a secret the provider uses
//! is redacted from what is attached, as it is from tool output.

use crate::{mock_model, test_home};
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use test_home::TestHome;

const KEY: &str = "sk-ant-api03-Zq7pLm2Xw9Rt4Yb8Nc1Vd6Hs3Kf5Jg0";

fn command(home: &TestHome, mock: &MockModel) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .env("ANTHROPIC_API_KEY", KEY)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    c
}

async fn run(home: &TestHome, mock: &MockModel, prompt: &str) -> std::process::Output {
    let child = command(home, mock).args(["run", prompt]).output();
    tokio::time::timeout(Duration::from_secs(30), child)
        .await
        .expect("cairn run hung on the prompt's @ mentions")
        .unwrap()
}

#[tokio::test]
async fn a_pipe_or_a_device_mentioned_does_not_hang_the_turn() {
    let home = TestHome::new();
    nix::unistd::mkfifo(&home.path("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("/dev/zero", home.path("zero")).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Nothing to read."), Reply::text("Title")],
    )
    .await;
    let out = run(&home, &mock, "what is in @pipe and @zero").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("@pipe was not attached: it is not a regular file"),
        "{stderr}"
    );
    assert!(stderr.contains("@zero was not attached"), "{stderr}");
}

#[tokio::test]
async fn the_provider_key_in_an_attached_file_is_redacted() {
    let home = TestHome::new();
    std::fs::write(
        home.path(".env"),
        format!("ANTHROPIC_API_KEY={KEY}\nPORT=8080\n"),
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("It sets a port."), Reply::text("Title")],
    )
    .await;
    let out = run(&home, &mock, "explain @.env").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let request = mock.requests()[0]["messages"].to_string();
    assert!(
        request.contains("PORT=8080"),
        "the file was attached: {request}"
    );
    assert!(
        !request.contains(&KEY[..20]),
        "the key reached the model: {request}"
    );
    assert!(request.contains("[redacted: "), "{request}");
}
