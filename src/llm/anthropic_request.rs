//! The request body of Anthropic Messages, with its cache breakpoints.

use serde_json::{Value, json};

use super::Request;
use crate::conversation::{Message, Part, ResultContent, Role};

/// The name [`StreamEvent::ProviderData`](super::StreamEvent::ProviderData)
/// carries for this wire format.
pub const FORMAT: &str = "anthropic";

/// The conversation as `{role, content}` messages whose roles alternate,
/// as Anthropic's and Bedrock's APIs want: neighbours of one role are
/// merged, and a message without blocks is left out.
pub fn alternating(messages: &[Message], blocks_of: impl Fn(&Message) -> Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let blocks = blocks_of(m);
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(arr) = last["content"].as_array_mut() {
                    arr.extend(blocks);
                }
            }
            _ => out.push(json!({"role": role, "content": blocks})),
        }
    }
    out
}

/// The JSON body of a request.
pub fn request_body(request: &Request) -> Value {
    let searching = request.web_search.is_some();
    let mut messages = alternating(&request.messages, |m| content_blocks(m, searching));
    mark_conversation_end(&mut messages);
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] =
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]);
    }
    if let Some(budget) = super::effort::thinking_budget(request) {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    let mut tools: Vec<Value> = request.web_search.map(search_tool).into_iter().collect();
    tools.extend(request.tools.iter().map(
        |t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}),
    ));
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
        // The tools come before the system prompt in Anthropic's cache
        // order; one breakpoint after the last covers them all.
        if let Some(last) = body["tools"].as_array_mut().and_then(|t| t.last_mut()) {
            last["cache_control"] = ephemeral();
        }
    }
    body
}

/// The provider's own web search as a request offers it, at most
/// `max_uses` searches per request; the provider runs it, and its blocks
/// come back in the answer (`anthropic_search`).
fn search_tool(max_uses: u32) -> Value {
    json!({"type": "web_search_20250305", "name": "web_search", "max_uses": max_uses})
}

/// The moving end of the conversation: the last block of the last two user
/// messages. The newest writes this request's prefix to the cache; the one
/// before it is where the previous request ended, so its prefix is read
/// back. With the tools and the system prompt that is four breakpoints,
/// Anthropic's limit.
fn mark_conversation_end(messages: &mut [Value]) {
    let mut marked = 0;
    for m in messages.iter_mut().rev() {
        if marked == 2 {
            break;
        }
        if m["role"] != "user" {
            continue;
        }
        if let Some(last) = m["content"].as_array_mut().and_then(|c| c.last_mut()) {
            last["cache_control"] = ephemeral();
            marked += 1;
        }
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn image_block(media_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
}

/// `searching`: the request offers the search, so its earlier blocks can
/// go back as they came; without the tool they would be refused, and the
/// search goes back as text saying what it found.
fn content_blocks(m: &Message, searching: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for p in &m.parts {
        match p {
            Part::Text { text } if !text.is_empty() => {
                out.push(json!({"type": "text", "text": text}));
            }
            Part::Text { .. } => {}
            Part::Reasoning { text, signature } => {
                // Thinking goes back only with its signature; without one the
                // API would refuse it.
                if let Some(sig) = signature {
                    out.push(json!({"type": "thinking", "thinking": text, "signature": sig}));
                }
            }
            Part::ProviderData { format, data } if format == FORMAT => out.push(data.clone()),
            Part::ProviderData { .. } => {}
            // The search's own blocks, in order: the call and its result.
            Part::WebSearch(search) if search.format == FORMAT && searching => {
                out.extend(search.wire.iter().cloned())
            }
            Part::WebSearch(search) => out.push(json!({"type": "text", "text": search.text()})),
            Part::Citations { .. } => {}
            Part::Image { image } => out.push(image_block(&image.media_type, &image.data)),
            Part::ToolCall { id, name, input } => {
                out.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            Part::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let inner: Vec<Value> = content
                    .iter()
                    .map(|c| match c {
                        ResultContent::Text { text } => json!({"type": "text", "text": if text.is_empty() { "(no output)" } else { text.as_str() }}),
                        ResultContent::Image { image } => image_block(&image.media_type, &image.data),
                    })
                    .collect();
                out.push(json!({"type": "tool_result", "tool_use_id": call_id, "content": inner, "is_error": is_error}));
            }
        }
    }
    out
}
