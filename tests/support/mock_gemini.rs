//! The scripted server's Gemini `streamGenerateContent?alt=sse` and Ollama
//! `/api/chat` (NDJSON) answers.

use serde_json::{Value, json};

use super::{Item, Reply, pieces};

fn gemini_usage(r: &Reply) -> Value {
    json!({"promptTokenCount": r.usage.0 + r.cache.0, "candidatesTokenCount": r.usage.1,
        "cachedContentTokenCount": r.cache.0, "totalTokenCount": r.usage.0 + r.cache.0 + r.usage.1})
}

/// Gemini chunks: text and thoughts in pieces, each function call whole
/// in one part (as Gemini sends them), the last with a thought signature.
pub fn gemini_chunks(r: &Reply) -> Vec<String> {
    let data = |v: Value| format!("data: {v}\r\n\r\n");
    let chunk = |parts: Value| json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}]});
    let mut out = Vec::new();
    if let Some(err) = &r.stream_error {
        out.push(data(json!({"error": err})));
        return out;
    }
    let mut has_calls = false;
    for item in &r.items {
        match item {
            Item::Text(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(data(chunk(json!([{"text": p}]))));
                }
            }
            Item::Reasoning(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(data(chunk(json!([{"text": p, "thought": true}]))));
                }
            }
            Item::ToolCall { name, args, .. } => {
                has_calls = true;
                out.push(data(chunk(
                    json!([{"functionCall": {"name": name, "args": args},
                    "thoughtSignature": format!("sig-{name}")}]),
                )));
            }
            Item::RawToolCall { .. } | Item::RedactedThinking(_) => {}
        }
    }
    let _ = has_calls;
    let reason = r.stop.clone().unwrap_or_else(|| "STOP".into());
    let mut last = chunk(json!([{"text": ""}]));
    last["candidates"][0]["finishReason"] = json!(reason);
    last["usageMetadata"] = gemini_usage(r);
    if let Some(s) = &r.search {
        last["candidates"][0]["groundingMetadata"] = super::search_wire::gemini_grounding(s);
    }
    out.push(data(last));
    out
}

pub fn gemini_whole(r: &Reply) -> String {
    let chunks: Vec<Value> = gemini_chunks(r)
        .iter()
        .filter_map(|c| serde_json::from_str(c.trim().trim_start_matches("data: ")).ok())
        .collect();
    Value::Array(chunks).to_string()
}

/// Ollama lines: content and thinking in pieces, tool calls whole (Ollama
/// sends them in one message), then `done` with the counts.
pub fn ollama_lines(r: &Reply) -> Vec<String> {
    let line = |v: Value| format!("{v}\n");
    let msg = |m: Value| json!({"model": "mock", "created_at": "2026-01-01T00:00:00Z", "message": m, "done": false});
    let mut out = Vec::new();
    if let Some(err) = &r.stream_error {
        out.push(line(
            json!({"error": err["message"].as_str().unwrap_or("error")}),
        ));
        return out;
    }
    for item in &r.items {
        match item {
            Item::Text(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(line(msg(json!({"role": "assistant", "content": p}))));
                }
            }
            Item::Reasoning(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(line(msg(
                        json!({"role": "assistant", "content": "", "thinking": p}),
                    )));
                }
            }
            Item::ToolCall { name, args, .. } => {
                out.push(line(msg(json!({"role": "assistant", "content": "",
                    "tool_calls": [{"function": {"name": name, "arguments": args}}]}))));
            }
            Item::RawToolCall { .. } | Item::RedactedThinking(_) => {}
        }
    }
    let reason = r.stop.clone().unwrap_or_else(|| "stop".into());
    out.push(line(
        json!({"model": "mock", "message": {"role": "assistant", "content": ""}, "done": true,
        "done_reason": reason, "prompt_eval_count": r.usage.0, "eval_count": r.usage.1}),
    ));
    out
}
