//! `cairn run` as a pipeline citizen, through the real binary: stream-json
//! lines as things happen, piped standard input in the prompt, `-p`, and
//! `--allow` / `--max-turns` for one run.

use crate::{mock_model, test_home};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn command(home: &TestHome, mock: &MockModel) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .stdin(Stdio::null())
        .kill_on_drop(true);
    c
}

/// Runs with `input` on standard input; the JSON lines of stdout, stderr
/// and the exit code.
async fn run_piped(
    home: &TestHome,
    mock: &MockModel,
    args: &[&str],
    input: &[u8],
) -> (Vec<Value>, String, Option<i32>) {
    let mut child = command(home, mock)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Text output has no JSON lines; JSON output has nothing else.
    let lines = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn user_text(request: &Value) -> String {
    request["messages"][0]["content"].to_string()
}

#[tokio::test]
async fn stream_json_prints_each_event_as_it_happens_in_order() {
    let home = TestHome::new();
    std::fs::write(home.path("a.txt"), "alpha\n").unwrap();
    // Forty paced chunks: the stream takes about two seconds.
    let answer = "streaming words arrive one small piece at a time.";
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Reading.").tool_call("t1", "view", json!({"file_path": "a.txt"})),
            Reply::text(answer)
                .chunk_chars(1)
                .chunk_delay(Duration::from_millis(40)),
            Reply::text("A title"),
        ],
    )
    .await;
    let mut child = command(&home, &mock)
        .args(["run", "--output-format", "stream-json", "read a.txt"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut lines: Vec<(Instant, Value)> = Vec::new();
    while let Some(line) = reader.next_line().await.unwrap() {
        lines.push((Instant::now(), serde_json::from_str(&line).unwrap()));
    }
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    let kinds: Vec<&str> = lines
        .iter()
        .map(|(_, v)| v["type"].as_str().unwrap())
        .collect();
    let at = |k: &str| kinds.iter().position(|x| *x == k).unwrap_or(usize::MAX);
    assert_eq!(kinds[0], "init", "{kinds:?}");
    assert_eq!(lines[0].1["schema"], 1);
    assert!(at("tool_call") < at("tool_status"), "{kinds:?}");
    assert!(at("tool_status") < at("tool_result"), "{kinds:?}");
    assert!(at("tool_result") < at("usage") || at("usage") < at("tool_result"));
    assert_eq!(*kinds.last().unwrap(), "result", "{kinds:?}");
    let result = &lines.last().unwrap().1;
    assert_eq!(result["exit_reason"], "completed");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["model_calls"], 2);
    assert!(result["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(result["text"], format!("Reading.\n\n{answer}"));
    // The second answer's deltas, sent one character each every 40 ms,
    // arrived spread over its stream, not in one burst at the end — and
    // joined a few characters a line (within 50 ms), not a line each.
    let after_tool = at("tool_result");
    let deltas: Vec<&(Instant, Value)> = (lines.iter().enumerate())
        .filter(|(i, (_, v))| *i > after_tool && v["type"] == "text_delta")
        .map(|(_, l)| l)
        .collect();
    let joined: String = deltas
        .iter()
        .map(|(_, v)| v["text"].as_str().unwrap())
        .collect();
    assert_eq!(joined, answer);
    assert!(
        deltas.len() >= 8 && deltas.len() < answer.len(),
        "{} lines for {} characters",
        deltas.len(),
        answer.len()
    );
    let first = deltas[0].0;
    let last = deltas.last().unwrap().0;
    assert!(
        last - first > Duration::from_millis(800),
        "the deltas came in a burst: {:?}",
        last - first
    );
}

#[tokio::test]
async fn piped_input_reaches_the_model_and_json_is_one_result() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("It says heliotrope."), Reply::text("t")],
    )
    .await;
    let (lines, stderr, code) = run_piped(
        &home,
        &mock,
        &["run", "--output-format", "json", "what does this say?"],
        b"the secret word is heliotrope\n",
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "result");
    assert_eq!(lines[0]["text"], "It says heliotrope.");
    let sent = user_text(&mock.requests()[0]);
    assert!(
        sent.contains("what does this say?") && sent.contains("heliotrope"),
        "{sent}"
    );
}

#[tokio::test]
async fn print_at_the_top_level_takes_the_prompt_from_a_file_and_caps_it() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Done."), Reply::text("t")],
    )
    .await;
    // `cairn -p < prompt.txt`: standard input is the prompt.
    let (lines, stderr, code) = run_piped(
        &home,
        &mock,
        &["-p", "--output-format", "stream-json"],
        b"explain the build\n",
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(lines.last().unwrap()["type"], "result");
    assert!(user_text(&mock.requests()[0]).contains("explain the build"));

    // A huge input is cut, and the cut is said on stderr and to the model.
    mock.push(Reply::text("Counted."));
    mock.push(Reply::text("t"));
    let big = vec![b'z'; 600 * 1024];
    let (lines, stderr, code) = run_piped(&home, &mock, &["-p", "count the z"], &big).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(lines.is_empty(), "text output is not JSON");
    assert!(stderr.contains("614400 bytes"), "{stderr}");
    let sent = mock
        .requests()
        .iter()
        .map(user_text)
        .find(|t| t.contains("count the z"))
        .unwrap();
    assert!(sent.contains("cut here"), "the model is told");
    assert!(sent.len() < 300 * 1024, "{}", sent.len());
}

#[tokio::test]
async fn allow_runs_a_write_for_this_run_and_without_it_the_refusal_is_reported() {
    let home = TestHome::new();
    let touch = || {
        Reply::tool(
            "c1",
            "write",
            json!({"file_path": "made.txt", "content": "made\n"}),
        )
    };
    let mock = MockModel::start(
        Format::Anthropic,
        vec![touch(), Reply::text("ok"), Reply::text("t")],
    )
    .await;
    let args = ["run", "--output-format", "stream-json", "make the file"];
    let (lines, stderr, code) = run_piped(&home, &mock, &args, b"").await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!home.path("made.txt").exists());
    let denial = lines.iter().find(|l| l["type"] == "permission_denied");
    assert_eq!(denial.map(|d| d["tool"].clone()), Some(json!("write")));
    let result = lines.last().unwrap();
    assert_eq!(
        result["permission_denials"].as_array().map(Vec::len),
        Some(1)
    );

    mock.push(touch());
    mock.push(Reply::text("ok"));
    mock.push(Reply::text("t"));
    let mut with_rule = args.to_vec();
    with_rule.extend(["--allow", "write(made.txt)"]);
    let (lines, stderr, code) = run_piped(&home, &mock, &with_rule, b"").await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(home.path("made.txt").exists(), "{lines:?}");
    assert!(lines.iter().all(|l| l["type"] != "permission_denied"));

    // A rule that does not parse is a usage error before anything starts.
    let before = mock.requests().len();
    let (_, stderr, code) = run_piped(&home, &mock, &["run", "--allow", "bash(", "x"], b"").await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--allow"), "{stderr}");
    assert_eq!(mock.requests().len(), before);
}

#[tokio::test]
async fn max_turns_stops_the_run_with_exit_one_and_says_why() {
    let home = TestHome::new();
    std::fs::write(home.path("a.txt"), "alpha\n").unwrap();
    let view = |id: &str| Reply::tool(id, "view", json!({"file_path": "a.txt"}));
    let mock = MockModel::start(
        Format::Anthropic,
        vec![view("v1"), view("v2"), view("v3"), Reply::text("t")],
    )
    .await;
    let (lines, stderr, code) = run_piped(
        &home,
        &mock,
        &[
            "run",
            "--max-turns",
            "2",
            "--output-format",
            "stream-json",
            "loop",
        ],
        b"",
    )
    .await;
    assert_eq!(code, Some(1), "{stderr}");
    let result = lines.last().unwrap();
    assert_eq!(result["exit_reason"], "turn_limit", "{result}");
    assert_eq!(result["exit_code"], 1);
}
