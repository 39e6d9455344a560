//! The MCP manager and tools against a real rmcp server over stdio.
//!
//! This test binary has its own `main`: started with `CAIRN_TEST_MCP_SERVE=1`
//! it *is* the test server (tests/support/mcp_server.rs); otherwise it runs
//! the tests below, each in a fresh runtime, and spawns itself as the server.
//! Pass a word to run only the tests whose name contains it.

#[path = "support/mcp_server.rs"]
mod mcp_server;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use cairn::config::McpServerConfig;
use cairn::conversation::ResultContent;
use cairn::mcp::{McpManager, ServerState, TransportKind, format_status, split_tool_name};
use cairn::tools::{Registry, Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};

const SERVE_ENV: &str = "CAIRN_TEST_MCP_SERVE";
const WAIT: Duration = Duration::from_secs(30);

type TestFn = fn() -> Pin<Box<dyn Future<Output = ()>>>;

macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), || Box::pin($name()) as Pin<Box<dyn Future<Output = ()>>>)),*]
    };
}

fn main() {
    if std::env::var_os(SERVE_ENV).is_some() {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(mcp_server::serve_stdio());
        return;
    }
    let all: &[(&str, TestFn)] = tests!(
        start_returns_before_servers_connect,
        tools_are_listed_with_prefix_and_schema,
        calls_return_text_errors_and_images,
        progress_reaches_the_tool_context,
        list_changed_refreshes_the_tools,
        a_crash_is_reported_and_restart_recovers,
        a_slow_call_times_out_with_a_clear_error,
        cancel_stops_waiting_and_tells_the_server,
        a_server_that_cannot_start_fails_with_the_reason,
        a_server_that_exits_at_startup_shows_its_stderr,
        disabled_servers_stay_down,
        shutdown_stops_the_server_process,
        streamable_http_with_headers,
    );
    // The few libtest arguments worth honouring: name filters, `--skip`, `--list`.
    let (mut filter, mut skip, mut list) = (Vec::new(), Vec::new(), false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--skip" => skip.extend(args.next()),
            "--list" => list = true,
            a if a.starts_with('-') => {}
            _ => filter.push(arg),
        }
    }
    let selected = all.iter().filter(|(name, _)| {
        (filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str())))
            && !skip.iter().any(|s| name.contains(s.as_str()))
    });
    if list {
        for (name, _) in selected {
            println!("{name}: test");
        }
        return;
    }
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in selected {
        ran += 1;
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(test())));
        rt.shutdown_timeout(Duration::from_secs(5));
        match outcome {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(*name);
            }
        }
    }
    println!("\n{ran} run, {} failed", failed.len());
    if !failed.is_empty() {
        println!("failures: {}", failed.join(", "));
        std::process::exit(1);
    }
}

fn test_server() -> McpServerConfig {
    let exe = std::env::current_exe().expect("own path");
    McpServerConfig {
        command: Some(exe.display().to_string()),
        env: BTreeMap::from([(SERVE_ENV.to_string(), "1".to_string())]),
        timeout_secs: Some(20),
        ..Default::default()
    }
}

fn one(name: &str, config: McpServerConfig) -> Arc<McpManager> {
    McpManager::start(BTreeMap::from([(name.to_string(), config)]))
}

fn state(manager: &McpManager, name: &str) -> ServerState {
    manager
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.state)
        .expect("server listed")
}

/// Waits until `pred` holds for the server's state, waking on `changes()`.
async fn wait_for(manager: &McpManager, name: &str, pred: impl Fn(&ServerState) -> bool) {
    let mut rx = manager.changes();
    let waited = tokio::time::timeout(WAIT, async {
        while !pred(&state(manager, name)) {
            rx.changed().await.expect("manager alive");
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "server `{name}` never reached the expected state; it is {:?}",
        state(manager, name)
    );
}

async fn connected(manager: &McpManager, name: &str) {
    wait_for(manager, name, |s| {
        matches!(s, ServerState::Connected { .. })
    })
    .await;
}

fn tool(manager: &McpManager, name: &str) -> Arc<dyn Tool> {
    manager
        .tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// A context whose workspace is an empty directory of its own (each call
/// pictures the workspace for undo, and all of /tmp is not one).
fn ctx() -> ToolContext {
    let ws = std::env::temp_dir().join(format!("cairn-mcp-ws-{}", std::process::id()));
    std::fs::create_dir_all(&ws).expect("workspace dir");
    ToolContext::new(ws)
}

async fn call(manager: &McpManager, name: &str, input: Value) -> ToolOutput {
    tool(manager, name).run(input, &ctx()).await
}

fn temp_file(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "cairn-mcp-{tag}-{}-{}",
        std::process::id(),
        rand_suffix()
    ))
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

async fn wait_for_file(path: &Path, needle: &str) -> bool {
    for _ in 0..100 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn start_returns_before_servers_connect() {
    // A "server" that never answers: start() must come back regardless.
    let hang = McpServerConfig {
        command: Some("sleep".into()),
        args: vec!["30".into()],
        ..Default::default()
    };
    let manager = McpManager::start(BTreeMap::from([
        ("hang".to_string(), hang),
        ("test".to_string(), test_server()),
    ]));
    assert_eq!(state(&manager, "hang"), ServerState::Starting);
    assert!(manager.tools().iter().all(|t| !t.name().contains("hang")));
    connected(&manager, "test").await;
    assert_eq!(state(&manager, "hang"), ServerState::Starting);
    let table = format_status(&manager.statuses());
    assert!(table.contains("hang"), "{table}");
    assert!(table.contains("starting"), "{table}");
    manager.shutdown().await;
}

async fn tools_are_listed_with_prefix_and_schema() {
    let manager = one("test", test_server());
    connected(&manager, "test").await;
    let mut registry = Registry::new();
    registry.register(tool(&manager, "mcp__test__echo"));
    manager.install_tools(&mut registry);
    let names: Vec<&str> = registry.names().collect();
    assert_eq!(
        names,
        [
            // The server offers resources, so the two resource tools too.
            "list_mcp_resources",
            "mcp__test__add_tool",
            "mcp__test__ask",
            "mcp__test__crash",
            "mcp__test__echo",
            "mcp__test__fail",
            "mcp__test__header",
            "mcp__test__image",
            "mcp__test__progress",
            "mcp__test__roots",
            "mcp__test__slow",
            "read_mcp_resource",
        ]
    );
    let echo = tool(&manager, "mcp__test__echo");
    assert_eq!(echo.description(), "Echoes the text back.");
    assert_eq!(echo.schema()["properties"]["text"]["type"], "string");
    assert_eq!(echo.schema()["required"], json!(["text"]));
    assert!(!echo.read_only());
    assert_eq!(
        echo.summary(&json!({"text": "hi"})),
        "mcp test/echo text=hi"
    );
    assert_eq!(split_tool_name(echo.name()), Some(("test", "echo")));

    let status = manager.statuses().remove(0);
    assert_eq!(status.transport, TransportKind::Stdio);
    assert_eq!(status.state, ServerState::Connected { tools: 10 });
    assert!(status.tools.contains(&"echo".to_string()));
    let table = format_status(&manager.statuses());
    assert!(table.contains("connected (10 tools)"), "{table}");
    manager.shutdown().await;
}

async fn calls_return_text_errors_and_images() {
    let manager = one("test", test_server());
    connected(&manager, "test").await;

    let out = call(&manager, "mcp__test__echo", json!({"text": "hello"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text_content(), "echo: hello");

    let out = call(&manager, "mcp__test__fail", json!({})).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "something went wrong");

    let mut with_images = ctx();
    with_images.supports_images = true;
    let out = tool(&manager, "mcp__test__image")
        .run(json!({}), &with_images)
        .await;
    assert!(!out.is_error);
    match out.content.as_slice() {
        [ResultContent::Text { text }, ResultContent::Image { image }] => {
            assert_eq!(text, "a tiny image");
            assert_eq!(image.media_type, "image/png");
            assert_eq!(image.data, mcp_server::PNG);
        }
        other => panic!("unexpected content {other:?}"),
    }
    manager.shutdown().await;
}

async fn progress_reaches_the_tool_context() {
    let manager = one("test", test_server());
    connected(&manager, "test").await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut context = ctx();
    context.progress = Some(tx);
    let out = tool(&manager, "mcp__test__progress")
        .run(json!({"steps": 3}), &context)
        .await;
    assert_eq!(out.text_content(), "progress done");
    // Notifications travel separately from the answer; give the last a moment.
    let mut lines = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(line) = rx.recv().await {
            if let cairn::tools::Progress::Status(line) = line {
                lines.push(line);
            }
            if lines.len() == 3 {
                break;
            }
        }
    })
    .await;
    assert_eq!(lines, ["1/3 step 1", "2/3 step 2", "3/3 step 3"]);
    manager.shutdown().await;
}

async fn list_changed_refreshes_the_tools() {
    let manager = one("test", test_server());
    connected(&manager, "test").await;
    let mut changes = manager.changes();
    changes.borrow_and_update();
    assert!(
        manager
            .tools()
            .iter()
            .all(|t| t.name() != "mcp__test__extra")
    );

    let out = call(&manager, "mcp__test__add_tool", json!({})).await;
    assert_eq!(out.text_content(), "added");
    let appeared = tokio::time::timeout(WAIT, async {
        loop {
            changes.changed().await.expect("manager alive");
            if manager
                .tools()
                .iter()
                .any(|t| t.name() == "mcp__test__extra")
            {
                return;
            }
        }
    })
    .await;
    assert!(appeared.is_ok(), "the new tool never appeared");
    assert_eq!(
        state(&manager, "test"),
        ServerState::Connected { tools: 11 }
    );
    let out = call(&manager, "mcp__test__extra", json!({})).await;
    assert_eq!(out.text_content(), "extra tool here");
    manager.shutdown().await;
}

async fn a_crash_is_reported_and_restart_recovers() {
    let manager = one("test", test_server());
    connected(&manager, "test").await;
    let echo = tool(&manager, "mcp__test__echo");

    let out = call(&manager, "mcp__test__crash", json!({})).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(
        text.contains("MCP server `test` is not connected"),
        "{text}"
    );
    assert!(text.contains("crashing on purpose"), "{text}");
    assert!(text.contains("/mcp"), "{text}");

    wait_for(&manager, "test", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    let ServerState::Failed { reason } = state(&manager, "test") else {
        unreachable!()
    };
    assert!(reason.contains("exit status: 3"), "{reason}");
    assert!(reason.contains("fatal: crashing on purpose"), "{reason}");
    assert!(manager.tools().is_empty());

    // A tool object the agent still holds answers clearly.
    let out = echo.run(json!({"text": "x"}), &ctx()).await;
    assert!(out.is_error);
    assert!(
        out.text_content()
            .starts_with("MCP server `test` is not connected: "),
        "{}",
        out.text_content()
    );

    manager.restart("test").expect("restart");
    assert_eq!(state(&manager, "test"), ServerState::Starting);
    connected(&manager, "test").await;
    let out = echo.run(json!({"text": "again"}), &ctx()).await;
    assert_eq!(out.text_content(), "echo: again");
    assert!(
        manager
            .restart("nope")
            .unwrap_err()
            .contains("no MCP server named `nope`")
    );
    manager.shutdown().await;
}

async fn a_slow_call_times_out_with_a_clear_error() {
    let marker = temp_file("timeout");
    let mut config = test_server();
    config.timeout_secs = Some(2);
    config
        .env
        .insert(mcp_server::MARKER_ENV.into(), marker.display().to_string());
    let manager = one("test", config);
    connected(&manager, "test").await;
    let out = call(&manager, "mcp__test__slow", json!({"secs": 30})).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.contains("no answer within 2 s"), "{text}");
    assert!(text.contains("timeout_secs"), "{text}");
    assert!(
        wait_for_file(&marker, "cancelled").await,
        "the server was not told the call was cancelled"
    );
    // The session survives a timed-out call.
    let out = call(&manager, "mcp__test__echo", json!({"text": "still here"})).await;
    assert_eq!(out.text_content(), "echo: still here");
    let _ = std::fs::remove_file(&marker);
    manager.shutdown().await;
}

async fn cancel_stops_waiting_and_tells_the_server() {
    let marker = temp_file("cancel");
    let mut config = test_server();
    config
        .env
        .insert(mcp_server::MARKER_ENV.into(), marker.display().to_string());
    let manager = one("test", config);
    connected(&manager, "test").await;
    let context = ctx();
    let cancel = context.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let slow = tool(&manager, "mcp__test__slow");
    let out = tokio::time::timeout(
        Duration::from_secs(10),
        slow.run(json!({"secs": 60}), &context),
    )
    .await
    .expect("cancel must stop the wait");
    assert!(out.is_error);
    assert_eq!(out.text_content(), "cancelled by the user");
    assert!(
        wait_for_file(&marker, "cancelled").await,
        "the server was not told the call was cancelled"
    );
    let _ = std::fs::remove_file(&marker);
    manager.shutdown().await;
}

async fn a_server_that_cannot_start_fails_with_the_reason() {
    let config = McpServerConfig {
        command: Some("/nonexistent/cairn-mcp-server".into()),
        ..Default::default()
    };
    let manager = one("ghost", config);
    wait_for(&manager, "ghost", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    let ServerState::Failed { reason } = state(&manager, "ghost") else {
        unreachable!()
    };
    assert!(
        reason.starts_with("could not start `/nonexistent/cairn-mcp-server`:"),
        "{reason}"
    );
    assert!(manager.tools().is_empty());
    let table = format_status(&manager.statuses());
    assert!(table.contains("failed"), "{table}");
    assert!(table.contains("reason: could not start"), "{table}");

    // Unset variables are named rather than passed on empty.
    let config = McpServerConfig {
        url: Some("http://127.0.0.1:9/mcp".into()),
        headers: BTreeMap::from([(
            "Authorization".to_string(),
            "Bearer ${CAIRN_TEST_SURELY_UNSET_VAR}".to_string(),
        )]),
        ..Default::default()
    };
    let manager = one("web", config);
    wait_for(&manager, "web", |s| matches!(s, ServerState::Failed { .. })).await;
    assert_eq!(
        state(&manager, "web"),
        ServerState::Failed {
            reason: "environment variable `CAIRN_TEST_SURELY_UNSET_VAR` is not set".into()
        }
    );
    assert_eq!(manager.statuses()[0].transport, TransportKind::Http);
}

async fn a_server_that_exits_at_startup_shows_its_stderr() {
    let config = McpServerConfig {
        command: Some("sh".into()),
        // A hint as Python servers print it: the reason first, then a long
        // traceback-like tail; all of it must reach the person.
        args: vec![
            "-c".into(),
            "echo 'missing API key: set FETCH_TOKEN, see https://example.invalid/setup' >&2; \
             for i in $(seq 1 24); do echo \"  frame $i\" >&2; done; exit 2"
                .into(),
        ],
        ..Default::default()
    };
    let manager = one("broken", config);
    wait_for(&manager, "broken", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    let ServerState::Failed { reason } = state(&manager, "broken") else {
        unreachable!()
    };
    assert!(reason.contains("exit status: 2"), "{reason}");
    assert!(
        reason.contains("missing API key: set FETCH_TOKEN, see https://example.invalid/setup"),
        "{reason}"
    );
    assert!(reason.contains("frame 24"), "{reason}");
    // `cairn mcp list` / `get` indent every line of it under the server.
    let table = cairn::mcp::format_status(&manager.statuses());
    assert!(table.contains("\n        frame 24"), "{table}");
}

async fn disabled_servers_stay_down() {
    let mut config = test_server();
    config.disabled = true;
    config.trusted = true;
    let manager = McpManager::start(BTreeMap::from([
        ("off".to_string(), config),
        (
            "my server".to_string(),
            McpServerConfig {
                trusted: true,
                ..test_server()
            },
        ),
    ]));
    assert_eq!(state(&manager, "off"), ServerState::Disabled);
    assert!(manager.restart("off").unwrap_err().contains("disabled"));
    connected(&manager, "my server").await;
    let echo = tool(&manager, "mcp__my_server__echo");
    let (server, _) = split_tool_name(echo.name()).expect("mcp name");
    assert!(manager.is_trusted(server));
    assert!(manager.is_trusted("my server"));
    assert!(!manager.is_trusted("unknown"));
    assert_eq!(state(&manager, "off"), ServerState::Disabled);
    manager.shutdown().await;
}

async fn shutdown_stops_the_server_process() {
    let pidfile = temp_file("pid");
    let mut config = test_server();
    config.env.insert(
        mcp_server::PIDFILE_ENV.into(),
        pidfile.display().to_string(),
    );
    let manager = one("test", config);
    connected(&manager, "test").await;
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    let alive = |pid: i32| nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    assert!(alive(pid));
    let mut registry = Registry::new();
    manager.install_tools(&mut registry);
    assert!(registry.get("mcp__test__echo").is_some());
    manager.shutdown().await;
    assert!(!alive(pid), "the server process outlived shutdown");
    assert!(manager.tools().is_empty());
    manager.install_tools(&mut registry);
    assert_eq!(registry.names().count(), 0);
    let out = call_gone(&manager).await;
    assert!(out.is_none());
    let _ = std::fs::remove_file(&pidfile);
}

async fn call_gone(manager: &McpManager) -> Option<ToolOutput> {
    let tool = manager.tools().into_iter().next()?;
    Some(tool.run(json!({}), &ctx()).await)
}

async fn streamable_http_with_headers() {
    let stop = tokio_util::sync::CancellationToken::new();
    let url = mcp_server::serve_http(stop.clone())
        .await
        .expect("http server");
    // Any variable cargo sets for tests will do to see `${VAR}` expanded.
    let expected = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let config = McpServerConfig {
        url: Some(url.clone()),
        headers: BTreeMap::from([
            ("X-Plain".to_string(), "fixed".to_string()),
            (
                "X-From-Env".to_string(),
                "pkg=${CARGO_PKG_NAME}".to_string(),
            ),
        ]),
        timeout_secs: Some(20),
        ..Default::default()
    };
    let manager = one("web", config);
    connected(&manager, "web").await;
    let status = manager.statuses().remove(0);
    assert_eq!(status.transport, TransportKind::Http);
    assert_eq!(status.target, url);

    let out = call(&manager, "mcp__web__echo", json!({"text": "over http"})).await;
    assert_eq!(out.text_content(), "echo: over http");
    let out = call(&manager, "mcp__web__header", json!({"name": "x-plain"})).await;
    assert_eq!(out.text_content(), "fixed");
    let out = call(&manager, "mcp__web__header", json!({"name": "x-from-env"})).await;
    assert_eq!(out.text_content(), format!("pkg={expected}"));

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut context = ctx();
    context.progress = Some(tx);
    let out = tool(&manager, "mcp__web__progress")
        .run(json!({"steps": 2}), &context)
        .await;
    assert_eq!(out.text_content(), "progress done");
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
    assert_eq!(lines, ["1/2 step 1", "2/2 step 2"]);

    let out = call(&manager, "mcp__web__fail", json!({})).await;
    assert!(out.is_error);

    let mut changes = manager.changes();
    changes.borrow_and_update();
    call(&manager, "mcp__web__add_tool", json!({})).await;
    let appeared = tokio::time::timeout(WAIT, async {
        while !manager
            .tools()
            .iter()
            .any(|t| t.name() == "mcp__web__extra")
        {
            changes.changed().await.expect("manager alive");
        }
    })
    .await;
    assert!(appeared.is_ok(), "list_changed over HTTP was not followed");
    manager.shutdown().await;
    stop.cancel();
}
