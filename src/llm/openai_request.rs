//! The request body of OpenAI Chat Completions.

use serde_json::{Value, json};

use super::Request;
use crate::conversation::{Message, Part, ResultContent, Role};

/// The JSON body of a request.
pub fn request_body(request: &Request, openai_host: bool) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    // Reasoning goes back with the calls of the turn under way, where
    // DeepSeek and Kimi require it; older turns' reasoning is not resent.
    let turn_start = request
        .messages
        .iter()
        .rposition(|m| {
            m.role == Role::User && m.parts.iter().any(|p| matches!(p, Part::Text { .. }))
        })
        .unwrap_or(0);
    for (i, m) in request.messages.iter().enumerate() {
        push_message(&mut messages, m, !openai_host && i > turn_start);
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let key = if openai_host {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[key] = json!(request.max_tokens);
    if request.reasoning
        && let Some(effort) = request.effort
    {
        body["reasoning_effort"] = json!(effort.as_str());
    } else if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(
            request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.input_schema}})
                })
                .collect(),
        );
        // Said outright: some servers (llama-cpp-python's) drop the tools
        // of a request that does not ask for them.
        body["tool_choice"] = json!("auto");
    }
    body
}

fn image_url(media_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{data}")}})
}

/// An assistant message: its text, its calls and, where wanted, the
/// reasoning that led to them.
fn assistant_message(m: &Message, with_reasoning: bool) -> Value {
    let text: String = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let calls: Vec<Value> = m
        .tool_calls()
        .map(|(id, name, input)| {
            json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": input.to_string()}})
        })
        .collect();
    let mut msg = json!({"role": "assistant",
        "content": if text.is_empty() { Value::Null } else { Value::String(text) }});
    if !calls.is_empty() {
        msg["tool_calls"] = Value::Array(calls);
        let reasoning: String = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Reasoning { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if with_reasoning && !reasoning.is_empty() {
            msg["reasoning_content"] = Value::String(reasoning);
        }
    }
    msg
}

fn push_message(out: &mut Vec<Value>, m: &Message, with_reasoning: bool) {
    match m.role {
        Role::Assistant => out.push(assistant_message(m, with_reasoning)),
        Role::User => {
            // Tool results become `tool` messages, which must come first.
            let mut late_images = Vec::new();
            for p in &m.parts {
                if let Part::ToolResult {
                    call_id, content, ..
                } = p
                {
                    let mut text = String::new();
                    for c in content {
                        match c {
                            ResultContent::Text { text: t } => {
                                if !text.is_empty() {
                                    text.push('\n');
                                }
                                text.push_str(t);
                            }
                            ResultContent::Image { image } => {
                                late_images.push(image_url(&image.media_type, &image.data));
                            }
                        }
                    }
                    out.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
                }
            }
            let mut content: Vec<Value> = Vec::new();
            if !late_images.is_empty() {
                content.push(
                    json!({"type": "text", "text": "(images returned by the tool calls above)"}),
                );
                content.extend(late_images);
            }
            for p in &m.parts {
                match p {
                    Part::Text { text } => content.push(json!({"type": "text", "text": text})),
                    Part::Image { image } => {
                        content.push(image_url(&image.media_type, &image.data))
                    }
                    _ => {}
                }
            }
            if content.is_empty() {
                return;
            }
            let only_text = content.iter().all(|c| c["type"] == "text");
            let value = if only_text {
                Value::String(
                    content
                        .iter()
                        .filter_map(|c| c["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                )
            } else {
                Value::Array(content)
            };
            out.push(json!({"role": "user", "content": value}));
        }
    }
}
