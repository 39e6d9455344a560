//! Anthropic Messages, streaming.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::anthropic_search::{self, ServerCall};
use super::sse::SseParser;
use super::stream::{self, Endpoint, KeyIn, Turn, WireFormat};
use super::transport::Events;
use super::{EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent};

pub use super::anthropic_request::{FORMAT, request_body};

const API_VERSION: &str = "2023-06-01";

pub struct Anthropic(Endpoint);

impl Anthropic {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Endpoint::new(settings).map(Anthropic)
    }

    fn url(&self) -> String {
        let base = self.0.base();
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
        &self.0.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let req = (self.0.client()?.post(self.url()))
            .query(&self.0.settings.query)
            .header("anthropic-version", API_VERSION)
            .json(&request_body(request));
        let req = stream::with_key(req, &self.0.settings, KeyIn::Header("x-api-key"));
        stream_with(req, &self.0.settings).await
    }

    fn native_search(&self, _model: &str) -> bool {
        true
    }
}

/// Sends a Messages request (from here or from Vertex) and decodes it.
pub(crate) async fn stream_with(
    req: reqwest::RequestBuilder,
    settings: &ProviderSettings,
) -> Result<EventStream, LlmError> {
    stream::send::<Messages>(req, settings, SseParser::default()).await
}

/// Anthropic Messages as the shared stream loop reads it.
#[derive(Default)]
pub(crate) struct Messages {
    /// The provider's own tool calls (`server_tool_use`) waiting for
    /// their results: the provider runs them, cairn only shows them.
    server: Vec<super::anthropic_search::ServerCall>,
}

/// The decoder the unit tests drive.
#[cfg(test)]
type Decoder = stream::Stream<Messages>;

fn stop_reason(r: &str) -> StopReason {
    match r {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        "pause_turn" => StopReason::Paused,
        other => StopReason::Other(other.to_string()),
    }
}

/// Adds what `u` says to the usage so far and reports the sum.
fn read_usage(turn: &mut Turn, u: &Value, out: &mut Events) {
    let mut into = turn.usage;
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
    turn.usage(into, out);
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

fn block_start(
    server: &mut Vec<ServerCall>,
    turn: &mut Turn,
    index: usize,
    block: &Value,
    out: &mut Events,
) {
    match block["type"].as_str() {
        Some("tool_use") => {
            let text = |k: &str| block[k].as_str().unwrap_or_default();
            turn.start_call(index, text("id"), text("name"), out);
        }
        // The provider's own tool: kept to show and send back, never a
        // call cairn runs.
        Some("server_tool_use") => server.push(ServerCall::new(index, block)),
        Some(kind) if kind.ends_with("_tool_result") => {
            if let Some(search) = anthropic_search::finish(server, block) {
                out.push(Ok(StreamEvent::WebSearch(search)));
            }
        }
        Some("text") => {
            if let Some(t) = block["text"].as_str().filter(|t| !t.is_empty()) {
                out.push(Ok(StreamEvent::TextDelta(t.to_string())));
            }
            anthropic_search::citations(&block["citations"], out);
        }
        Some("redacted_thinking") => out.push(Ok(StreamEvent::ProviderData {
            format: FORMAT.to_string(),
            data: block.clone(),
        })),
        _ => {}
    }
}

fn block_delta(
    server: &mut [ServerCall],
    turn: &mut Turn,
    index: usize,
    d: &Value,
    out: &mut Events,
) {
    let text = |k: &str| d[k].as_str().map(str::to_string);
    let ev = match d["type"].as_str() {
        Some("text_delta") => text("text").map(StreamEvent::TextDelta),
        Some("input_json_delta") => {
            let fragment = text("partial_json").filter(|t| !t.is_empty());
            match (fragment, server.iter_mut().find(|c| c.index == index)) {
                (Some(f), Some(call)) => call.args.push_str(&f),
                (Some(f), None) => turn.fragment(index, f, out),
                (None, _) => {}
            }
            None
        }
        Some("citations_delta") => {
            anthropic_search::citations(&json!([d["citation"]]), out);
            None
        }
        Some("thinking_delta") => text("thinking").map(StreamEvent::ReasoningDelta),
        Some("signature_delta") => text("signature").map(StreamEvent::ReasoningSignature),
        _ => None,
    };
    out.extend(ev.map(Ok));
}

impl WireFormat for Messages {
    const UNIT: &'static str = "a stream event";

    fn message(&mut self, event: &str, v: &Value, turn: &mut Turn, out: &mut Events) {
        let kind = v["type"].as_str().unwrap_or(event);
        let index = v["index"].as_u64().unwrap_or(0) as usize;
        match kind {
            "message_start" => read_usage(turn, &v["message"]["usage"], out),
            "content_block_start" => {
                block_start(&mut self.server, turn, index, &v["content_block"], out)
            }
            "content_block_delta" => block_delta(&mut self.server, turn, index, &v["delta"], out),
            "message_delta" => {
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    turn.stop = Some(stop_reason(r));
                }
                if v["usage"].is_object() {
                    read_usage(turn, &v["usage"], out);
                }
            }
            "message_stop" => {
                anthropic_search::unanswered(&mut self.server, out);
                stream::finish::<Self>(turn, out)
            }
            "error" => out.push(Err(classify_error(&v["error"]))),
            _ => {}
        }
    }

    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events) {
        if body["type"] == "error" {
            out.push(Err(classify_error(&body["error"])));
            return;
        }
        let Some(blocks) = body["content"].as_array() else {
            out.push(Err(LlmError::Malformed(format!(
                "a JSON answer without content: {}",
                stream::excerpt(&body.to_string())
            ))));
            return;
        };
        read_usage(turn, &body["usage"], out);
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
                    block_start(&mut self.server, turn, index, block, out);
                    let input = block.get("input").cloned().unwrap_or(json!({}));
                    turn.fragment(index, input.to_string(), out);
                }
                _ => block_start(&mut self.server, turn, index, block, out),
            }
        }
        anthropic_search::unanswered(&mut self.server, out);
        if let Some(r) = body["stop_reason"].as_str() {
            turn.stop = Some(stop_reason(r));
        }
        stream::finish::<Self>(turn, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, Part, ResultContent, Role};
    use crate::llm::Usage;
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
            effort: None,
            web_search: None,
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
