//! The real `cairn` binary against the scripted server: stop reasons a
//! person must hear about, and Anthropic's prompt cache over a tool loop.

use crate::{mock_model, test_home};
use std::process::Output;

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> (Output, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

fn tool_results(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

#[tokio::test]
async fn an_answer_cut_by_the_output_limit_and_a_refusal_are_said() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("The first half of").stop_reason("max_tokens"),
            Reply::text("Untitled"),
        ],
    )
    .await;
    let (out, stdout, stderr) = run(&home, &mock, &["run", "explain"]).await;
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("The first half of"));
    assert!(stderr.contains("cut off at the output limit"), "{stderr}");

    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("I can't help with that.").stop_reason("refusal")],
    )
    .await;
    let (_, _, stderr) = run(&home, &mock, &["run", "something bad"]).await;
    assert!(stderr.contains("refused"), "{stderr}");
}

#[tokio::test]
async fn a_tool_call_cut_by_the_output_limit_is_reported_to_the_model_as_truncated() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::OpenAi,
        vec![
            Reply::default()
                .raw_tool_call(
                    "t1",
                    "write",
                    r#"{"file_path": "big.txt", "content": "line one\nline tw"#,
                )
                .stop_reason("length"),
            Reply::text("I will write it in parts."),
            Reply::text("Untitled"),
        ],
    )
    .await;
    let mut vars = home.vars(&mock.url());
    vars.retain(|(k, _)| !k.starts_with("ANTHROPIC"));
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(vars)
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_BASE_URL", mock.url())
        .args(["run", "--mode", "auto", "write big.txt"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("output limit"), "{stderr}");
    let reqs = mock.requests();
    let result = &reqs[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the call got a result")["content"];
    let result = result.as_str().unwrap_or_default();
    assert!(result.contains("truncated"), "{result}");
    assert!(!result.contains("not valid JSON"), "{result}");
    assert!(!home.path("big.txt").exists());
}

/// Twenty tool calls in one turn against a server that keeps Anthropic's
/// prompt cache: most input is billed at the cached rate, and the cost
/// prices reads and writes at their own rates.
#[tokio::test]
async fn a_tool_loop_is_mostly_read_from_the_prompt_cache() {
    let home = TestHome::new();
    std::fs::write(home.path("notes.md"), "a line of notes\n".repeat(40)).unwrap();
    let mut script: Vec<Reply> = (0..20)
        .map(|i| {
            Reply::text(&format!("Step {i}.")).tool_call(
                &format!("t{i}"),
                "view",
                json!({"file_path": "notes.md", "offset": i + 1}),
            )
        })
        .collect();
    script.push(Reply::text("Done reading."));
    script.push(Reply::text("Reading notes"));
    let mock = MockModel::start(Format::Anthropic, script).await;
    mock.cache();
    let (out, _, stderr) = run(&home, &mock, &["run", "--json", "read the notes"]).await;
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let usages: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "usage")
        .collect();
    assert_eq!(usages.len(), 21, "{stdout}");
    let sum = |k: &str| usages.iter().map(|u| u[k].as_u64().unwrap()).sum::<u64>();
    let (input, read, write, output) = (
        sum("input_tokens"),
        sum("cache_read_tokens"),
        sum("cache_write_tokens"),
        sum("output_tokens"),
    );
    let share = read as f64 / (input + read + write) as f64;
    println!(
        "20-call tool loop: {read} of {} input tokens billed at the cached rate ({:.1}%), {write} written, {input} uncached",
        input + read + write,
        share * 100.0
    );
    assert!(
        share > 0.8,
        "only {:.1}% read from the cache",
        share * 100.0
    );
    // Every call after the first reads what the one before wrote.
    assert!(
        usages[1..]
            .iter()
            .all(|u| u["cache_read_tokens"].as_u64() > Some(0))
    );
    // At most four breakpoints in any request.
    for r in mock.requests() {
        assert!(r.to_string().matches("cache_control").count() <= 4);
    }
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 write.
    let want =
        (input as f64 * 3.0 + output as f64 * 15.0 + read as f64 * 0.3 + write as f64 * 3.75)
            / 1_000_000.0;
    let cost = usages.last().unwrap()["cost"].as_f64().unwrap();
    assert!((cost - want).abs() < 1e-9, "{cost} vs {want}");
    assert_eq!(tool_results(&mock.requests()[20]).len(), 20);
}

/// Runs `cairn run` with one configured provider of `kind` pointing at the
/// scripted server, and checks the answer and the tool result's round trip.
pub async fn run_with_kind(kind: &str, format: Format, extra: &str) {
    run_configured(kind, format, |mock| {
        (mock.url(), extra.to_string(), Vec::new())
    })
    .await;
}

/// [`run_with_kind`] with the base URL, extra config lines and extra
/// environment variables computed from the started server; gives back the
/// server, to look at what it was sent.
pub(crate) async fn run_configured(
    kind: &str,
    format: Format,
    setup: impl Fn(&MockModel) -> (String, String, Vec<(String, String)>),
) -> MockModel {
    let home = TestHome::new();
    std::fs::write(home.path("notes.md"), "the secret word is heliotrope\n").unwrap();
    let mock = MockModel::start(
        format,
        vec![
            Reply::text("Looking.").tool_call("t1", "view", json!({"file_path": "notes.md"})),
            Reply::text("The word is heliotrope."),
            Reply::text("Secret word"),
        ],
    )
    .await;
    let (base_url, extra, envs) = setup(&mock);
    let config_dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        format!(
            "provider = \"mine\"\n[providers.mine]\nkind = \"{kind}\"\nbase_url = \"{base_url}\"\napi_key_env = \"MINE_KEY\"\nmodel = \"some-model\"\n{extra}",
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
        .env("MINE_KEY", "test-key")
        .envs(envs)
        .args(["run", "what is the secret word?"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{kind}: {stdout}\n{stderr}");
    assert!(
        stdout.contains("The word is heliotrope."),
        "{kind}: {stdout}"
    );
    assert!(stderr.contains("view notes.md"), "{kind}: {stderr}");
    let second = mock.requests()[1].to_string();
    assert!(second.contains("the secret word is heliotrope"), "{kind}");
    mock
}

#[tokio::test]
async fn cairn_run_speaks_openai_responses() {
    run_with_kind("openai-responses", Format::Responses, "").await;
}

#[tokio::test]
async fn cairn_run_speaks_gemini() {
    run_with_kind("gemini", Format::Gemini, "").await;
}

#[tokio::test]
async fn cairn_run_speaks_ollama() {
    run_with_kind("ollama", Format::Ollama, "").await;
}

#[tokio::test]
async fn cairn_run_speaks_vertex_with_a_service_account() {
    let keys = tempfile::tempdir().unwrap();
    let key_path = keys.path().join("sa.json");
    let key_path2 = key_path.clone();
    let _ = run_configured("vertex", Format::Gemini, move |mock| {
        let root = mock.url().trim_end_matches("/v1beta").to_string();
        std::fs::write(
            &key_path,
            json!({"type": "service_account", "project_id": "proj-1", "private_key_id": "k",
                "private_key": include_str!("fixtures/test-service-account-key.pem"),
                "client_email": "sa@p.iam.gserviceaccount.com", "token_uri": format!("{root}/token")})
            .to_string(),
        )
        .unwrap();
        let env = vec![(
            "GOOGLE_APPLICATION_CREDENTIALS".to_string(),
            key_path.display().to_string(),
        )];
        (root, "project = \"proj-1\"\nlocation = \"europe-west4\"\n".into(), env)
    })
    .await;
    assert!(key_path2.exists());
}

#[tokio::test]
async fn cairn_run_speaks_bedrock_with_credentials_from_a_profile() {
    let aws = tempfile::tempdir().unwrap();
    let creds = aws.path().join("credentials");
    std::fs::write(
        &creds,
        "[team]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = s3cret\naws_session_token = tok\n",
    )
    .unwrap();
    let creds_path = creds.display().to_string();
    let _ = run_configured("bedrock", Format::Bedrock, move |mock| {
        let env = vec![
            (
                "AWS_SHARED_CREDENTIALS_FILE".to_string(),
                creds_path.clone(),
            ),
            ("AWS_PROFILE".to_string(), "team".to_string()),
        ];
        (mock.url(), "region = \"ap-northeast-1\"\n".into(), env)
    })
    .await;
}

#[tokio::test]
async fn a_models_entry_in_config_sets_the_window_and_prices() {
    let home = TestHome::new();
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "model = \"my-finetune\"\n[models.\"my-finetune\"]\ncontext_window = 123456\ninput_price = 2.0\noutput_price = 10.0\n",
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("ok").usage(1_000, 100), Reply::text("T")],
    )
    .await;
    let (out, stdout, stderr) = run(&home, &mock, &["run", "--json", "hi"]).await;
    assert!(out.status.success(), "{stderr}");
    let usage: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "usage")
        .expect("a usage event");
    assert_eq!(usage["context_window"], 123456);
    let cost = usage["cost"].as_f64().unwrap();
    assert!(
        (cost - (1_000.0 * 2.0 + 100.0 * 10.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(mock.requests()[0]["model"], "my-finetune");
}
