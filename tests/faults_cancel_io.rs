//! Issue 11, section 7 through `cairn run`: a tool blocked in I/O stops
//! when the person cancels. `fetch` waits on a server that accepts the
//! connection and never answers; SIGINT must end the run, record the call
//! as cancelled and close the socket (the tool's I/O is dropped, not left
//! running behind the turn). In the interface the program lives on after
//! Esc, so there the closed socket shows the tool itself was dropped, not
//! merely that the process ended.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::TestHome;
use tokio::io::AsyncReadExt;

/// `fetch` reaches a loopback address only when a rule names it, and then
/// runs unasked in auto mode.
fn allow_loopback_fetch(home: &TestHome) {
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[permissions]\nallow = [\"fetch(127.0.0.1)\"]\n",
    )
    .unwrap();
}

#[tokio::test]
async fn sigint_drops_a_fetch_blocked_on_a_silent_server() {
    let home = TestHome::new();
    allow_loopback_fetch(&home);
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", silent.local_addr().unwrap());
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("f1", "fetch", json!({ "url": url })),
            Reply::text("never"),
        ],
    )
    .await;
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .args(["run", "--mode", "auto", "read that page"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Bounds for correctness, not timing claims: generous under load.
    let mut conn = accept_request(&silent).await;

    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();

    // The socket is closed: the tool's I/O was dropped at cancellation.
    let mut rest = [0u8; 64];
    let closed = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut rest))
        .await
        .expect("the fetch connection was left open after SIGINT");
    assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");

    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("cairn did not exit after SIGINT")
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("cancelled"), "{err}");

    // The call is recorded with its result, marked as cancelled.
    let id = err
        .lines()
        .find_map(|l| l.strip_prefix("cairn: session "))
        .unwrap_or_else(|| panic!("no session id on stderr: {err}"))
        .trim()
        .to_string();
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(db).unwrap();
    let msgs = store.load_messages(&cairn::store::SessionId(id)).unwrap();
    let all = format!("{msgs:?}");
    assert!(all.contains("ToolResult") && all.contains("f1"), "{all}");
    assert!(
        all.contains("The call was cancelled by the person"),
        "{all}"
    );
    // Only the one model request: the cancelled turn did not go on.
    assert_eq!(mock.requests().len(), 1);
}

/// Accepts the fetch's connection and reads its request, which is never
/// answered.
async fn accept_request(silent: &tokio::net::TcpListener) -> tokio::net::TcpStream {
    let (mut conn, _) = tokio::time::timeout(Duration::from_secs(30), silent.accept())
        .await
        .expect("fetch never connected to the silent server")
        .unwrap();
    let mut request = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut request))
        .await
        .expect("fetch sent no request")
        .unwrap();
    assert!(n > 0, "fetch closed the connection before asking");
    conn
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_drops_a_fetch_blocked_on_a_silent_server_while_cairn_runs_on() {
    let home = TestHome::new();
    allow_loopback_fetch(&home);
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", silent.local_addr().unwrap());
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("f2", "fetch", json!({ "url": url })),
            Reply::text("title"),
            Reply::text("never"),
        ],
    )
    .await;
    let mut app = pty::PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["--mode", "auto"],
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        100,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("read that page");
    app.send(b"\r");
    let mut conn = accept_request(&silent).await;
    app.send(b"\x1b");
    app.wait_for_text("cancelled");

    // cairn is still running, and the connection is closed: the tool's
    // future was dropped at cancellation, not left waiting on the socket.
    let mut rest = [0u8; 64];
    let closed = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut rest))
        .await
        .expect("the fetch connection was left open after Esc");
    assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
    assert!(
        app.wait_exit(Duration::from_millis(10)).is_none(),
        "cairn ended instead of going on after Esc"
    );

    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
}
