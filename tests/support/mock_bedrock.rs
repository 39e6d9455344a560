//! The scripted server's Bedrock Converse stream: AWS event-stream frames
//! encoded with `aws-smithy-eventstream`, the crate cairn decodes them with.

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use serde_json::{Value, json};

use super::{Item, Reply, args_pieces, pieces};

fn frame(kind: &str, payload: Value) -> Vec<u8> {
    let msg = Message::new(payload.to_string().into_bytes())
        .add_header(Header::new(
            ":event-type",
            HeaderValue::String(kind.to_string().into()),
        ))
        .add_header(Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ))
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String("event".into()),
        ));
    let mut out = Vec::new();
    write_message_to(&msg, &mut out).expect("encode a frame");
    out
}

fn exception(kind: &str, message: &str) -> Vec<u8> {
    let msg = Message::new(json!({"message": message}).to_string().into_bytes())
        .add_header(Header::new(
            ":exception-type",
            HeaderValue::String(kind.to_string().into()),
        ))
        .add_header(Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ))
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String("exception".into()),
        ));
    let mut out = Vec::new();
    write_message_to(&msg, &mut out).expect("encode a frame");
    out
}

pub fn frames(r: &Reply) -> Vec<Vec<u8>> {
    let mut out = vec![frame("messageStart", json!({"role": "assistant"}))];
    if let Some(err) = &r.stream_error {
        out.push(exception(
            err["type"].as_str().unwrap_or("internalServerException"),
            err["message"].as_str().unwrap_or("error"),
        ));
        return out;
    }
    let mut has_tools = false;
    for (i, item) in r.items.iter().enumerate() {
        let delta = |d: Value| {
            frame(
                "contentBlockDelta",
                json!({"contentBlockIndex": i, "delta": d}),
            )
        };
        match item {
            Item::Text(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(delta(json!({"text": p})));
                }
            }
            Item::Reasoning(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(delta(json!({"reasoningContent": {"text": p}})));
                }
                out.push(delta(json!({"reasoningContent": {"signature": "c2ln"}})));
            }
            Item::RedactedThinking(d) => {
                out.push(delta(json!({"reasoningContent": {"redactedContent": d}})));
            }
            Item::ToolCall { id, name, args } => {
                has_tools = true;
                out.push(frame(
                    "contentBlockStart",
                    json!({"contentBlockIndex": i,
                    "start": {"toolUse": {"toolUseId": id, "name": name}}}),
                ));
                for p in args_pieces(args) {
                    out.push(delta(json!({"toolUse": {"input": p}})));
                }
            }
            Item::RawToolCall { id, name, raw } => {
                has_tools = true;
                out.push(frame(
                    "contentBlockStart",
                    json!({"contentBlockIndex": i,
                    "start": {"toolUse": {"toolUseId": id, "name": name}}}),
                ));
                for p in pieces(raw, 8) {
                    out.push(delta(json!({"toolUse": {"input": p}})));
                }
            }
        }
        out.push(frame("contentBlockStop", json!({"contentBlockIndex": i})));
    }
    let stop = r
        .stop
        .clone()
        .unwrap_or_else(|| if has_tools { "tool_use" } else { "end_turn" }.into());
    out.push(frame("messageStop", json!({"stopReason": stop})));
    if !r.no_done {
        out.push(frame(
            "metadata",
            json!({"usage": {"inputTokens": r.usage.0, "outputTokens": r.usage.1,
            "totalTokens": r.usage.0 + r.usage.1, "cacheReadInputTokens": r.cache.0,
            "cacheWriteInputTokens": r.cache.1}, "metrics": {"latencyMs": 12}}),
        ));
    }
    out
}
