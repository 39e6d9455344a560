//! OpenAI Chat Completions, streaming. Serves OpenAI and the many servers
//! that speak its format (Azure OpenAI, OpenRouter, Groq, DeepSeek, LM
//! Studio, llama.cpp, vLLM, LiteLLM), including the ways they bend it:
//! tool-call deltas that repeat or omit `index`, streams that end after
//! `finish_reason` without `[DONE]`, whole JSON answers, string error codes.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::Value;

use super::sse::SseParser;
use super::stream::{self, Endpoint, KeyIn, Turn, WireFormat};
use super::transport::Events;
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
};

pub use super::openai_request::request_body;

pub struct OpenAi(Endpoint);

impl OpenAi {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Endpoint::new(settings).map(OpenAi)
    }

    /// OpenAI's own API wants `max_completion_tokens`; compatible servers
    /// mostly know only `max_tokens`.
    fn is_openai_host(&self) -> bool {
        self.0.settings.base_url.contains("api.openai.com")
    }
}

#[async_trait]
impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.0.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let mut body = request_body(request, self.is_openai_host());
        let wire = &self.0.settings.wire;
        if wire.no_stream {
            body["stream"] = serde_json::json!(false);
            if let Some(o) = body.as_object_mut() {
                o.remove("stream_options");
            }
        }
        if let Some(o) = body.as_object_mut() {
            o.extend(wire.extra_body.clone());
        }
        let url = format!("{}/chat/completions", self.0.base());
        let req = (self.0.client()?.post(url))
            .query(&self.0.settings.query)
            .json(&body);
        let req = stream::with_key(req, &self.0.settings, KeyIn::AzureOrBearer);
        stream::send::<Chat>(req, &self.0.settings, SseParser::default()).await
    }

    async fn limits(&self, model: &str) -> Option<super::server_limits::Limits> {
        let s = &self.0.settings;
        let key = s.api_key.as_deref().filter(|_| !s.azure);
        let found = super::server_limits::openai_compatible(
            self.0.client().ok()?,
            self.0.base(),
            key,
            model,
        )
        .await;
        found.or_else(|| {
            super::server_limits::is_local(&s.base_url).then(super::server_limits::local_default)
        })
    }
}

/// Chat Completions as the shared stream loop reads it.
#[derive(Default)]
pub(crate) struct Chat {
    /// The server's `index` → our call number.
    by_index: HashMap<u64, usize>,
    current: Option<usize>,
}

/// The decoder the unit tests drive.
#[cfg(test)]
type Decoder = stream::Stream<Chat>;

fn non_empty(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" | "end_turn" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" | "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// Usage in the OpenAI shape, with OpenAI's and DeepSeek's cache fields.
pub(crate) fn usage(u: &Value) -> Usage {
    let prompt = u["prompt_tokens"].as_u64().unwrap_or(0);
    let cached = u
        .pointer("/prompt_tokens_details/cached_tokens")
        .and_then(Value::as_u64)
        .or_else(|| u["prompt_cache_hit_tokens"].as_u64())
        .unwrap_or(0);
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

impl Chat {
    /// Which call a tool-call delta belongs to. A delta with a new non-empty
    /// `id`, or a name arriving after the current call's arguments are
    /// complete, starts a new call whatever its `index` says.
    fn call_for(&mut self, call: &Value, turn: &mut Turn, out: &mut Events) -> usize {
        let id = non_empty(call.get("id"));
        let name = non_empty(call.pointer("/function/name"));
        let index = call.get("index").and_then(Value::as_u64);
        let existing = match index {
            Some(i) => self.by_index.get(&i).copied(),
            None => self.current,
        };
        let starts_new = match existing {
            None => true,
            Some(n) => {
                let c = &turn.calls[n];
                match (id, name) {
                    (Some(id), _) => !c.id.is_empty() && c.id != id,
                    (None, Some(name)) => {
                        !c.args.is_empty()
                            && (c.name != name || serde_json::from_str::<Value>(&c.args).is_ok())
                    }
                    _ => false,
                }
            }
        };
        let n = if starts_new {
            let n = turn.next_index();
            turn.start_call(n, id.unwrap_or_default(), name.unwrap_or_default(), out);
            n
        } else {
            existing.unwrap_or(0)
        };
        if let Some(i) = index {
            self.by_index.insert(i, n);
        }
        self.current = Some(n);
        n
    }

    fn tool_calls(&mut self, calls: &[Value], turn: &mut Turn, out: &mut Events) {
        for call in calls {
            let n = self.call_for(call, turn, out);
            if let Some(args) = call.pointer("/function/arguments") {
                let fragment = match args {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    // Some servers send the arguments as an object.
                    other => other.to_string(),
                };
                if !fragment.is_empty() {
                    turn.fragment(n, fragment, out);
                }
            }
        }
    }

    fn choice(&mut self, choice: &Value, delta: &Value, turn: &mut Turn, out: &mut Events) {
        for key in ["reasoning_content", "reasoning"] {
            if let Some(t) = non_empty(delta.get(key)) {
                out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
            }
        }
        if let Some(t) = non_empty(delta.get("content")) {
            out.push(Ok(StreamEvent::TextDelta(t.to_string())));
        }
        if let Some(t) = non_empty(delta.get("refusal")) {
            out.push(Ok(StreamEvent::TextDelta(t.to_string())));
            turn.stop = Some(StopReason::Refusal);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            self.tool_calls(calls, turn, out);
        }
        if let Some(reason) = non_empty(choice.get("finish_reason"))
            && turn.stop != Some(StopReason::Refusal)
        {
            turn.stop = Some(stop_reason(reason));
        }
    }
}

impl WireFormat for Chat {
    const UNIT: &'static str = "a stream chunk";
    // Some servers say `stop` after tool calls.
    const TRUSTS_STOP_AFTER_CALLS: bool = false;

    fn is_end_marker(data: &str) -> bool {
        data == "[DONE]"
    }

    fn message(&mut self, _event: &str, v: &Value, turn: &mut Turn, out: &mut Events) {
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            out.push(Err(LlmError::from_stream_error(err)));
            return;
        }
        if let Some(choice) = v.pointer("/choices/0") {
            self.choice(choice, &choice["delta"], turn, out);
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            turn.usage(usage(u), out);
        }
    }

    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events) {
        if let Some(choice) = body.pointer("/choices/0") {
            let message = choice.get("message").unwrap_or(&choice["delta"]);
            self.choice(choice, message, turn, out);
        }
        if let Some(u) = body.get("usage").filter(|u| u.is_object()) {
            turn.usage(usage(u), out);
        }
        if out.is_empty() {
            out.push(Err(LlmError::Malformed(format!(
                "a JSON answer without choices: {}",
                stream::excerpt(&body.to_string())
            ))));
            return;
        }
        stream::finish::<Self>(turn, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, Part, ResultContent, Role};
    use crate::llm::ToolSpec;
    use crate::llm::transport::Decoder as _;
    use serde_json::json;

    fn ev(data: &str) -> &str {
        data
    }

    #[test]
    fn decodes_text_reasoning_tool_fragments_usage_and_done() {
        let mut d = Decoder::default();
        let mut all = Vec::new();
        for chunk in [
            r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"delta":{"reasoning_content":"hmm"}}]}"#,
            r#"{"choices":[{"delta":{"content":"Hi"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"view","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":100}}}"#,
            "[DONE]",
        ] {
            all.extend(d.message("", ev(chunk)));
        }
        let all: Vec<StreamEvent> = all.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            all,
            vec![
                StreamEvent::ReasoningDelta("hmm".into()),
                StreamEvent::TextDelta("Hi".into()),
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "c1".into(),
                    name: "view".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    fragment: "{\"file_".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    fragment: "path\":\"a\"}".into()
                },
                StreamEvent::Usage(Usage {
                    input_tokens: 20,
                    output_tokens: 9,
                    cache_read_tokens: 100,
                    cache_write_tokens: 0
                }),
                StreamEvent::Done(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn deepseek_cache_hit_fields_are_read() {
        let u = usage(&json!({"prompt_tokens": 1000, "completion_tokens": 20,
            "prompt_cache_hit_tokens": 900, "prompt_cache_miss_tokens": 100}));
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.output_tokens),
            (100, 900, 20)
        );
    }

    #[test]
    fn in_band_errors_are_classified() {
        let mut d = Decoder::default();
        let out = d.message("", ev(r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#));
        assert!(matches!(out[0], Err(LlmError::ContextLength { .. })));
    }

    #[test]
    fn body_has_system_tools_and_tool_messages() {
        let req = Request {
            model: "m".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    parts: vec![Part::ToolCall {
                        id: "c1".into(),
                        name: "view".into(),
                        input: json!({"file_path": "a"}),
                    }],
                },
                Message {
                    role: Role::User,
                    parts: vec![Part::ToolResult {
                        call_id: "c1".into(),
                        content: vec![ResultContent::text("body")],
                        is_error: false,
                    }],
                },
            ],
            tools: vec![ToolSpec {
                name: "view".into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 100,
            temperature: None,
            reasoning: false,
            effort: None,
            web_search: None,
        };
        let b = request_body(&req, false);
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(b["messages"][1], json!({"role": "user", "content": "hi"}));
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"file_path\":\"a\"}"
        );
        assert_eq!(
            b["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "body"})
        );
        assert_eq!(b["tools"][0]["function"]["name"], "view");
        assert_eq!(b["max_tokens"], 100);
        assert!(
            request_body(&req, true)
                .get("max_completion_tokens")
                .is_some()
        );
    }
}
