//! Bounds (issue 24), through the real binary: a setting out of range is
//! refused with its place in the file, an MCP server that floods log
//! notifications leaves a small log, and a tool's wide output reaches the
//! model bounded.

use std::time::Duration;

use crate::mock_model::{self, Format, MockModel, Reply};
use crate::test_home::TestHome;

/// A home whose config runs `script` as the Python MCP server `name`
/// (`extra`: more lines of its entry); `None` (and why) without python3.
fn with_python_server(name: &str, script: &str, extra: &str) -> Option<TestHome> {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if python.is_err() {
        eprintln!("skipped: python3 is not installed");
        return None;
    }
    let env = TestHome::new();
    let path = env.home.path().join(format!("{name}.py"));
    std::fs::write(&path, script).unwrap();
    write_config(
        &env,
        &format!(
            "[mcp.{name}]\ncommand = \"python3\"\nargs = [\"{}\"]\n{extra}",
            path.display()
        ),
    );
    Some(env)
}

fn write_config(env: &TestHome, text: &str) {
    let dir = env.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[tokio::test]
async fn a_setting_out_of_range_is_refused_with_its_place() {
    let env = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("never")]).await;
    write_config(
        &env,
        "[retry]\nmax_attempts = 3\n\n[context]\ncompact_threshold = 5.0\n",
    );
    let out = env
        .command(&mock.url())
        .args(["run", "hello"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted: {stderr}");
    assert!(stderr.contains("config.toml"), "{stderr}");
    assert!(stderr.contains("line 5"), "{stderr}");
    assert!(
        stderr.contains("5 is out of range: use a value from 0.5 to 0.95"),
        "{stderr}"
    );
    assert!(mock.requests().is_empty(), "a request went out");
}

/// A stdio MCP server that answers the handshake and, once initialized,
/// sends twenty thousand different log messages before listing its tools.
const FLOOD_SERVER: &str = r#"
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    method = m.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "protocolVersion": m["params"]["protocolVersion"],
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "notifications/initialized":
        for i in range(20000):
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "flood message %d" % i}}) + "\n")
        sys.stdout.flush()
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": []}})
    elif "id" in m:
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
"#;

#[tokio::test]
async fn a_flood_of_mcp_log_messages_leaves_a_small_log() {
    let Some(env) = with_python_server("flood", FLOOD_SERVER, "") else {
        return;
    };
    // The answer, then the session's title.
    let replies = vec![Reply::text("done"), Reply::text("Flood")];
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        env.command(&mock.url()).args(["run", "hello"]).output(),
    )
    .await
    .expect("cairn run finished")
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(env.home.path().join("state/cairn/cairn.log")).unwrap();
    // Twenty thousand lines would be over a megabyte.
    let head: String = log.lines().take(8).collect::<Vec<_>>().join("\n");
    assert!(log.len() < 20_000, "the log is {} bytes: {head}", log.len());
    assert!(log.contains("flood message 0"), "{log}");
    assert!(
        log.contains("more log messages than cairn writes"),
        "no count of the dropped messages: {log}"
    );
}

/// A `view` of 2,000 lines of 3,000 characters would be four million
/// characters; what the model gets is bounded and says what was cut.
#[tokio::test]
async fn a_wide_tool_result_reaches_the_model_bounded() {
    let env = TestHome::new();
    let line = format!("{}\n", "w".repeat(3_000));
    env.write("wide.txt", &format!("FIRST\n{}LAST\n", line.repeat(1_500)));
    let replies = vec![
        Reply::tool("v1", "view", serde_json::json!({"file_path": "wide.txt"})),
        Reply::text("seen"),
        Reply::text("Wide"),
    ];
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let out = env
        .command(&mock.url())
        .args(["run", "look at it"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = mock.requests();
    let results = mock_model::tool_result_texts(&requests[1]);
    assert_eq!(results.len(), 1);
    let text = &results[0];
    assert!(text.chars().count() < 121_000, "{} characters", text.len());
    assert!(text.contains("FIRST") && text.contains("LAST"));
    assert!(text.contains("One tool result carries at most"));
}

/// A stdio MCP server whose `big` tool answers with 17 MiB (its `id` after
/// the result, as some SDKs write it) and whose `small` tool answers
/// plainly.
const BIG_SERVER: &str = r#"
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    method = m.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "protocolVersion": m["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "big", "version": "1"}}})
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [
            {"name": "big", "description": "A huge answer.", "inputSchema": schema},
            {"name": "small", "description": "A small answer.", "inputSchema": schema}]}})
    elif method == "tools/call":
        text = "b" * (17 * 1024 * 1024) if m["params"]["name"] == "big" else "small answer"
        send({"result": {"content": [{"type": "text", "text": text}]},
              "jsonrpc": "2.0", "id": m["id"]})
    elif "id" in m:
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
"#;

#[tokio::test]
async fn an_mcp_answer_over_the_transport_limit_fails_its_call_at_once() {
    let extra = "trusted = true\ntool_timeout_secs = 120\n";
    let Some(env) = with_python_server("big", BIG_SERVER, extra) else {
        return;
    };
    let replies = vec![
        Reply::tool("b1", "mcp__big__big", serde_json::json!({})),
        Reply::tool("s1", "mcp__big__small", serde_json::json!({})),
        Reply::text("done"),
        Reply::text("Big"),
    ];
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let started = std::time::Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(100),
        env.command(&mock.url()).args(["run", "get it"]).output(),
    )
    .await
    .expect("cairn run finished before the tool timeout")
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the call waited {:?}",
        started.elapsed()
    );
    let requests = mock.requests();
    let big = mock_model::tool_result_texts(&requests[1]);
    assert_eq!(big.len(), 1);
    assert!(
        big[0].contains("more than the 16 MiB") && big[0].contains("ask for less"),
        "{}",
        big[0]
    );
    // The connection stays: the next call is answered.
    let small = mock_model::tool_result_texts(&requests[2]);
    assert_eq!(
        small.last().map(String::as_str),
        Some("small answer"),
        "{stderr}"
    );
}
