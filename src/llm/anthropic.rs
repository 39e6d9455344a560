//! Anthropic Messages, streaming.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::sse::SseParser;
use super::transport::{self, Events};
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
    http_client,
};

pub use super::anthropic_request::request_body;

const API_VERSION: &str = "2023-06-01";
/// The name [`StreamEvent::ProviderData`] carries for this wire format.
pub const FORMAT: &str = "anthropic";

pub struct Anthropic {
    settings: ProviderSettings,
    client: reqwest::Client,
}

impl Anthropic {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let client = http_client()?;
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
        stream_with(req, &self.settings).await
    }
}

/// Sends a Messages request (from here or from Vertex) and decodes it.
pub(crate) async fn stream_with(
    req: reqwest::RequestBuilder,
    settings: &ProviderSettings,
) -> Result<EventStream, LlmError> {
    let resp = transport::send(req, settings).await?;
    transport::decode_response(
        resp,
        settings.idle_timeout,
        SseParser::default(),
        Decoder::default(),
    )
    .await
}

#[derive(Default)]
pub(crate) struct Decoder {
    usage: Usage,
    stop: Option<StopReason>,
}

fn stop_reason(r: &str) -> StopReason {
    match r {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

fn read_usage(into: &mut Usage, u: &Value) {
    if let Some(n) = u["input_tokens"].as_u64() {
        into.input_tokens = n;
    }
    if let Some(n) = u["cache_read_input_tokens"].as_u64() {
        into.cache_read_tokens = n;
    }
    if let Some(n) = u["cache_creation_input_tokens"].as_u64() {
        into.cache_write_tokens = n;
    }
    if let Some(n) = u["output_tokens"].as_u64() {
        into.output_tokens = n;
    }
}

/// What a stream `error` event (or an error body) means.
pub(crate) fn classify_error(err: &Value) -> LlmError {
    let message = err["message"]
        .as_str()
        .unwrap_or("unknown error")
        .to_string();
    match err["type"].as_str() {
        Some("overloaded_error") | Some("api_error") => LlmError::Server {
            status: 529,
            message,
        },
        _ => LlmError::from_stream_error(err),
    }
}

impl Decoder {
    fn block_start(&mut self, index: usize, block: &Value, out: &mut Events) {
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
            Some("redacted_thinking") => out.push(Ok(StreamEvent::ProviderData {
                format: FORMAT.to_string(),
                data: block.clone(),
            })),
            _ => {}
        }
    }

    fn block_delta(&mut self, index: usize, d: &Value, out: &mut Events) {
        let text = |k: &str| d[k].as_str().map(str::to_string);
        let ev = match d["type"].as_str() {
            Some("text_delta") => text("text").map(StreamEvent::TextDelta),
            Some("input_json_delta") => text("partial_json")
                .filter(|t| !t.is_empty())
                .map(|fragment| StreamEvent::ToolCallDelta { index, fragment }),
            Some("thinking_delta") => text("thinking").map(StreamEvent::ReasoningDelta),
            Some("signature_delta") => text("signature").map(StreamEvent::ReasoningSignature),
            _ => None,
        };
        out.extend(ev.map(Ok));
    }

    fn done(&mut self) -> Events {
        vec![Ok(StreamEvent::Done(
            self.stop.take().unwrap_or(StopReason::EndTurn),
        ))]
    }
}

impl transport::Decoder for Decoder {
    fn message(&mut self, event: &str, data: &str) -> Events {
        if data.trim().is_empty() {
            return Vec::new();
        }
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                return vec![Err(LlmError::Malformed(format!(
                    "a stream event was not JSON ({e}): {}",
                    data.chars().take(200).collect::<String>()
                )))];
            }
        };
        let kind = v["type"].as_str().unwrap_or(event);
        let index = v["index"].as_u64().unwrap_or(0) as usize;
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                read_usage(&mut self.usage, &v["message"]["usage"]);
                out.push(Ok(StreamEvent::Usage(self.usage)));
            }
            "content_block_start" => self.block_start(index, &v["content_block"], &mut out),
            "content_block_delta" => self.block_delta(index, &v["delta"], &mut out),
            "message_delta" => {
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    self.stop = Some(stop_reason(r));
                }
                if v["usage"].is_object() {
                    read_usage(&mut self.usage, &v["usage"]);
                    out.push(Ok(StreamEvent::Usage(self.usage)));
                }
            }
            "message_stop" => out.extend(self.done()),
            "error" => out.push(Err(classify_error(&v["error"]))),
            _ => {}
        }
        out
    }

    fn end(&mut self) -> Events {
        if self.stop.is_some() {
            self.done()
        } else {
            Vec::new()
        }
    }

    fn whole(&mut self, body: &Value) -> Events {
        if body["type"] == "error" {
            return vec![Err(classify_error(&body["error"]))];
        }
        let Some(blocks) = body["content"].as_array() else {
            return vec![Err(LlmError::Malformed(format!(
                "a JSON answer without content: {}",
                body.to_string().chars().take(200).collect::<String>()
            )))];
        };
        let mut out = Vec::new();
        read_usage(&mut self.usage, &body["usage"]);
        out.push(Ok(StreamEvent::Usage(self.usage)));
        for (index, block) in blocks.iter().enumerate() {
            match block["type"].as_str() {
                Some("thinking") => {
                    let t = block["thinking"].as_str().unwrap_or_default();
                    out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
                    if let Some(sig) = block["signature"].as_str() {
                        out.push(Ok(StreamEvent::ReasoningSignature(sig.to_string())));
                    }
                }
                Some("tool_use") => {
                    self.block_start(index, block, &mut out);
                    let input = block.get("input").cloned().unwrap_or(json!({}));
                    out.push(Ok(StreamEvent::ToolCallDelta {
                        index,
                        fragment: input.to_string(),
                    }));
                }
                _ => self.block_start(index, block, &mut out),
            }
        }
        if let Some(r) = body["stop_reason"].as_str() {
            self.stop = Some(stop_reason(r));
        }
        out.extend(self.done());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, Part, ResultContent, Role};
    use crate::llm::transport::Decoder as _;

    fn ev(kind: &str, data: Value) -> (String, String) {
        (kind.to_string(), data.to_string())
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
            .flat_map(|(k, v)| d.message(&k, &v))
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
        let (k, v) = ev(
            "error",
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        );
        let out = d.message(&k, &v);
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
        assert_eq!(b["system"][0]["text"], "sys");
        assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral");
        // Both user messages end with a breakpoint: the last two.
        assert_eq!(
            b["messages"][2]["content"][0]["cache_control"]["type"],
            "ephemeral"
        );
        assert_eq!(
            b["messages"][0]["content"][1]["cache_control"]["type"],
            "ephemeral"
        );
        assert!(
            b["messages"][0]["content"][0]
                .get("cache_control")
                .is_none()
        );
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
