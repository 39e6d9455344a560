//! OpenAI Chat Completions, streaming. Serves OpenAI and the many servers
//! that speak its format (Azure OpenAI, OpenRouter, Groq, DeepSeek, Gemini's
//! compatible endpoint, Ollama, LM Studio, llama.cpp, vLLM, LiteLLM).

use std::collections::HashSet;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

use super::sse::{self, SseEvent};
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
    http_client,
};
use crate::conversation::{Message, Part, ResultContent, Role};

pub struct OpenAi {
    settings: ProviderSettings,
    client: reqwest::Client,
}

impl OpenAi {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let client = http_client(settings.request_timeout)?;
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
        let mut state = Decoder::default();
        sse::send_and_decode(req, &self.settings.headers, move |ev| state.decode(ev)).await
    }
}

/// A transport error's whole chain, which says more than its top line.
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// Ends with an error if the stream stopped without saying it was done, so
/// a cut connection is noticed (and retried) rather than taken as the end.
pub(crate) fn ensure_done(
    inner: impl futures::Stream<Item = Result<StreamEvent, LlmError>> + Send + 'static,
) -> impl futures::Stream<Item = Result<StreamEvent, LlmError>> + Send {
    let tail = futures::stream::once(async { None });
    inner
        .map(Some)
        .chain(tail)
        .scan(false, |finished, item| {
            let out = match item {
                Some(Ok(ev)) => {
                    if matches!(ev, StreamEvent::Done(_)) {
                        *finished = true;
                    }
                    Some(Ok(ev))
                }
                Some(Err(e)) => {
                    *finished = true;
                    Some(Err(e))
                }
                None if !*finished => Some(Err(LlmError::Network(
                    "the connection closed before the response was complete".into(),
                ))),
                None => None,
            };
            futures::future::ready(Some(out))
        })
        .filter_map(futures::future::ready)
        .scan(false, |stopped, item| {
            // Nothing after the end (or the first error).
            if *stopped {
                return futures::future::ready(None);
            }
            if matches!(item, Ok(StreamEvent::Done(_)) | Err(_)) {
                *stopped = true;
            }
            futures::future::ready(Some(item))
        })
}

#[derive(Default)]
struct Decoder {
    started: HashSet<usize>,
    stop: Option<StopReason>,
    done: bool,
}

impl Decoder {
    fn decode(&mut self, ev: SseEvent) -> Vec<Result<StreamEvent, LlmError>> {
        let data = ev.data.trim();
        if data.is_empty() || self.done {
            return Vec::new();
        }
        if data == "[DONE]" {
            self.done = true;
            return vec![Ok(StreamEvent::Done(
                self.stop.clone().unwrap_or(StopReason::EndTurn),
            ))];
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
        if let Some(err) = v.get("error") {
            let status = err.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
            return vec![Err(LlmError::from_status(
                status.max(400),
                None,
                &json!({ "error": err }).to_string(),
            ))];
        }
        let mut out = Vec::new();
        if let Some(choice) = v.pointer("/choices/0") {
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = delta.get(key).and_then(Value::as_str)
                    && !t.is_empty()
                {
                    out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
                }
            }
            if let Some(t) = delta.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                out.push(Ok(StreamEvent::TextDelta(t.to_string())));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (pos, call) in calls.iter().enumerate() {
                    let index = call
                        .get("index")
                        .and_then(Value::as_u64)
                        .map(|i| i as usize)
                        .unwrap_or(pos);
                    if self.started.insert(index) {
                        out.push(Ok(StreamEvent::ToolCallStart {
                            index,
                            id: call["id"].as_str().unwrap_or_default().to_string(),
                            name: call
                                .pointer("/function/name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                        }));
                    }
                    if let Some(args) = call.pointer("/function/arguments") {
                        let fragment = match args {
                            Value::String(s) => s.clone(),
                            Value::Null => String::new(),
                            // Some servers send the arguments as an object.
                            other => other.to_string(),
                        };
                        if !fragment.is_empty() {
                            out.push(Ok(StreamEvent::ToolCallDelta { index, fragment }));
                        }
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.stop = Some(match reason {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    other => StopReason::Other(other.to_string()),
                });
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let prompt = u["prompt_tokens"].as_u64().unwrap_or(0);
            let cached = u
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            out.push(Ok(StreamEvent::Usage(Usage {
                input_tokens: prompt.saturating_sub(cached),
                output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            })));
        }
        out
    }
}

/// The JSON body of a request.
pub fn request_body(request: &Request, openai_host: bool) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for m in &request.messages {
        push_message(&mut messages, m);
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
    if let Some(t) = request.temperature {
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
    }
    body
}

fn image_url(media_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{data}")}})
}

fn push_message(out: &mut Vec<Value>, m: &Message) {
    match m.role {
        Role::Assistant => {
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
            }
            out.push(msg);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolSpec;

    fn ev(data: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: data.into(),
        }
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
            all.extend(d.decode(ev(chunk)));
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
    fn in_band_errors_are_classified() {
        let mut d = Decoder::default();
        let out = d.decode(ev(r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#));
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
