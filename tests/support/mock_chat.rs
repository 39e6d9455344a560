//! The scripted server's OpenAI Chat Completions and Anthropic Messages
//! streams, with the bends real servers add when a reply asks for them.

use serde_json::{Value, json};

use super::{Item, Reply, ToolIndex, args_pieces, pieces};

pub fn openai_chunks(r: &Reply) -> Vec<String> {
    let data = |v: Value| format!("data: {v}\n\n");
    let mut out = vec![data(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
    )];
    if let Some(err) = &r.stream_error {
        out.push(data(json!({"error": err})));
        return out;
    }
    let mut tool_index = 0;
    let mut has_tools = false;
    let call = |index: usize, mut v: Value| {
        match r.tool_index {
            ToolIndex::Counted => v["index"] = json!(index),
            ToolIndex::Repeated => v["index"] = json!(0),
            ToolIndex::Omitted => {}
        }
        data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [v]}}]}))
    };
    for item in &r.items {
        match item {
            Item::Text(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(data(
                        json!({"choices": [{"index": 0, "delta": {"content": p}}]}),
                    ));
                }
            }
            Item::Reasoning(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(data(
                        json!({"choices": [{"index": 0, "delta": {"reasoning_content": p}}]}),
                    ));
                }
            }
            Item::ToolCall { id, name, args } => {
                has_tools = true;
                out.push(call(tool_index, json!({"id": id, "type": "function", "function": {"name": name, "arguments": ""}})));
                for p in args_pieces(args) {
                    out.push(call(tool_index, json!({"function": {"arguments": p}})));
                }
                tool_index += 1;
            }
            Item::RawToolCall { id, name, raw } => {
                has_tools = true;
                out.push(call(tool_index, json!({"id": id, "type": "function", "function": {"name": name, "arguments": ""}})));
                for p in pieces(raw, 8) {
                    out.push(call(tool_index, json!({"function": {"arguments": p}})));
                }
                tool_index += 1;
            }
            Item::RedactedThinking(_) => {}
        }
    }
    let finish = r
        .stop
        .clone()
        .unwrap_or_else(|| if has_tools { "tool_calls" } else { "stop" }.into());
    out.push(data(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
    ));
    out.push(data(json!({"choices": [], "usage": openai_usage(r)})));
    if !r.no_done {
        out.push("data: [DONE]\n\n".to_string());
    }
    out
}

pub fn openai_usage(r: &Reply) -> Value {
    json!({"prompt_tokens": r.usage.0 + r.cache.0, "completion_tokens": r.usage.1,
        "total_tokens": r.usage.0 + r.cache.0 + r.usage.1,
        "prompt_tokens_details": {"cached_tokens": r.cache.0}})
}

pub fn anthropic_usage(r: &Reply, output: u64) -> Value {
    json!({"input_tokens": r.usage.0, "output_tokens": output,
        "cache_read_input_tokens": r.cache.0, "cache_creation_input_tokens": r.cache.1})
}

pub fn anthropic_chunks(r: &Reply) -> Vec<String> {
    let ev = |name: &str, v: Value| format!("event: {name}\ndata: {v}\n\n");
    let mut out = vec![ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "model": "mock", "stop_reason": null,
            "usage": anthropic_usage(r, 1)}}),
    )];
    if let Some(err) = &r.stream_error {
        out.push(ev("error", json!({"type": "error", "error": err})));
        return out;
    }
    let mut has_tools = false;
    let base = match &r.search {
        Some(search) => {
            out.extend(super::search_wire::anthropic_blocks(search));
            2
        }
        None => 0,
    };
    let mut cited = false;
    for (index, item) in r.items.iter().enumerate() {
        let index = index + base;
        match item {
            Item::Text(t) => {
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                if let (Some(search), false) = (&r.search, cited) {
                    cited = true;
                    out.extend(super::search_wire::anthropic_citation(search, index));
                }
                for (i, p) in pieces(t, r.chunk_chars).into_iter().enumerate() {
                    if i % 5 == 4 {
                        out.push(ev("ping", json!({"type": "ping"})));
                    }
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})));
                }
            }
            Item::Reasoning(t) => {
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}})));
                for p in pieces(t, r.chunk_chars) {
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}})));
                }
                out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "c2ln"}})));
            }
            Item::RedactedThinking(d) => {
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "redacted_thinking", "data": d}})));
            }
            Item::ToolCall { id, name, args } => {
                has_tools = true;
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                for p in args_pieces(args) {
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}})));
                }
            }
            Item::RawToolCall { id, name, raw } => {
                has_tools = true;
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                for p in pieces(raw, 8) {
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}})));
                }
            }
        }
        out.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = r
        .stop
        .clone()
        .unwrap_or_else(|| if has_tools { "tool_use" } else { "end_turn" }.into());
    out.push(ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": r.usage.1}})));
    if !r.no_done {
        out.push(ev("message_stop", json!({"type": "message_stop"})));
    }
    out
}
