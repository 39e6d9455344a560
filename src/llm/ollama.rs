//! Ollama's native `/api/chat` (NDJSON). Unlike its OpenAI-compatible
//! endpoint it takes `options.num_ctx`, which cairn sets from the model's
//! real context length (`/api/show`), so a long conversation is not cut
//! silently at Ollama's small default window.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::ndjson::NdjsonLines;
use super::stream::{self, Endpoint, KeyIn, Turn, WireFormat};
use super::transport::Events;
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
};
use crate::conversation::{Message, Part, ResultContent, Role};

pub struct Ollama {
    http: Endpoint,
    /// Model → context length, asked once per model.
    context: Mutex<HashMap<String, Option<u64>>>,
}

impl Ollama {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Ok(Ollama {
            http: Endpoint::new(settings)?,
            context: Mutex::new(HashMap::new()),
        })
    }

    /// The server root: a base URL written for the OpenAI-compatible
    /// endpoint (`…/v1`) still works.
    fn root(&self) -> &str {
        let base = self.http.base();
        base.strip_suffix("/v1").unwrap_or(base)
    }

    /// The model's context length from `/api/show`, `None` when the server
    /// does not say.
    async fn context_length(&self, model: &str) -> Option<u64> {
        if let Some(known) = self.context.lock().ok()?.get(model) {
            return *known;
        }
        let found = show(self.http.client().ok()?, self.root(), model).await;
        if let Ok(mut c) = self.context.lock() {
            c.insert(model.to_string(), found);
        }
        found
    }
}

async fn show(client: &reqwest::Client, root: &str, model: &str) -> Option<u64> {
    let resp = client
        .post(format!("{root}/api/show"))
        .json(&json!({"model": model}))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    let v: Value = resp.json().await.ok()?;
    context_length_of(&v)
}

/// `model_info` holds `<architecture>.context_length`.
fn context_length_of(show: &Value) -> Option<u64> {
    show["model_info"]
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}

#[async_trait]
impl Provider for Ollama {
    fn name(&self) -> &str {
        &self.http.settings.name
    }

    async fn limits(&self, model: &str) -> Option<super::server_limits::Limits> {
        match self.context_length(model).await {
            Some(n) => Some(super::server_limits::Limits {
                context_window: n,
                max_output: None,
                warning: None,
                source: "Ollama's /api/show".into(),
            }),
            None => super::server_limits::is_local(self.root())
                .then(super::server_limits::local_default),
        }
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let num_ctx = self.context_length(&request.model).await;
        let req = (self
            .http
            .client()?
            .post(format!("{}/api/chat", self.root())))
        .query(&self.http.settings.query)
        .json(&request_body(request, num_ctx));
        let req = stream::with_key(req, &self.http.settings, KeyIn::Bearer);
        stream::send::<Lines>(req, &self.http.settings, NdjsonLines::default()).await
    }
}

/// The JSON body of a request; `num_ctx` is the model's context length.
pub fn request_body(request: &Request, num_ctx: Option<u64>) -> Value {
    let names: HashMap<&str, &str> = request
        .messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|(id, name, _)| (id, name))
        .collect();
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for m in &request.messages {
        push_message(&mut messages, m, &names);
    }
    let mut options = json!({"num_predict": request.max_tokens});
    if let Some(n) = num_ctx {
        options["num_ctx"] = json!(n);
    }
    if let Some(t) = request.temperature {
        options["temperature"] = json!(t);
    }
    let mut body =
        json!({"model": request.model, "messages": messages, "stream": true, "options": options});
    if request.reasoning {
        // gpt-oss takes a level; other thinking models only on or off.
        body["think"] = match request.effort {
            Some(e) if request.model.contains("gpt-oss") => json!(e.three_level()),
            _ => json!(true),
        };
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
    }
    body
}

fn push_message(out: &mut Vec<Value>, m: &Message, names: &HashMap<&str, &str>) {
    let mut text = String::new();
    let mut images = Vec::new();
    let mut calls = Vec::new();
    let mut thinking = String::new();
    for p in &m.parts {
        match p {
            Part::Text { text: t } => {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(t);
            }
            Part::Reasoning { text: t, .. } => thinking.push_str(t),
            Part::Image { image } => images.push(json!(image.data)),
            Part::ToolCall { name, input, .. } => {
                calls.push(json!({"function": {"name": name, "arguments": input}}))
            }
            Part::ToolResult {
                call_id, content, ..
            } => {
                let mut msg = json!({"role": "tool", "content": crate::conversation::result_text(content),
                    "tool_name": names.get(call_id.as_str()).copied().unwrap_or_default()});
                let imgs: Vec<Value> = content
                    .iter()
                    .filter_map(|c| match c {
                        ResultContent::Image { image } => Some(json!(image.data)),
                        _ => None,
                    })
                    .collect();
                if !imgs.is_empty() {
                    msg["images"] = Value::Array(imgs);
                }
                out.push(msg);
            }
            Part::ProviderData { .. } => {}
            Part::WebSearch(_) | Part::Citations { .. } => {}
        }
    }
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    if text.is_empty() && images.is_empty() && calls.is_empty() {
        return;
    }
    let mut msg = json!({"role": role, "content": text});
    if !images.is_empty() {
        msg["images"] = Value::Array(images);
    }
    if !calls.is_empty() {
        msg["tool_calls"] = Value::Array(calls);
    }
    if !thinking.is_empty() && m.role == Role::Assistant {
        msg["thinking"] = json!(thinking);
    }
    out.push(msg);
}

/// Ollama's lines as the shared stream loop reads them.
#[derive(Default)]
pub(crate) struct Lines;

impl Lines {
    fn line(&mut self, v: &Value, turn: &mut Turn, out: &mut Events) {
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let err = match err {
                Value::String(s) => json!({"message": s}),
                other => other.clone(),
            };
            out.push(Err(LlmError::from_stream_error(&err)));
            return;
        }
        let m = &v["message"];
        if let Some(t) = m["thinking"].as_str().filter(|t| !t.is_empty()) {
            out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
        }
        if let Some(t) = m["content"].as_str().filter(|t| !t.is_empty()) {
            out.push(Ok(StreamEvent::TextDelta(t.to_string())));
        }
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let index = turn.next_index();
            let f = &call["function"];
            let id = call["id"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("ollama_call_{}", uuid::Uuid::new_v4().simple()));
            turn.start_call(index, &id, f["name"].as_str().unwrap_or_default(), out);
            let args = match &f["arguments"] {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            turn.fragment(index, args, out);
        }
        if v["done"] == true {
            let usage = Usage {
                input_tokens: v["prompt_eval_count"].as_u64().unwrap_or(0),
                output_tokens: v["eval_count"].as_u64().unwrap_or(0),
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            };
            turn.usage(usage, out);
            turn.stop = Some(match v["done_reason"].as_str() {
                Some("length") => StopReason::MaxTokens,
                _ if !turn.calls.is_empty() => StopReason::ToolUse,
                Some("stop") | None => StopReason::EndTurn,
                Some(other) => StopReason::Other(other.to_string()),
            });
            stream::finish::<Self>(turn, out);
        }
    }
}

impl WireFormat for Lines {
    const UNIT: &'static str = "a stream line";

    fn message(&mut self, _event: &str, v: &Value, turn: &mut Turn, out: &mut Events) {
        self.line(v, turn, out);
    }

    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events) {
        let mut v = body.clone();
        v["done"] = json!(true);
        self.line(&v, turn, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_length_comes_from_model_info() {
        let show =
            json!({"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}});
        assert_eq!(context_length_of(&show), Some(40960));
        assert_eq!(context_length_of(&json!({})), None);
    }
}
