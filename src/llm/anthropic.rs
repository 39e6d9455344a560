//! Anthropic Messages, streaming.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::sse::{self, SseEvent};
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
    http_client,
};
use crate::conversation::{Message, Part, ResultContent, Role};

const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    settings: ProviderSettings,
    client: reqwest::Client,
}

impl Anthropic {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let client = http_client(settings.request_timeout)?;
        Ok(Anthropic { settings, client })
    }

    fn url(&self) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        }
    }
}

#[async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &str {
        &self.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let mut req = self
            .client
            .post(self.url())
            .query(&self.settings.query)
            .header("anthropic-version", API_VERSION)
            .json(&request_body(request));
        if let Some(key) = &self.settings.api_key {
            req = req.header("x-api-key", key);
        }
        let mut state = Decoder::default();
        sse::send_and_decode(req, &self.settings.headers, move |ev| state.decode(ev)).await
    }
}

#[derive(Default)]
struct Decoder {
    usage: Usage,
    stop: Option<StopReason>,
}

impl Decoder {
    fn decode(&mut self, ev: SseEvent) -> Vec<Result<StreamEvent, LlmError>> {
        if ev.data.trim().is_empty() {
            return Vec::new();
        }
        let v: Value = match serde_json::from_str(&ev.data) {
            Ok(v) => v,
            Err(e) => {
                return vec![Err(LlmError::Malformed(format!(
                    "a stream event was not JSON ({e}): {}",
                    ev.data.chars().take(200).collect::<String>()
                )))];
            }
        };
        let kind = v["type"].as_str().unwrap_or(ev.event.as_str());
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                let u = &v["message"]["usage"];
                self.usage.input_tokens = u["input_tokens"].as_u64().unwrap_or(0);
                self.usage.cache_read_tokens = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
                self.usage.cache_write_tokens =
                    u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
                self.usage.output_tokens = u["output_tokens"].as_u64().unwrap_or(0);
                out.push(Ok(StreamEvent::Usage(self.usage)));
            }
            "content_block_start" => {
                let index = v["index"].as_u64().unwrap_or(0) as usize;
                let block = &v["content_block"];
                match block["type"].as_str() {
                    Some("tool_use") | Some("server_tool_use") => {
                        out.push(Ok(StreamEvent::ToolCallStart {
                            index,
                            id: block["id"].as_str().unwrap_or_default().to_string(),
                            name: block["name"].as_str().unwrap_or_default().to_string(),
                        }));
                    }
                    Some("text") => {
                        if let Some(t) = block["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(Ok(StreamEvent::TextDelta(t.to_string())));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let index = v["index"].as_u64().unwrap_or(0) as usize;
                let d = &v["delta"];
                match d["type"].as_str() {
                    Some("text_delta") => {
                        if let Some(t) = d["text"].as_str() {
                            out.push(Ok(StreamEvent::TextDelta(t.to_string())));
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(t) = d["partial_json"].as_str().filter(|t| !t.is_empty()) {
                            out.push(Ok(StreamEvent::ToolCallDelta {
                                index,
                                fragment: t.to_string(),
                            }));
                        }
                    }
                    Some("thinking_delta") => {
                        if let Some(t) = d["thinking"].as_str() {
                            out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
                        }
                    }
                    Some("signature_delta") => {
                        if let Some(t) = d["signature"].as_str() {
                            out.push(Ok(StreamEvent::ReasoningSignature(t.to_string())));
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    self.stop = Some(match r {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        other => StopReason::Other(other.to_string()),
                    });
                }
                if let Some(o) = v["usage"]["output_tokens"].as_u64() {
                    self.usage.output_tokens = o;
                    out.push(Ok(StreamEvent::Usage(self.usage)));
                }
            }
            "message_stop" => out.push(Ok(StreamEvent::Done(
                self.stop.clone().unwrap_or(StopReason::EndTurn),
            ))),
            "error" => {
                let err = &v["error"];
                let message = err["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_string();
                out.push(Err(match err["type"].as_str() {
                    Some("overloaded_error") | Some("api_error") => LlmError::Server {
                        status: 529,
                        message,
                    },
                    Some("rate_limit_error") => LlmError::RateLimited {
                        retry_after: None,
                        message,
                    },
                    Some("authentication_error") | Some("permission_error") => LlmError::Auth {
                        status: 401,
                        message,
                    },
                    _ => LlmError::from_status(400, None, &json!({"error": err}).to_string()),
                }));
            }
            _ => {}
        }
        out
    }
}

/// The JSON body of a request.
pub fn request_body(request: &Request) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for m in &request.messages {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let blocks = content_blocks(m);
        if blocks.is_empty() {
            continue;
        }
        // The API wants the roles to alternate: merge neighbours.
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(arr) = last["content"].as_array_mut() {
                    arr.extend(blocks);
                }
            }
            _ => messages.push(json!({"role": role, "content": blocks})),
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": messages,
        "stream": true,
    });
    if request.reasoning && request.max_tokens > 2048 {
        let budget = (request.max_tokens / 2).clamp(1024, 16_000);
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(
            request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
                .collect(),
        );
    }
    body
}

fn image_block(media_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
}

fn content_blocks(m: &Message) -> Vec<Value> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &str, data: Value) -> SseEvent {
        SseEvent {
            event: kind.into(),
            data: data.to_string(),
        }
    }

    #[test]
    fn decodes_a_stream_with_thinking_text_and_a_tool_call() {
        let mut d = Decoder::default();
        let events = [
            ev(
                "message_start",
                json!({"type":"message_start","message":{"usage":{"input_tokens":50,"cache_read_input_tokens":10,"output_tokens":1}}}),
            ),
            ev(
                "content_block_start",
                json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
            ),
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}}),
            ),
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}),
            ),
            ev("ping", json!({"type":"ping"})),
            ev(
                "content_block_start",
                json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
            ),
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}),
            ),
            ev(
                "content_block_start",
                json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"ls","input":{}}}),
            ),
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}),
            ),
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\":\".\"}"}}),
            ),
            ev(
                "message_delta",
                json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}),
            ),
            ev("message_stop", json!({"type":"message_stop"})),
        ];
        let out: Vec<StreamEvent> = events
            .into_iter()
            .flat_map(|e| d.decode(e))
            .map(Result::unwrap)
            .collect();
        assert_eq!(out[1], StreamEvent::ReasoningDelta("let me see".into()));
        assert_eq!(out[2], StreamEvent::ReasoningSignature("sig".into()));
        assert_eq!(out[3], StreamEvent::TextDelta("Hi".into()));
        assert_eq!(
            out[4],
            StreamEvent::ToolCallStart {
                index: 2,
                id: "t1".into(),
                name: "ls".into()
            }
        );
        assert_eq!(
            out[6],
            StreamEvent::ToolCallDelta {
                index: 2,
                fragment: "th\":\".\"}".into()
            }
        );
        assert_eq!(
            out[7],
            StreamEvent::Usage(Usage {
                input_tokens: 50,
                output_tokens: 30,
                cache_read_tokens: 10,
                cache_write_tokens: 0
            })
        );
        assert_eq!(out[8], StreamEvent::Done(StopReason::ToolUse));
    }

    #[test]
    fn overloaded_error_event_is_retryable() {
        let mut d = Decoder::default();
        let out = d.decode(ev(
            "error",
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        ));
        assert!(out[0].as_ref().unwrap_err().is_retryable());
    }

    #[test]
    fn body_merges_roles_and_orders_blocks() {
        let req = Request {
            model: "claude".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("a"),
                Message::user_text("b"),
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        Part::Reasoning {
                            text: "t".into(),
                            signature: Some("s".into()),
                        },
                        Part::Text { text: "x".into() },
                        Part::ToolCall {
                            id: "t1".into(),
                            name: "ls".into(),
                            input: json!({}),
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![Part::ToolResult {
                        call_id: "t1".into(),
                        content: vec![ResultContent::text("out")],
                        is_error: true,
                    }],
                },
            ],
            tools: vec![],
            max_tokens: 8000,
            temperature: Some(0.2),
            reasoning: true,
        };
        let b = request_body(&req);
        assert_eq!(b["system"], "sys");
        assert_eq!(b["messages"][0]["content"].as_array().unwrap().len(), 2);
        assert_eq!(b["messages"][1]["content"][0]["type"], "thinking");
        assert_eq!(b["messages"][1]["content"][2]["type"], "tool_use");
        assert_eq!(b["messages"][2]["content"][0]["tool_use_id"], "t1");
        assert_eq!(b["messages"][2]["content"][0]["is_error"], true);
        assert_eq!(b["thinking"]["budget_tokens"], 4000);
        assert!(
            b.get("temperature").is_none(),
            "thinking forbids temperature"
        );
    }
}
