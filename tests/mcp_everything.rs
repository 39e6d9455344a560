//! cairn against the MCP reference server `@modelcontextprotocol/server-everything`,
//! over stdio, streamable HTTP and HTTP+SSE (on 127.0.0.1): the manager's
//! tools directly, and the real binary's `cairn run`.
//!
//! The server comes from npm through `npx`. When `npx` is missing or the
//! package cannot be fetched, each test prints `skipped: …` to stderr and
//! returns; `.ci/mcp-setup.sh` fetches it beforehand in CI.

use crate::{mock_model, test_home};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
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

use mock_model::{Format, MockModel, Reply};
use test_home::TestHome;

pub(crate) const PACKAGE: &str = "@modelcontextprotocol/server-everything";
/// The first run may download the package.
const STARTUP: Duration = Duration::from_secs(240);

/// Makes sure `npx` can run the package, fetching it if need be. `Err` is
/// the reason to skip.
pub(crate) async fn fetch_package() -> Result<(), String> {
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
pub(crate) static FETCHED: tokio::sync::OnceCell<Result<(), String>> =
    tokio::sync::OnceCell::const_new();

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
            if let cairn::tools::Progress::Status(line) = line {
                lines.push(line);
            }
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

/// The reference server in one of its HTTP modes (`streamableHttp`, `sse`)
/// on a free port of 127.0.0.1, and that port.
async fn serve(mode: &str) -> (tokio::process::Child, u16) {
    // The server takes its port from PORT; pick a free one. It listens on
    // every interface, but the client talks to 127.0.0.1 only.
    let port = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("no free port on 127.0.0.1: {e}"),
    };
    let mut server = Command::new("npx")
        .args(["-y", PACKAGE, mode])
        .env("PORT", port.to_string())
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .expect("npx runs (it fetched the package just now)");
    // The streamable HTTP mode says so on stderr, the SSE mode on stdout.
    let stderr = BufReader::new(server.stderr.take().expect("piped stderr")).lines();
    let stdout = BufReader::new(server.stdout.take().expect("piped stdout")).lines();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for mut lines in [Box::new(stderr) as Box<dyn LineSource>, Box::new(stdout)] {
        let tx = tx.clone();
        // Keep draining so the server never blocks on a full pipe.
        tokio::spawn(async move {
            while let Some(line) = lines.next().await {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    let ready = tokio::time::timeout(STARTUP, async {
        while let Some(line) = rx.recv().await {
            let lower = line.to_ascii_lowercase();
            if lower.contains("listening on port") || lower.contains("running on port") {
                return Ok(());
            }
            if line.contains("Failed to start") {
                return Err(line);
            }
        }
        Err("the server exited before listening".to_string())
    })
    .await;
    match ready {
        Ok(Ok(())) => (server, port),
        Ok(Err(why)) => {
            stop(&server);
            panic!("the {mode} server did not start: {why}");
        }
        Err(_) => {
            stop(&server);
            panic!("the {mode} server did not start within {STARTUP:?}");
        }
    }
}

/// Lines of a child's output, whichever stream.
trait LineSource: Send {
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Option<String>> + Send + '_>>;
}

impl<R: tokio::io::AsyncBufRead + Unpin + Send> LineSource for tokio::io::Lines<R> {
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Option<String>> + Send + '_>> {
        Box::pin(async move { self.next_line().await.ok().flatten() })
    }
}

fn stop(server: &tokio::process::Child) {
    if let Some(pid) = server.id() {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[tokio::test]
async fn everything_over_streamable_http() {
    require_package!("everything_over_streamable_http");
    let (mut server, port) = serve("streamableHttp").await;
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

#[tokio::test]
async fn everything_over_sse() {
    require_package!("everything_over_sse");
    let (mut server, port) = serve("sse").await;
    let config = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/sse")),
        transport: Some("sse".into()),
        timeout_secs: Some(60),
        ..Default::default()
    };
    let manager = McpManager::start(BTreeMap::from([("everything".to_string(), config)]));
    exercise(&manager, "everything").await;
    manager.shutdown().await;
    stop(&server);
    let _ = server.wait().await;
}

/// A plain `…/sse` address with no `transport`: cairn falls back to
/// HTTP+SSE and reports the transport it connected with, not `http`.
#[tokio::test]
async fn a_fallen_back_server_is_reported_as_sse() {
    require_package!("a_fallen_back_server_is_reported_as_sse");
    let (mut server, port) = serve("sse").await;
    let config = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/sse")),
        timeout_secs: Some(60),
        ..Default::default()
    };
    let manager = McpManager::start(BTreeMap::from([("everything".to_string(), config)]));
    connected(&manager, "everything").await;
    let status = manager.statuses().remove(0);
    assert_eq!(status.transport.to_string(), "sse", "{status:?}");
    manager.shutdown().await;
    stop(&server);
    let _ = server.wait().await;
}

/// The messages of every request the model received (a title request may
/// follow the turn).
fn last_results(mock: &MockModel) -> String {
    mock.requests()
        .iter()
        .map(|r| r["messages"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `cairn run` with `[mcp.everything]` as given: the model calls `echo`
/// and reads a resource.
async fn run_cairn_echo(server_toml: &str, word: &str) {
    let home = TestHome::new();
    let dir = home.home.path().join("config").join("cairn");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("config.toml"),
        format!("[mcp.everything]\n{server_toml}\ntrusted = true\nstartup_timeout_secs = 120\n"),
    )
    .expect("config");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("e1", "mcp__everything__echo", json!({"message": word})),
            Reply::tool(
                "r1",
                "read_mcp_resource",
                json!({"server": "everything", "uri": "demo://resource/dynamic/text/7"}),
            ),
            Reply::text("Echoed."),
        ],
    )
    .await;
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "echo a word"])
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(STARTUP, out)
        .await
        .expect("cairn run finished")
        .expect("cairn ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        last_results(&mock).contains("Resource 7: This is a plaintext resource"),
        "{stderr}\n{}",
        last_results(&mock)
    );
    assert!(
        last_results(&mock).contains(&format!("Echo: {word}")),
        "{stderr}\n{}",
        last_results(&mock)
    );
}

/// `cairn run "/mcp__everything__args-prompt …"` sends the server's prompt.
async fn run_cairn_prompt(server_toml: &str) {
    let home = TestHome::new();
    let dir = home.home.path().join("config").join("cairn");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("config.toml"),
        format!("[mcp.everything]\n{server_toml}\nstartup_timeout_secs = 120\n"),
    )
    .expect("config");
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Sunny.")]).await;
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "/mcp__everything__args-prompt city=Lisbon"])
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(STARTUP, out)
        .await
        .expect("cairn run finished")
        .expect("cairn ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let sent = last_results(&mock);
    assert!(
        sent.contains("What's weather in Lisbon?"),
        "{stderr}\n{sent}"
    );
}

#[tokio::test]
async fn cairn_run_over_every_transport() {
    require_package!("cairn_run_over_every_transport");
    let stdio = format!("command = \"npx\"\nargs = [\"-y\", \"{PACKAGE}\"]");
    run_cairn_echo(&stdio, "stdio").await;
    run_cairn_prompt(&stdio).await;
    let (mut http, port) = serve("streamableHttp").await;
    run_cairn_echo(
        &format!("url = \"http://127.0.0.1:{port}/mcp\""),
        "streamable",
    )
    .await;
    stop(&http);
    let _ = http.wait().await;
    let (mut sse, port) = serve("sse").await;
    let url = format!("http://127.0.0.1:{port}/sse");
    run_cairn_echo(&format!("url = \"{url}\"\ntransport = \"sse\""), "sse").await;
    // Without `transport`, the streamable POST gets a 404 and cairn falls
    // back to HTTP+SSE.
    run_cairn_echo(&format!("url = \"{url}\""), "fallback").await;
    stop(&sse);
    let _ = sse.wait().await;
}
