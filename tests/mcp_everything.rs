//! cairn against the MCP reference server `@modelcontextprotocol/server-everything`,
//! over stdio and over streamable HTTP (on 127.0.0.1).
//!
//! The server comes from npm through `npx`. When `npx` is missing or the
//! package cannot be fetched, each test prints `skipped: …` to stderr and
//! returns; `.ci/mcp-setup.sh` fetches it beforehand in CI.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use cairn::config::McpServerConfig;
use cairn::conversation::ResultContent;
use cairn::mcp::{McpManager, ServerState};
use cairn::tools::{Tool, ToolContext};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const PACKAGE: &str = "@modelcontextprotocol/server-everything";
/// The first run may download the package.
const STARTUP: Duration = Duration::from_secs(240);

/// Makes sure `npx` can run the package, fetching it if need be. `Err` is
/// the reason to skip.
async fn fetch_package() -> Result<(), String> {
    let run = Command::new("npx")
        .args(["-y", "--package", PACKAGE, "-c", "true"])
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(STARTUP, run).await {
        Err(_) => Err(format!(
            "fetching {PACKAGE} with npx took over {} s",
            STARTUP.as_secs()
        )),
        Ok(Err(e)) => Err(format!("npx could not be run ({e})")),
        Ok(Ok(out)) if !out.status.success() => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(format!(
                "npx could not fetch {PACKAGE} ({}): {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ))
        }
        Ok(Ok(_)) => Ok(()),
    }
}

/// An empty directory as the calls' workspace (each call pictures it for
/// undo, and all of /tmp is not one).
fn workspace() -> std::path::PathBuf {
    let ws = std::env::temp_dir().join(format!("cairn-mcp-ev-{}", std::process::id()));
    std::fs::create_dir_all(&ws).expect("workspace dir");
    ws
}

/// Both tests need the package; fetch it once so two `npx` runs do not
/// race to fill the same cache directory.
static FETCHED: tokio::sync::OnceCell<Result<(), String>> = tokio::sync::OnceCell::const_new();

macro_rules! require_package {
    ($test:literal) => {
        if let Err(why) = FETCHED.get_or_init(fetch_package).await {
            // Straight to the stream: the test harness hides `eprintln!` of
            // a passing test, and a skip must be seen.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skipped: {}: {why}", $test);
            return;
        }
    };
}

async fn connected(manager: &McpManager, name: &str) {
    let mut rx = manager.changes();
    let state = || {
        manager
            .statuses()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.state)
    };
    let waited = tokio::time::timeout(STARTUP, async {
        loop {
            match state() {
                Some(ServerState::Starting) => {
                    let _ = rx.changed().await;
                }
                _ => return,
            }
        }
    })
    .await;
    assert!(waited.is_ok(), "`{name}` still starting after {STARTUP:?}");
    let state = state();
    assert!(
        matches!(state, Some(ServerState::Connected { .. })),
        "`{name}` did not connect: {state:?}"
    );
}

fn tool(manager: &McpManager, name: &str) -> Arc<dyn Tool> {
    let tools = manager.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| panic!("no tool {name} among {names:?}"))
}

/// Lists the tools and calls `echo`, the image tool and the progress tool.
async fn exercise(manager: &McpManager, server: &str) {
    connected(manager, server).await;
    let echo = tool(manager, &format!("mcp__{server}__echo"));
    assert_eq!(echo.schema()["properties"]["message"]["type"], "string");
    let ctx = ToolContext::new(workspace());
    let out = echo.run(json!({"message": "hello from cairn"}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text_content(), "Echo: hello from cairn");

    let mut image_ctx = ToolContext::new(workspace());
    image_ctx.supports_images = true;
    let out = tool(manager, &format!("mcp__{server}__get-tiny-image"))
        .run(json!({}), &image_ctx)
        .await;
    assert!(
        out.content.iter().any(
            |c| matches!(c, ResultContent::Image { image } if image.media_type == "image/png")
        ),
        "{out:?}"
    );

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut progress_ctx = ToolContext::new(workspace());
    progress_ctx.progress = Some(tx);
    let out = tool(
        manager,
        &format!("mcp__{server}__trigger-long-running-operation"),
    )
    .run(json!({"duration": 0.4, "steps": 2}), &progress_ctx)
    .await;
    assert!(!out.is_error, "{out:?}");
    let mut lines = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(line) = rx.recv().await {
            lines.push(line);
            if lines.len() == 2 {
                break;
            }
        }
    })
    .await;
    assert_eq!(lines, ["1/2", "2/2"]);
}

#[tokio::test]
async fn everything_over_stdio() {
    require_package!("everything_over_stdio");
    let config = McpServerConfig {
        command: Some("npx".into()),
        args: vec!["-y".into(), PACKAGE.into()],
        env: BTreeMap::from([("NPM_CONFIG_UPDATE_NOTIFIER".into(), "false".into())]),
        timeout_secs: Some(STARTUP.as_secs()),
        ..Default::default()
    };
    let manager = McpManager::start(BTreeMap::from([("everything".to_string(), config)]));
    exercise(&manager, "everything").await;
    manager.shutdown().await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    require_package!("everything_over_streamable_http");
    // The server takes its port from PORT; pick a free one. It listens on
    // every interface, but the client talks to 127.0.0.1 only.
    let port = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("no free port on 127.0.0.1: {e}"),
    };
    let mut server = Command::new("npx")
        .args(["-y", PACKAGE, "streamableHttp"])
        .env("PORT", port.to_string())
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .expect("npx runs (it fetched the package just now)");
    let stderr = server.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let ready = tokio::time::timeout(STARTUP, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("listening on port") {
                return Ok(());
            }
            if line.contains("Failed to start") {
                return Err(line);
            }
        }
        Err("the server exited before listening".to_string())
    })
    .await;
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let stop = |server: &tokio::process::Child| {
        if let Some(pid) = server.id() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    };
    match ready {
        Ok(Ok(())) => {}
        Ok(Err(why)) => {
            stop(&server);
            panic!("the streamable HTTP server did not start: {why}");
        }
        Err(_) => {
            stop(&server);
            panic!("the streamable HTTP server did not start within {STARTUP:?}");
        }
    }

    let config = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: BTreeMap::from([("X-Cairn-Test".into(), "${CARGO_PKG_NAME}".into())]),
        timeout_secs: Some(60),
        ..Default::default()
    };
    let manager = McpManager::start(BTreeMap::from([("everything".to_string(), config)]));
    exercise(&manager, "everything").await;
    manager.shutdown().await;
    stop(&server);
    let _ = server.wait().await;
}
