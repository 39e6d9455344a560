//! A local server as `cairn run` meets it (issue 33), against the scripted
//! model speaking OpenAI Chat Completions: the window learned from the
//! server's `/v1/models` metadata, llama.cpp's own "too long" answer
//! compacted and retried, a request over the window never sent.

use crate::{mock_model, test_home};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

/// `cairn run --json ARGS` against `mock` as a provider named `local`;
/// returns success, the JSON lines and stderr.
async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> (bool, Vec<Value>, String) {
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "provider = \"local\"\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"tiny\"\n",
            mock.url()
        ),
    )
    .unwrap();
    let mut vars = home.vars(&mock.url());
    vars.retain(|(k, _)| !k.starts_with("ANTHROPIC"));
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(vars)
        .args(["run", "--json"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        out.status.success(),
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn llama_list(n_ctx: u64) -> Value {
    json!({"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "llamacpp",
        "meta": {"n_ctx_train": 32768, "n_ctx": n_ctx, "n_params": 268098176}}]})
}

fn notices(lines: &[Value]) -> String {
    lines
        .iter()
        .filter(|l| l["type"] == "notice")
        .map(|l| l["text"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_window_comes_from_the_server_and_small_windows_get_compact_tools() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("hello"), Reply::text("T")]).await;
    mock.models_list(llama_list(8_192));
    let (ok, lines, stderr) = run(&home, &mock, &["hi"]).await;
    assert!(ok, "{lines:?}\n{stderr}");
    let usage = lines.iter().find(|l| l["type"] == "usage").expect("usage");
    assert_eq!(usage["context_window"], 8_192, "{lines:?}");
    let said = notices(&lines);
    assert!(
        said.contains("8192") && said.contains("meta.n_ctx"),
        "{said}"
    );
    assert!(said.contains("cairn's own part"), "{said}");
    let req = &mock.requests()[0];
    assert_eq!(req["tool_choice"], "auto");
    assert!(
        req["max_tokens"].as_u64().unwrap() <= 2_048,
        "{}",
        req["max_tokens"]
    );
    // Compact tool texts: the whole request (system prompt, tools and the
    // prompt) stays under a quarter of the 8k window.
    let size = req.to_string().len() as u64 / 4;
    assert!(size < 2_048, "the request is about {size} tokens");
}

#[tokio::test]
async fn llama_cpp_too_long_answer_compacts_and_retries_once() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("one"), Reply::text("T")]).await;
    mock.models_list(llama_list(32_768));
    let (ok, _, stderr) = run(&home, &mock, &["first question"]).await;
    assert!(ok, "{stderr}");
    let before = mock.requests().len();
    let body = r#"{"error":{"code":400,"message":"request (10976 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":10976,"n_ctx":8192}}"#;
    mock.push(Reply::error_body(400, body));
    mock.push(Reply::text(
        "The person asked a first question; it was answered.",
    ));
    mock.push(Reply::text("two"));
    let (ok, lines, stderr) = run(&home, &mock, &["-c", "second question"]).await;
    assert!(ok, "{lines:?}\n{stderr}");
    assert!(lines.iter().any(|l| l["type"] == "compacted"), "{lines:?}");
    let reqs = &mock.requests()[before..];
    assert_eq!(reqs.len(), 3, "refused, summary, retry");
    let retry = reqs[2]["messages"].to_string();
    assert!(
        retry.contains("summary of the earlier conversation"),
        "{retry}"
    );
    assert!(!retry.contains("first question\""), "{retry}");
}

#[tokio::test]
async fn a_request_over_the_window_is_never_sent() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("never")]).await;
    mock.models_list(llama_list(600));
    let (ok, lines, stderr) = run(&home, &mock, &["hi"]).await;
    assert!(!ok, "{lines:?}");
    let all = format!("{lines:?}{stderr}");
    assert!(all.contains("was not sent") && all.contains("600"), "{all}");
    assert!(mock.requests().is_empty(), "a request went out");
}
