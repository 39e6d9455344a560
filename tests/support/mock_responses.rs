//! The scripted server's OpenAI Responses API: `response.*` events as the
//! service streams them, and a whole `response` object for a server that
//! does not stream.

use serde_json::{Value, json};

use super::{Item, Reply, args_pieces, pieces};

fn ev(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap_or(""))
}

fn usage(r: &Reply) -> Value {
    json!({"input_tokens": r.usage.0 + r.cache.0, "input_tokens_details": {"cached_tokens": r.cache.0},
        "output_tokens": r.usage.1, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": r.usage.0 + r.cache.0 + r.usage.1})
}

/// The output items of a reply, complete.
fn items(r: &Reply) -> Vec<Value> {
    r.items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            Item::Text(t) => Some(json!({"type": "message", "id": format!("msg_{i}"), "status": "completed",
                "role": "assistant", "content": [{"type": "output_text", "text": t, "annotations": []}]})),
            Item::Reasoning(t) => Some(json!({"type": "reasoning", "id": format!("rs_{i}"),
                "summary": [{"type": "summary_text", "text": t}], "encrypted_content": format!("gAAAA-enc-{i}")})),
            Item::ToolCall { id, name, args } => Some(json!({"type": "function_call", "id": format!("fc_{i}"),
                "status": "completed", "call_id": id, "name": name, "arguments": args.to_string()})),
            Item::RawToolCall { id, name, raw } => Some(json!({"type": "function_call", "id": format!("fc_{i}"),
                "status": "incomplete", "call_id": id, "name": name, "arguments": raw})),
            Item::RedactedThinking(_) => None,
        })
        .collect()
}

fn response(r: &Reply, status: &str) -> Value {
    let mut resp = json!({"id": "resp_1", "object": "response", "status": status, "model": "mock",
        "output": items(r), "usage": usage(r)});
    if let Some(reason) = &r.stop {
        resp["status"] = json!("incomplete");
        resp["incomplete_details"] = json!({"reason": reason});
    }
    resp
}

pub fn whole(r: &Reply) -> String {
    response(r, "completed").to_string()
}

pub fn chunks(r: &Reply) -> Vec<String> {
    let mut out = vec![ev(json!({"type": "response.created", "sequence_number": 0,
        "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}))];
    if let Some(err) = &r.stream_error {
        let mut e = err.clone();
        e["type"] = json!("error");
        out.push(ev(e));
        return out;
    }
    // The search's item gets a number of its own, after the reply's.
    let searched = r.search.as_ref();
    if let Some(s) = searched {
        out.extend(
            super::search_wire::responses_item(s, r.items.len())
                .into_iter()
                .map(ev),
        );
    }
    let mut cited = false;
    for (i, (item, full)) in r.items.iter().zip(items(r)).enumerate() {
        let mut added = full.clone();
        match item {
            Item::Text(t) => {
                added["content"] = json!([]);
                out.push(ev(
                    json!({"type": "response.output_item.added", "output_index": i, "item": added}),
                ));
                for p in pieces(t, r.chunk_chars) {
                    out.push(ev(
                        json!({"type": "response.output_text.delta", "output_index": i,
                        "item_id": full["id"], "content_index": 0, "delta": p}),
                    ));
                }
                if let (Some(s), false) = (searched, cited) {
                    cited = true;
                    out.extend(super::search_wire::responses_annotation(s, i).map(ev));
                }
            }
            Item::Reasoning(t) => {
                added["summary"] = json!([]);
                added.as_object_mut().map(|o| o.remove("encrypted_content"));
                out.push(ev(
                    json!({"type": "response.output_item.added", "output_index": i, "item": added}),
                ));
                out.push(ev(
                    json!({"type": "response.reasoning_summary_part.added", "output_index": i,
                    "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
                ));
                for p in pieces(t, r.chunk_chars) {
                    out.push(ev(
                        json!({"type": "response.reasoning_summary_text.delta", "output_index": i,
                        "item_id": full["id"], "summary_index": 0, "delta": p}),
                    ));
                }
            }
            Item::ToolCall { .. } | Item::RawToolCall { .. } => {
                added["arguments"] = json!("");
                out.push(ev(
                    json!({"type": "response.output_item.added", "output_index": i, "item": added}),
                ));
                let raw = full["arguments"].as_str().unwrap_or_default();
                let parts = match item {
                    Item::ToolCall { args, .. } => args_pieces(args),
                    _ => pieces(raw, 8),
                };
                for p in parts {
                    out.push(ev(
                        json!({"type": "response.function_call_arguments.delta", "output_index": i,
                        "item_id": full["id"], "delta": p}),
                    ));
                }
                out.push(ev(
                    json!({"type": "response.function_call_arguments.done", "output_index": i,
                    "item_id": full["id"], "arguments": raw}),
                ));
            }
            Item::RedactedThinking(_) => continue,
        }
        out.push(ev(
            json!({"type": "response.output_item.done", "output_index": i, "item": full}),
        ));
    }
    let kind = if r.stop.is_some() {
        "response.incomplete"
    } else {
        "response.completed"
    };
    out.push(ev(
        json!({"type": kind, "response": response(r, "completed")}),
    ));
    out
}
