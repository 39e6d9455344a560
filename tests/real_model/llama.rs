//! A real model: llama.cpp's llama-server serving Gemma 3 270M with an 8k
//! window and a chat template that renders tools (prepared by
//! `.ci/llama-setup.sh`). cairn is driven through its front doors — `cairn
//! run` turn after resumed turn, and the interface in a pty — through a
//! recording proxy, and the assertions are on cairn's behaviour only: no
//! request the server refuses as too long, compaction when the window
//! fills, every turn answered, the tool result sent back, Esc closing the
//! stream. Never on what the tiny model says.

use crate::{pty, test_home};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use test_home::TestHome;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const WINDOW: u64 = 8_192;
const MODEL: &str = "gemma-3-270m";

/// Where llama-server, the model and the template are: the environment,
/// or what `.ci/llama-setup.sh` wrote into its cache.
fn prepared() -> Result<[PathBuf; 3], String> {
    let cache = std::env::var("CAIRN_CI_CACHE").unwrap_or_else(|_| "/var/cache/cairn-ci".into());
    let file = std::fs::read_to_string(Path::new(&cache).join("env")).unwrap_or_default();
    let get = |name: &str| {
        std::env::var(name).ok().or_else(|| {
            file.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")).map(str::to_string))
        })
    };
    let found = [
        "CAIRN_LLAMA_SERVER",
        "CAIRN_LLAMA_MODEL",
        "CAIRN_LLAMA_TEMPLATE",
    ]
    .map(|n| get(n).map(PathBuf::from).filter(|p| p.exists()));
    match found {
        [Some(s), Some(m), Some(t)] => Ok([s, m, t]),
        _ => Err(format!(
            "llama-server and the model are not prepared (run .ci/llama-setup.sh; looked in {cache}/env)"
        )),
    }
}

/// llama-server on a free port, stopped when dropped.
struct Llama {
    child: std::process::Child,
    port: u16,
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_llama([server, model, template]: &[PathBuf; 3]) -> Llama {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(server)
        .args(["-m", &model.display().to_string()])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--ctx-size", &WINDOW.to_string(), "--parallel", "1"])
        .args([
            "--jinja",
            "--chat-template-file",
            &template.display().to_string(),
        ])
        .args(["--alias", MODEL, "--threads", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start llama-server");
    let llama = Llama { child, port };
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let healthy = reqwest::get(format!("http://127.0.0.1:{port}/health"))
            .await
            .is_ok_and(|r| r.status().is_success());
        if healthy {
            return llama;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not become healthy"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// One request that passed the proxy and how it ended.
#[derive(Debug, Clone)]
struct Exchange {
    target: String,
    body: Value,
    status: u16,
    /// cairn closed the connection before the server had finished.
    dropped_by_client: bool,
}

#[derive(Default)]
struct Record {
    done: Vec<Exchange>,
    /// Answers whose first bytes have reached cairn.
    streaming: usize,
}

type Log = Arc<Mutex<Record>>;

/// A proxy in front of llama-server that records every request, one per
/// connection, and passes the answer through as it streams.
async fn start_proxy(upstream: u16) -> (u16, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log: Log = Arc::default();
    let log2 = log.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(relay(sock, upstream, log2.clone()));
        }
    });
    (port, log)
}

async fn relay(mut client: TcpStream, upstream: u16, log: Log) {
    let Some((head, body)) = read_request(&mut client).await else {
        return;
    };
    let mut lines: Vec<&str> = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:") && !l.is_empty())
        .collect();
    lines.push("Connection: close");
    let mut server = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
    let mut out = (lines.join("\r\n") + "\r\n\r\n").into_bytes();
    out.extend_from_slice(&body);
    server.write_all(&out).await.unwrap();
    let mut first = Vec::new();
    let mut buf = [0u8; 8192];
    let mut probe = [0u8; 64];
    let mut dropped = false;
    loop {
        tokio::select! {
            n = server.read(&mut buf) => {
                let n = n.unwrap_or(0);
                if n == 0 { break; }
                if first.is_empty() { log.lock().unwrap().streaming += 1; }
                if first.len() < 64 { first.extend_from_slice(&buf[..n]); }
                if client.write_all(&buf[..n]).await.is_err() { dropped = true; break; }
            }
            n = client.read(&mut probe) => {
                if n.unwrap_or(0) == 0 { dropped = true; break; }
            }
        }
    }
    let status = String::from_utf8_lossy(&first)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    log.lock().unwrap().done.push(Exchange {
        target: head.split_whitespace().nth(1).unwrap_or("").to_string(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        status,
        dropped_by_client: dropped,
    });
}

async fn read_request(sock: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let end = loop {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end - 4]).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buf.len() < end + len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    Some((head, buf[end..].to_vec()))
}

fn write_config(home: &TestHome, proxy: u16) {
    let dir = home.home.path().join("config").join("cairn");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("http://127.0.0.1:{proxy}/v1");
    std::fs::write(
        dir.join("config.toml"),
        format!(
            r#"provider = "llama"
max_tokens = 200
max_turns = 3

[providers.llama]
kind = "openai"
base_url = "{url}"
model = "{MODEL}"

[providers.llama-tools]
kind = "openai"
base_url = "{url}"
model = "{MODEL}"
# llama.cpp's grammar for `required` still lets the answer begin with
# free text, which this tiny model never ends; a nudge towards the tool
# section's opening tag makes it start one (the grammar does the rest).
extra_body = {{ tool_choice = "required", logit_bias = [["<tool_call>\n", 5]] }}
"#
        ),
    )
    .unwrap();
}

/// About 1.5k tokens of distinct prose for turn `n`.
fn filler(n: usize) -> String {
    (0..60)
        .map(|i| {
            format!(
                "Entry {n}.{i}: the harbour log notes that boat {i} of fleet {n} left at dawn with {} crates of pears and returned before noon.",
                i * 7 + n
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn cairn_run(home: &TestHome, args: &[&str]) -> (bool, Vec<Value>, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars("http://127.0.0.1:9"))
        .arg("run")
        .arg("--json")
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

fn chat_requests(log: &Log) -> Vec<Exchange> {
    log.lock()
        .unwrap()
        .done
        .iter()
        .filter(|e| e.target.ends_with("/chat/completions"))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_local_model_with_an_8k_window() {
    let paths = match prepared() {
        Ok(p) => p,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let llama = start_llama(&paths).await;
    let (proxy, log) = start_proxy(llama.port).await;
    let home = TestHome::new();
    write_config(&home, proxy);
    std::fs::write(home.path("notes.txt"), "The password hint is: pears.\n").unwrap();

    let mut compacted = false;
    let mut times = Vec::new();
    for n in 0..10 {
        let prompt = format!(
            "{}\n\nIn one short sentence: what did fleet {n} carry?",
            filler(n)
        );
        let mut args = vec!["--mode", "chat"];
        if n > 0 {
            args.push("-c");
        }
        args.push(&prompt);
        let started = Instant::now();
        let (ok, lines, stderr) = cairn_run(&home, &args).await;
        times.push(started.elapsed());
        println!("turn {n}: {:?}", started.elapsed());
        assert!(ok, "turn {n} failed: {lines:?}\n{stderr}");
        compacted |= lines.iter().any(|l| l["type"] == "compacted");
        let window = lines
            .iter()
            .filter(|l| l["type"] == "usage")
            .filter_map(|l| l["context_window"].as_u64())
            .next_back();
        assert_eq!(
            window,
            Some(WINDOW),
            "turn {n}: the window learned from the server"
        );
    }
    let refused: Vec<_> = chat_requests(&log)
        .into_iter()
        .filter(|e| e.status != 200)
        .map(|e| e.status)
        .collect();
    assert!(
        refused.is_empty(),
        "the server refused requests: {refused:?}"
    );
    assert!(
        compacted,
        "ten turns of ~1.5k tokens in an 8k window must compact"
    );
    times.sort();
    println!(
        "turn time against the real server: median {:?}",
        times[times.len() / 2]
    );

    // A tool call: the server is made to call one (tool_choice required);
    // cairn runs it and sends the result back.
    let (_, lines, stderr) = cairn_run(
        &home,
        &[
            "--provider",
            "llama-tools",
            "--mode",
            "smart",
            "Read notes.txt.",
        ],
    )
    .await;
    assert!(
        lines.iter().any(|l| l["type"] == "tool_result"),
        "no tool ran: {lines:?}\n{stderr}"
    );
    let sent_back = chat_requests(&log).iter().any(|e| {
        e.body["tool_choice"].is_string()
            && e.body["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|m| m["role"] == "tool"))
    });
    assert!(sent_back, "the tool result never reached the server");

    escape_mid_stream(&home, &log);
}

/// Esc while the real server streams: cairn says so and closes the stream.
fn escape_mid_stream(home: &TestHome, log: &Log) {
    let before = chat_requests(log).len();
    let mut app = pty::PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["--mode", "chat"],
        &home.vars("http://127.0.0.1:9"),
        home.project.path(),
        30,
        100,
    );
    app.wait_for_text("Ask cairn");
    let streaming = log.lock().unwrap().streaming;
    app.type_text("Write a long story about a harbour, with many boats.");
    app.send(b"\r");
    // Esc once the server's answer has begun to reach cairn.
    let deadline = Instant::now() + Duration::from_secs(120);
    while log.lock().unwrap().streaming == streaming {
        assert!(Instant::now() < deadline, "the answer never began");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    app.send(b"\x1b");
    app.wait_for_text("cancelled");
    std::thread::sleep(Duration::from_millis(500));
    app.ctrl_c_to_quit();
    let after = chat_requests(log);
    let dropped = after[before..].iter().any(|e| e.dropped_by_client);
    assert!(
        dropped,
        "cairn did not close the stream on Esc: {:?}",
        &after[before..]
    );
}
