//! The scripted model server as a program, for trying cairn by hand and for
//! the benchmark scripts:
//!
//!     cargo run --example mock_model -- anthropic 127.0.0.1:8787 script.json
//!
//! The format may also be `openai`, `responses`, `gemini`, `ollama` or
//! `bedrock` (configure a provider of that `kind` with `base_url`).
//!     ANTHROPIC_API_KEY=x ANTHROPIC_BASE_URL=http://127.0.0.1:8787 cargo run
//!
//! The script is a JSON array of replies, used in order; the last one
//! repeats. A reply is an object with any of: "text", "reasoning",
//! "tool_calls": [{"id", "name", "args"}], "delay_ms", "chunk_chars",
//! "status" (an HTTP error code), "repeat_text" (text repeated N times:
//! {"repeat_text": ["word ", 1000]}), "when" (answer only a request whose
//! body contains this text: parallel sub-agents' requests come in any order),
//! "search" (the provider searches the web itself first, where its format
//! can: {"query": "…", "pages": [["title", "https://…"]]}).

#[path = "../tests/support/mock_model.rs"]
mod mock_model;

use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use serde_json::Value;

fn reply(v: &Value) -> Reply {
    if let Some(code) = v["status"].as_u64() {
        return Reply::status(code as u16);
    }
    let mut r = Reply::default();
    if let Some(t) = v["reasoning"].as_str() {
        r = r.reasoning(t);
    }
    if let Some(t) = v["text"].as_str() {
        r = r.and_text(t);
    }
    if let Some(arr) = v["repeat_text"].as_array()
        && let (Some(t), Some(n)) = (
            arr.first().and_then(Value::as_str),
            arr.get(1).and_then(Value::as_u64),
        )
    {
        r = r.and_text(&t.repeat(n as usize));
    }
    for c in v["tool_calls"].as_array().into_iter().flatten() {
        r = r.tool_call(
            c["id"].as_str().unwrap_or("call_1"),
            c["name"].as_str().unwrap_or(""),
            c["args"].clone(),
        );
    }
    if let Some(ms) = v["delay_ms"].as_u64() {
        r = r.chunk_delay(Duration::from_millis(ms));
    }
    if let Some(n) = v["chunk_chars"].as_u64() {
        r = r.chunk_chars(n as usize);
    }
    if let Some(needle) = v["when"].as_str() {
        r = r.when(needle);
    }
    if let Some(query) = v["search"]["query"].as_str() {
        let pages: Vec<(&str, &str)> = v["search"]["pages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some((p.get(0)?.as_str()?, p.get(1)?.as_str()?)))
            .collect();
        r = r.searched(query, &pages);
    }
    r
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!(
            "usage: mock_model <openai|anthropic|responses|gemini|ollama|bedrock> <addr> <script.json>"
        );
        std::process::exit(2);
    }
    let format = match args[1].as_str() {
        "openai" => Format::OpenAi,
        "responses" => Format::Responses,
        "gemini" => Format::Gemini,
        "ollama" => Format::Ollama,
        "bedrock" => Format::Bedrock,
        _ => Format::Anthropic,
    };
    let script: Vec<Value> =
        match std::fs::read_to_string(&args[3]).map(|t| serde_json::from_str(&t)) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                eprintln!(
                    "mock_model: {} is not a JSON array of replies: {e}",
                    args[3]
                );
                std::process::exit(2);
            }
            Err(e) => {
                eprintln!("mock_model: cannot read {}: {e}", args[3]);
                std::process::exit(2);
            }
        };
    let listener = match tokio::net::TcpListener::bind(&args[2]).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mock_model: cannot listen on {}: {e}", args[2]);
            std::process::exit(1);
        }
    };
    let replies: Vec<Reply> = script.iter().map(reply).collect();
    let last = replies
        .last()
        .cloned()
        .unwrap_or_else(|| Reply::text("(empty script)"));
    let mock = MockModel::serve(format, replies, listener);
    eprintln!("mock_model: serving {} at {}", args[1], mock.url());
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Keep answering with the last reply once the script is used up.
        if mock.pending() == 0 {
            mock.push(last.clone());
        }
    }
}
