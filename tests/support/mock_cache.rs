//! Parts of the scripted model server: Anthropic's prompt cache as the
//! service keeps it, and whole (non-streamed) JSON answers.

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Value, json};

use super::{Format, Item, Reply};

/// The system prompt of a request, whether sent as a string or as blocks.
pub fn system_text(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    }
}

/// The text of every tool result in an Anthropic request, oldest first
/// (a result sent as a string or as text blocks).
pub fn tool_result_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .collect()
}

/// Anthropic's cache: a prefix is written at each `cache_control`
/// breakpoint; a later request reads the longest written prefix found at
/// one of its breakpoints or up to 20 blocks before one. Tokens are
/// counted as four characters each.
#[derive(Default)]
pub struct PromptCache {
    written: HashSet<u64>,
}

/// The blocks of a request in cache order (tools, system, messages), each
/// without its `cache_control`, with whether it carried one.
fn blocks(request: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut push = |b: &Value| {
        let mut b = b.clone();
        let marked = b
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .is_some();
        out.push((b.to_string(), marked));
    };
    for t in request["tools"].as_array().into_iter().flatten() {
        push(t);
    }
    match &request["system"] {
        Value::Array(blocks) => blocks.iter().for_each(&mut push),
        Value::String(s) => push(&json!({"type": "text", "text": s})),
        _ => {}
    }
    for m in request["messages"].as_array().into_iter().flatten() {
        match &m["content"] {
            Value::Array(blocks) => blocks.iter().for_each(&mut push),
            other => push(other),
        }
    }
    out
}

impl PromptCache {
    /// (uncached input, cache read, cache write) tokens for a request,
    /// and what it writes.
    pub fn account(&mut self, request: &Value) -> (u64, u64, u64) {
        let blocks = blocks(request);
        let mut hashes = Vec::new();
        let mut tokens = Vec::new();
        let mut h = DefaultHasher::new();
        let mut total = 0u64;
        for (text, _) in &blocks {
            text.hash(&mut h);
            hashes.push(h.finish());
            total += (text.len() as u64).div_ceil(4);
            tokens.push(total);
        }
        let marks: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1).collect();
        let mut read_upto: Option<usize> = None;
        for &m in &marks {
            for p in (m.saturating_sub(20)..=m).rev() {
                if self.written.contains(&hashes[p]) {
                    read_upto = read_upto.max(Some(p));
                    break;
                }
            }
        }
        for &m in &marks {
            self.written.insert(hashes[m]);
        }
        let read = read_upto.map(|p| tokens[p]).unwrap_or(0);
        let last_mark = marks.last().map(|&m| tokens[m]).unwrap_or(0);
        let write = last_mark.saturating_sub(read);
        (total - read - write, read, write)
    }
}

/// One whole JSON response carrying the reply, for a server that does not
/// stream.
pub fn whole_json(format: Format, r: &Reply) -> String {
    match format {
        Format::Responses => super::responses_wire::whole(r),
        Format::Gemini => super::gemini_wire::gemini_whole(r),
        Format::Bedrock => bedrock_whole(r),
        Format::Ollama => ollama_whole(r),
        Format::OpenAi => {
            let mut text = String::new();
            let mut calls = Vec::new();
            for item in &r.items {
                match item {
                    Item::Text(t) => text.push_str(t),
                    Item::ToolCall { id, name, args } => calls
                        .push(json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}})),
                    _ => {}
                }
            }
            let mut message = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                message["tool_calls"] = Value::Array(calls);
            }
            let finish = if r.items.iter().any(|i| matches!(i, Item::ToolCall { .. })) {
                "tool_calls"
            } else {
                "stop"
            };
            json!({"id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": super::chat_wire::openai_usage(r)})
            .to_string()
        }
        Format::Anthropic => {
            let content: Vec<Value> = r
                .items
                .iter()
                .filter_map(|item| match item {
                    Item::Text(t) => Some(json!({"type": "text", "text": t})),
                    Item::ToolCall { id, name, args } => {
                        Some(json!({"type": "tool_use", "id": id, "name": name, "input": args}))
                    }
                    _ => None,
                })
                .collect();
            let stop = if content.iter().any(|c| c["type"] == "tool_use") {
                "tool_use"
            } else {
                "end_turn"
            };
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "mock",
                "content": content, "stop_reason": stop,
                "usage": super::chat_wire::anthropic_usage(r, r.usage.1)})
            .to_string()
        }
    }
}

fn bedrock_whole(r: &Reply) -> String {
    let content: Vec<Value> = r
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Text(t) => Some(json!({"text": t})),
            Item::ToolCall { id, name, args } => {
                Some(json!({"toolUse": {"toolUseId": id, "name": name, "input": args}}))
            }
            _ => None,
        })
        .collect();
    let stop = if content.iter().any(|c| c.get("toolUse").is_some()) {
        "tool_use"
    } else {
        "end_turn"
    };
    json!({"output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop, "usage": {"inputTokens": r.usage.0, "outputTokens": r.usage.1}})
    .to_string()
}

fn ollama_whole(r: &Reply) -> String {
    // One message holding everything, with the closing counts.
    let lines = super::gemini_wire::ollama_lines(r);
    let mut done: Value = lines
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_default();
    let mut content = String::new();
    let mut calls = Vec::new();
    for l in &lines {
        let v: Value = serde_json::from_str(l).unwrap_or_default();
        content.push_str(v["message"]["content"].as_str().unwrap_or_default());
        calls.extend(
            v["message"]["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
    }
    done["message"] = json!({"role": "assistant", "content": content, "tool_calls": calls});
    done.to_string()
}
