//! The OpenAI Responses API (`/responses`), streaming: the only way to some
//! models (the `gpt-5*-codex` family) and the one that keeps a reasoning
//! model's reasoning between tool calls. Requests are not stored
//! (`store: false`); reasoning comes back encrypted and is sent back
//! unchanged with the calls it led to. Azure OpenAI serves the same API
//! (`…/openai/v1/responses`, key in `api-key`).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::sse::SseParser;
use super::transport::{self, Events};
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
    http_client,
};
use crate::conversation::{Message, Part, ResultContent, Role};

/// The name [`StreamEvent::ProviderData`] carries for this wire format.
pub const FORMAT: &str = "openai-responses";

pub struct Responses {
    settings: ProviderSettings,
    client: reqwest::Client,
}

impl Responses {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let client = http_client()?;
        Ok(Responses { settings, client })
    }

    fn url(&self) -> String {
        format!("{}/responses", self.settings.base_url.trim_end_matches('/'))
    }
}

#[async_trait]
impl Provider for Responses {
    fn name(&self) -> &str {
        &self.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let mut req = self
            .client
            .post(self.url())
            .query(&self.settings.query)
            .json(&request_body(request));
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

/// OpenAI's own API: Chat Completions, or Responses for the models the
/// catalogue marks as needing it (`responses_api = true`), chosen per
/// request so that switching models with `/model` picks the right one.
pub struct ChatOrResponses {
    chat: super::openai::OpenAi,
    responses: Responses,
}

impl ChatOrResponses {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Ok(ChatOrResponses {
            chat: super::openai::OpenAi::new(settings.clone())?,
            responses: Responses::new(settings)?,
        })
    }
}

#[async_trait]
impl Provider for ChatOrResponses {
    fn name(&self) -> &str {
        self.chat.name()
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        if super::ModelCatalog::global()
            .lookup(&request.model)
            .responses_api
        {
            self.responses.stream(request).await
        } else {
            self.chat.stream(request).await
        }
    }
}

/// The JSON body of a request.
pub fn request_body(request: &Request) -> Value {
    let mut input = Vec::new();
    for m in &request.messages {
        push_items(&mut input, m);
    }
    let mut body = json!({
        "model": request.model,
        "instructions": request.system,
        "input": input,
        "stream": true,
        "store": false,
        "max_output_tokens": request.max_tokens,
    });
    if request.reasoning {
        body["reasoning"] = json!({"effort": "medium", "summary": "auto"});
        body["include"] = json!(["reasoning.encrypted_content"]);
    } else if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                    "parameters": t.input_schema, "strict": false})
            })
            .collect();
        body["parallel_tool_calls"] = json!(true);
    }
    body
}

fn image_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

fn push_items(out: &mut Vec<Value>, m: &Message) {
    match m.role {
        Role::Assistant => {
            for p in &m.parts {
                match p {
                    // The reasoning item (with its encrypted content) goes
                    // back first; its id names an item that was never
                    // stored, so it is left out.
                    Part::ProviderData { format, data } if format == FORMAT => {
                        let mut item = data.clone();
                        if let Some(o) = item.as_object_mut() {
                            o.remove("id");
                            o.remove("status");
                        }
                        out.push(item);
                    }
                    Part::Text { text } if !text.is_empty() => out.push(json!({
                        "type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]})),
                    Part::ToolCall { id, name, input } => out.push(json!({
                        "type": "function_call", "call_id": id, "name": name,
                        "arguments": input.to_string()})),
                    _ => {}
                }
            }
        }
        Role::User => {
            let mut content = Vec::new();
            for p in &m.parts {
                match p {
                    Part::ToolResult {
                        call_id,
                        content: c,
                        ..
                    } => {
                        let text = crate::conversation::result_text(c);
                        out.push(json!({"type": "function_call_output", "call_id": call_id, "output": text}));
                        for r in c {
                            if let ResultContent::Image { image } = r {
                                content.push(json!({"type": "input_image",
                                    "image_url": image_url(&image.media_type, &image.data)}));
                            }
                        }
                    }
                    Part::Text { text } => {
                        content.push(json!({"type": "input_text", "text": text}))
                    }
                    Part::Image { image } => content.push(json!({"type": "input_image",
                        "image_url": image_url(&image.media_type, &image.data)})),
                    _ => {}
                }
            }
            if !content.is_empty() {
                out.push(json!({"type": "message", "role": "user", "content": content}));
            }
        }
    }
}

#[derive(Default)]
pub(crate) struct Decoder {
    has_calls: bool,
    refused: bool,
    done: bool,
}

fn usage(u: &Value) -> Usage {
    let input = u["input_tokens"].as_u64().unwrap_or(0);
    let cached = u
        .pointer("/input_tokens_details/cached_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Usage {
        input_tokens: input.saturating_sub(cached),
        output_tokens: u["output_tokens"].as_u64().unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

impl Decoder {
    fn item_added(&mut self, index: usize, item: &Value, out: &mut Events) {
        if item["type"] == "function_call" {
            self.has_calls = true;
            out.push(Ok(StreamEvent::ToolCallStart {
                index,
                id: item["call_id"].as_str().unwrap_or_default().to_string(),
                name: item["name"].as_str().unwrap_or_default().to_string(),
            }));
            if let Some(a) = item["arguments"].as_str().filter(|a| !a.is_empty()) {
                out.push(Ok(StreamEvent::ToolCallDelta {
                    index,
                    fragment: a.to_string(),
                }));
            }
        }
    }

    fn item_done(&mut self, item: &Value, out: &mut Events) {
        if item["type"] == "reasoning" {
            out.push(Ok(StreamEvent::ProviderData {
                format: FORMAT.to_string(),
                data: item.clone(),
            }));
        }
    }

    fn finish(&mut self, response: &Value, out: &mut Events) {
        if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
            out.push(Ok(StreamEvent::Usage(usage(u))));
        }
        let reason = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        let stop = match reason {
            Some("max_output_tokens") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_string()),
            None if self.refused => StopReason::Refusal,
            None if self.has_calls => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        self.done = true;
        out.push(Ok(StreamEvent::Done(stop)));
    }

    /// A whole output item of a non-streamed answer.
    fn whole_item(&mut self, index: usize, item: &Value, out: &mut Events) {
        match item["type"].as_str() {
            Some("message") => {
                for c in item["content"].as_array().into_iter().flatten() {
                    if let Some(t) = c["text"].as_str().or(c["refusal"].as_str()) {
                        self.refused |= c["type"] == "refusal";
                        out.push(Ok(StreamEvent::TextDelta(t.to_string())));
                    }
                }
            }
            Some("function_call") => self.item_added(index, item, out),
            Some("reasoning") => {
                for s in item["summary"].as_array().into_iter().flatten() {
                    if let Some(t) = s["text"].as_str() {
                        out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
                    }
                }
                self.item_done(item, out);
            }
            _ => {}
        }
    }
}

impl transport::Decoder for Decoder {
    fn message(&mut self, event: &str, data: &str) -> Events {
        if data.trim().is_empty() || self.done {
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
        let index = v["output_index"].as_u64().unwrap_or(0) as usize;
        let delta = || v["delta"].as_str().unwrap_or_default().to_string();
        let mut out = Vec::new();
        match kind {
            "response.output_item.added" => self.item_added(index, &v["item"], &mut out),
            "response.output_item.done" => self.item_done(&v["item"], &mut out),
            "response.output_text.delta" => out.push(Ok(StreamEvent::TextDelta(delta()))),
            "response.refusal.delta" => {
                self.refused = true;
                out.push(Ok(StreamEvent::TextDelta(delta())));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.push(Ok(StreamEvent::ReasoningDelta(delta())))
            }
            "response.reasoning_summary_part.added" if v["summary_index"].as_u64() > Some(0) => {
                out.push(Ok(StreamEvent::ReasoningDelta("\n\n".into())))
            }
            "response.function_call_arguments.delta" => out.push(Ok(StreamEvent::ToolCallDelta {
                index,
                fragment: delta(),
            })),
            "response.completed" | "response.incomplete" | "response.done" => {
                self.finish(&v["response"], &mut out)
            }
            "response.failed" => {
                let err = &v["response"]["error"];
                out.push(Err(LlmError::from_stream_error(err)));
            }
            "error" => {
                let err = v.get("error").filter(|e| e.is_object()).unwrap_or(&v);
                out.push(Err(LlmError::from_stream_error(err)));
            }
            _ => {}
        }
        out.retain(|e| {
            !matches!(e, Ok(StreamEvent::TextDelta(t) | StreamEvent::ReasoningDelta(t)) if t.is_empty())
        });
        out
    }

    fn whole(&mut self, body: &Value) -> Events {
        let mut out = Vec::new();
        for (i, item) in body["output"].as_array().into_iter().flatten().enumerate() {
            self.whole_item(i, item, &mut out);
        }
        self.finish(body, &mut out);
        out
    }
}
