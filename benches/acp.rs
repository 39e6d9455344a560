//! cairn for editors and scripts, against the scripted model: the time
//! from an editor's `session/prompt` to the first `session/update` cairn
//! sends about it (the model's first words; `cairn acp` over stdio, spoken
//! as raw JSON-RPC lines the way an editor writes them), and the bytes
//! `cairn run --output-format stream-json` prints for a 100 KB answer.
//! Prints medians.
//!
//!     cargo bench --bench acp

#[path = "../tests/support/mock_model.rs"]
mod mock_model;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};

const PROMPTS: usize = 25;
const STREAMS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A home and project of their own, and the variables cairn runs with.
struct Place {
    _dir: tempfile::TempDir,
    project: std::path::PathBuf,
    vars: Vec<(String, String)>,
}

fn place(url: &str) -> Place {
    let dir = tempfile::tempdir().expect("a folder");
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).expect("a project");
    std::fs::create_dir_all(&home).expect("a home");
    let vars = vec![
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join("config").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join("data").display().to_string(),
        ),
        (
            "XDG_STATE_HOME".into(),
            home.join("state").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join("cache").display().to_string(),
        ),
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ("ANTHROPIC_API_KEY".into(), "bench".into()),
        ("ANTHROPIC_BASE_URL".into(), url.into()),
    ];
    Place {
        _dir: dir,
        project,
        vars,
    }
}

fn cairn(p: &Place) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.current_dir(&p.project)
        .env_clear()
        .envs(p.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    c
}

/// Prompt to first update, `PROMPTS` times in one session.
fn prompt_to_first_update(rt: &tokio::runtime::Runtime) -> Vec<f64> {
    let mock = rt.block_on(MockModel::start(Format::Anthropic, vec![]));
    for _ in 0..PROMPTS {
        mock.push(Reply::text("A short answer, in a few words."));
    }
    // The session's title is asked for after the first turn.
    mock.push(Reply::text("Bench"));
    let p = place(&mock.url());
    let mut child = cairn(&p)
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cairn acp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").expect("cairn reads");
        stdin.flush().expect("flushed");
    };
    let answer_to = |id: u64, lines: &mut std::io::Lines<_>| -> Value {
        loop {
            let line: String = lines.next().expect("cairn answers").expect("a line");
            let v: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    answer_to(1, &mut lines);
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": p.project, "mcpServers": []}}));
    let session = answer_to(2, &mut lines)["result"]["sessionId"].clone();
    let mut times = Vec::new();
    for i in 0..PROMPTS as u64 {
        let id = 10 + i;
        let started = Instant::now();
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}}),
        );
        let mut first = None;
        loop {
            let line = lines.next().expect("cairn goes on").expect("a line");
            let v: Value = serde_json::from_str(&line).expect("JSON-RPC");
            let update = v["params"]["update"]["sessionUpdate"].as_str();
            if first.is_none() && matches!(update, Some(u) if u != "available_commands_update") {
                first = Some(started.elapsed());
            }
            if v["id"] == id && v.get("method").is_none() {
                break;
            }
        }
        times.push(first.expect("an update before the answer").as_secs_f64() * 1000.0);
    }
    drop(stdin);
    let _ = child.wait();
    times
}

/// Bytes of stream-json for a 100 KB answer, streamed in 52-character
/// pieces as a model sends them.
fn stream_json_bytes(rt: &tokio::runtime::Runtime, answer: &str) -> Vec<f64> {
    let mock = rt.block_on(MockModel::start(Format::Anthropic, vec![]));
    let mut out = Vec::new();
    for _ in 0..STREAMS {
        mock.push(
            Reply::text(answer)
                .chunk_chars(52)
                .chunk_delay(Duration::from_millis(1)),
        );
        mock.push(Reply::text("Bench"));
        let p = place(&mock.url());
        let run = cairn(&p)
            .args(["run", "--output-format", "stream-json", "write it"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .expect("cairn run");
        assert!(run.status.success());
        out.push(run.stdout.len() as f64 / 1024.0);
    }
    out
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let times = prompt_to_first_update(&rt);
    println!(
        "acp: session/prompt to first session/update: median {:.1} ms over {PROMPTS} prompts",
        median(times)
    );
    let line = "A line of a long answer, with `code`, **bold** words and numbers 12345.\n";
    let answer = line.repeat(100 * 1024 / line.len());
    let bytes = stream_json_bytes(&rt, &answer);
    println!(
        "stream-json: {:.0} KB for a {} KB answer (median of {STREAMS})",
        median(bytes),
        answer.len() / 1024
    );
}
