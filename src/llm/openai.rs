//! OpenAI Chat Completions, streaming. Serves OpenAI and the many servers
//! that speak its format (Azure OpenAI, OpenRouter, Groq, DeepSeek, LM
//! Studio, llama.cpp, vLLM, LiteLLM), including the ways they bend it:
//! tool-call deltas that repeat or omit `index`, streams that end after
//! `finish_reason` without `[DONE]`, whole JSON answers, string error codes.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::Value;

use super::sse::SseParser;
use super::transport::{self, Events};
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
    http_client,
};

pub use super::openai_request::request_body;

pub struct OpenAi {
    settings: ProviderSettings,
    client: reqwest::Client,
}

impl OpenAi {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let client = http_client()?;
        Ok(OpenAi { settings, client })
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.settings.base_url.trim_end_matches('/')
        )
    }

    /// OpenAI's own API wants `max_completion_tokens`; compatible servers
    /// mostly know only `max_tokens`.
    fn is_openai_host(&self) -> bool {
        self.settings.base_url.contains("api.openai.com")
    }
}

#[async_trait]
impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let body = request_body(request, self.is_openai_host());
        let mut req = self
            .client
            .post(self.url())
            .query(&self.settings.query)
            .json(&body);
        if let Some(key) = &self.settings.api_key {
            req = if self.settings.azure {
                req.header("api-key", key)
            } else {
                req.bearer_auth(key)
            };
        }
        let resp = transport::send(req, &self.settings).await?;
        transport::decode_response(
            resp,
            self.settings.idle_timeout,
            SseParser::default(),
            Decoder::default(),
        )
        .await
    }
}

/// One tool call of the response as it arrives.
#[derive(Default)]
struct Call {
    id: String,
    name: String,
    args: String,
}

#[derive(Default)]
pub(crate) struct Decoder {
    calls: Vec<Call>,
    /// The server's `index` → our call number.
    by_index: HashMap<u64, usize>,
    current: Option<usize>,
    stop: Option<StopReason>,
    done: bool,
}

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

impl Decoder {
    /// Which call a tool-call delta belongs to. A delta with a new non-empty
    /// `id`, or a name arriving after the current call's arguments are
    /// complete, starts a new call whatever its `index` says.
    fn call_for(&mut self, call: &Value, out: &mut Events) -> usize {
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
                let c = &self.calls[n];
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
            self.calls.push(Call {
                id: id.unwrap_or_default().to_string(),
                name: name.unwrap_or_default().to_string(),
                args: String::new(),
            });
            let n = self.calls.len() - 1;
            out.push(Ok(StreamEvent::ToolCallStart {
                index: n,
                id: id.unwrap_or_default().to_string(),
                name: name.unwrap_or_default().to_string(),
            }));
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

    fn tool_calls(&mut self, calls: &[Value], out: &mut Events) {
        for call in calls {
            let n = self.call_for(call, out);
            if let Some(args) = call.pointer("/function/arguments") {
                let fragment = match args {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    // Some servers send the arguments as an object.
                    other => other.to_string(),
                };
                if !fragment.is_empty() {
                    self.calls[n].args.push_str(&fragment);
                    out.push(Ok(StreamEvent::ToolCallDelta { index: n, fragment }));
                }
            }
        }
    }

    fn choice(&mut self, choice: &Value, delta: &Value, out: &mut Events) {
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
            self.stop = Some(StopReason::Refusal);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            self.tool_calls(calls, out);
        }
        if let Some(reason) = non_empty(choice.get("finish_reason"))
            && self.stop != Some(StopReason::Refusal)
        {
            self.stop = Some(stop_reason(reason));
        }
    }

    fn done(&mut self) -> Events {
        if self.done {
            return Vec::new();
        }
        self.done = true;
        let stop = match self.stop.take() {
            // Some servers say `stop` after tool calls.
            Some(StopReason::EndTurn) | None if !self.calls.is_empty() => StopReason::ToolUse,
            Some(s) => s,
            None => StopReason::EndTurn,
        };
        vec![Ok(StreamEvent::Done(stop))]
    }
}

impl transport::Decoder for Decoder {
    fn message(&mut self, _event: &str, data: &str) -> Events {
        let data = data.trim();
        if data.is_empty() || self.done {
            return Vec::new();
        }
        if data == "[DONE]" {
            return self.done();
        }
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                return vec![Err(LlmError::Malformed(format!(
                    "a stream chunk was not JSON ({e}): {}",
                    data.chars().take(200).collect::<String>()
                )))];
            }
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return vec![Err(LlmError::from_stream_error(err))];
        }
        let mut out = Vec::new();
        if let Some(choice) = v.pointer("/choices/0") {
            self.choice(choice, &choice["delta"], &mut out);
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            out.push(Ok(StreamEvent::Usage(usage(u))));
        }
        out
    }

    /// A stream that ends after `finish_reason` without `[DONE]` is
    /// complete: the answer is all there.
    fn end(&mut self) -> Events {
        if self.stop.is_some() {
            self.done()
        } else {
            Vec::new()
        }
    }

    fn whole(&mut self, body: &Value) -> Events {
        let mut out = Vec::new();
        if let Some(choice) = body.pointer("/choices/0") {
            let message = choice.get("message").unwrap_or(&choice["delta"]);
            self.choice(choice, message, &mut out);
        }
        if let Some(u) = body.get("usage").filter(|u| u.is_object()) {
            out.push(Ok(StreamEvent::Usage(usage(u))));
        }
        if out.is_empty() {
            return vec![Err(LlmError::Malformed(format!(
                "a JSON answer without choices: {}",
                body.to_string().chars().take(200).collect::<String>()
            )))];
        }
        out.extend(self.done());
        out
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
