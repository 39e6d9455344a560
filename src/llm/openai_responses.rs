//! The OpenAI Responses API (`/responses`), streaming: the only way to some
//! models (the `gpt-5*-codex` family) and the one that keeps a reasoning
//! model's reasoning between tool calls. Requests are not stored
//! (`store: false`); reasoning comes back encrypted and is sent back
//! unchanged with the calls it led to. Azure OpenAI serves the same API
//! (`…/openai/v1/responses`, key in `api-key`).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::sse::SseParser;
use super::stream::{self, Endpoint, KeyIn, Turn, WireFormat};
use super::transport::Events;
use super::{
    EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent, Usage,
};
use crate::conversation::{Message, Part, ResultContent, Role, Source, WebSearch};

/// The name [`StreamEvent::ProviderData`] carries for this wire format.
pub const FORMAT: &str = "openai-responses";

pub struct Responses(Endpoint);

impl Responses {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Endpoint::new(settings).map(Responses)
    }
}

#[async_trait]
impl Provider for Responses {
    fn name(&self) -> &str {
        &self.0.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let url = format!("{}/responses", self.0.base());
        let req = (self.0.client()?.post(url))
            .query(&self.0.settings.query)
            .json(&request_body(request));
        let req = stream::with_key(req, &self.0.settings, KeyIn::AzureOrBearer);
        stream::send::<ResponseEvents>(req, &self.0.settings, SseParser::default()).await
    }

    fn native_search(&self, _model: &str) -> bool {
        true
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

    /// Chat Completions has no search tool for most models: only the
    /// requests that go to Responses offer it.
    fn native_search(&self, model: &str) -> bool {
        super::ModelCatalog::global().lookup(model).responses_api
    }
}

/// The JSON body of a request.
pub fn request_body(request: &Request) -> Value {
    let mut input = Vec::new();
    for m in &request.messages {
        push_items(&mut input, m, request.web_search.is_some());
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
        let effort = request.effort.map_or("medium", |e| e.as_str());
        body["reasoning"] = json!({"effort": effort, "summary": "auto"});
        body["include"] = json!(["reasoning.encrypted_content"]);
    } else if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "name": t.name, "description": t.description,
                "parameters": t.input_schema, "strict": false})
        })
        .collect();
    if !tools.is_empty() {
        body["parallel_tool_calls"] = json!(true);
    }
    if request.web_search.is_some() {
        tools.push(json!({"type": "web_search"}));
        // Every page a search read, not only the ones the text cites.
        let mut include = body["include"].as_array().cloned().unwrap_or_default();
        include.push(json!("web_search_call.action.sources"));
        body["include"] = Value::Array(include);
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    body
}

/// A provider item sent back as it came, without the id of an item that
/// was never stored (`store: false`).
fn unstored(data: &Value, drop_status: bool) -> Value {
    let mut item = data.clone();
    if let Some(o) = item.as_object_mut() {
        o.remove("id");
        if drop_status {
            o.remove("status");
        }
    }
    item
}

fn image_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// `searching`: the request offers the search, so earlier search calls go
/// back as items; otherwise as text saying what they found.
fn push_items(out: &mut Vec<Value>, m: &Message, searching: bool) {
    match m.role {
        Role::Assistant => {
            for p in &m.parts {
                match p {
                    // The reasoning item (with its encrypted content) goes
                    // back first; its id names an item that was never
                    // stored, so it is left out.
                    Part::ProviderData { format, data } if format == FORMAT => {
                        out.push(unstored(data, true));
                    }
                    // The search call goes back where it was, after the
                    // reasoning that led to it.
                    Part::WebSearch(search) if search.format == FORMAT && searching => {
                        out.extend(search.wire.iter().map(|w| unstored(w, false)));
                    }
                    Part::WebSearch(search) => out.push(json!({
                        "type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": search.text()}]})),
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

/// The Responses API as the shared stream loop reads it.
#[derive(Default)]
pub(crate) struct ResponseEvents {
    refused: bool,
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

fn item_added(turn: &mut Turn, index: usize, item: &Value, out: &mut Events) {
    if item["type"] == "function_call" {
        let text = |k: &str| item[k].as_str().unwrap_or_default();
        turn.start_call(index, text("call_id"), text("name"), out);
        if let Some(a) = item["arguments"].as_str().filter(|a| !a.is_empty()) {
            turn.fragment(index, a.to_string(), out);
        }
    }
}

fn item_done(item: &Value, out: &mut Events) {
    match item["type"].as_str() {
        Some("reasoning") => out.push(Ok(StreamEvent::ProviderData {
            format: FORMAT.to_string(),
            data: item.clone(),
        })),
        Some("web_search_call") => out.push(Ok(StreamEvent::WebSearch(web_search(item)))),
        Some("message") => {
            for c in item["content"].as_array().into_iter().flatten() {
                annotations(&c["annotations"], out);
            }
        }
        _ => {}
    }
}

/// A `web_search_call` item: what it searched (or opened) and the pages
/// it read.
fn web_search(item: &Value) -> WebSearch {
    let action = &item["action"];
    let text = |k: &str| action[k].as_str().unwrap_or_default().to_string();
    let query = match action["type"].as_str() {
        Some("open_page") => format!("open {}", text("url")),
        Some("find") | Some("find_in_page") => {
            format!("find \"{}\" in {}", text("pattern"), text("url"))
        }
        _ => text("query"),
    };
    let mut queries: Vec<String> = vec![query];
    for q in action["queries"].as_array().into_iter().flatten() {
        if let Some(q) = q.as_str().filter(|q| !queries.iter().any(|have| have == q)) {
            queries.push(q.to_string());
        }
    }
    queries.retain(|q| !q.is_empty());
    let mut sources = Vec::new();
    for s in action["sources"].as_array().into_iter().flatten() {
        let source = Source {
            title: s["title"].as_str().unwrap_or_default().to_string(),
            url: s["url"].as_str().unwrap_or_default().to_string(),
        };
        Source::add_unique(&mut sources, source);
    }
    let status = item["status"].as_str().unwrap_or("completed");
    WebSearch {
        id: item["id"].as_str().unwrap_or_default().to_string(),
        queries,
        sources,
        error: (status == "failed").then(|| status.to_string()),
        format: FORMAT.to_string(),
        wire: vec![item.clone()],
    }
}

/// The `url_citation` annotations of a piece of output text.
fn annotations(list: &Value, out: &mut Events) {
    for a in list.as_array().into_iter().flatten() {
        annotation(a, out);
    }
}

fn annotation(a: &Value, out: &mut Events) {
    if a["type"] != "url_citation" {
        return;
    }
    if let Some(url) = a["url"].as_str().filter(|u| !u.is_empty()) {
        out.push(Ok(StreamEvent::Citation(Source {
            title: a["title"].as_str().unwrap_or_default().to_string(),
            url: url.to_string(),
        })));
    }
}

impl ResponseEvents {
    fn finish(&mut self, response: &Value, turn: &mut Turn, out: &mut Events) {
        if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
            turn.usage(usage(u), out);
        }
        let reason = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        turn.stop = Some(match reason {
            Some("max_output_tokens") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_string()),
            None if self.refused => StopReason::Refusal,
            None if !turn.calls.is_empty() => StopReason::ToolUse,
            None => StopReason::EndTurn,
        });
        stream::finish::<Self>(turn, out);
    }

    /// A whole output item of a non-streamed answer.
    fn whole_item(&mut self, index: usize, item: &Value, turn: &mut Turn, out: &mut Events) {
        match item["type"].as_str() {
            Some("message") => {
                for c in item["content"].as_array().into_iter().flatten() {
                    if let Some(t) = c["text"].as_str().or(c["refusal"].as_str()) {
                        self.refused |= c["type"] == "refusal";
                        out.push(Ok(StreamEvent::TextDelta(t.to_string())));
                    }
                }
                item_done(item, out);
            }
            Some("web_search_call") => item_done(item, out),
            Some("function_call") => item_added(turn, index, item, out),
            Some("reasoning") => {
                for s in item["summary"].as_array().into_iter().flatten() {
                    if let Some(t) = s["text"].as_str() {
                        out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
                    }
                }
                item_done(item, out);
            }
            _ => {}
        }
    }
}

impl WireFormat for ResponseEvents {
    const UNIT: &'static str = "a stream event";

    fn message(&mut self, event: &str, v: &Value, turn: &mut Turn, out: &mut Events) {
        let kind = v["type"].as_str().unwrap_or(event);
        let index = v["output_index"].as_u64().unwrap_or(0) as usize;
        let delta = || v["delta"].as_str().unwrap_or_default().to_string();
        let mut text = |ev: StreamEvent| {
            if !matches!(&ev, StreamEvent::TextDelta(t) | StreamEvent::ReasoningDelta(t) if t.is_empty())
            {
                out.push(Ok(ev));
            }
        };
        match kind {
            "response.output_text.delta" => return text(StreamEvent::TextDelta(delta())),
            "response.refusal.delta" => {
                self.refused = true;
                return text(StreamEvent::TextDelta(delta()));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                return text(StreamEvent::ReasoningDelta(delta()));
            }
            "response.reasoning_summary_part.added" if v["summary_index"].as_u64() > Some(0) => {
                return text(StreamEvent::ReasoningDelta("\n\n".into()));
            }
            _ => {}
        }
        match kind {
            "response.output_item.added" => item_added(turn, index, &v["item"], out),
            "response.output_item.done" => item_done(&v["item"], out),
            "response.function_call_arguments.delta" => turn.fragment(index, delta(), out),
            "response.output_text.annotation.added" => annotation(&v["annotation"], out),
            "response.completed" | "response.incomplete" | "response.done" => {
                self.finish(&v["response"], turn, out)
            }
            "response.failed" => {
                let err = &v["response"]["error"];
                out.push(Err(LlmError::from_stream_error(err)));
            }
            "error" => {
                let err = v.get("error").filter(|e| e.is_object()).unwrap_or(v);
                out.push(Err(LlmError::from_stream_error(err)));
            }
            _ => {}
        }
    }

    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events) {
        for (i, item) in body["output"].as_array().into_iter().flatten().enumerate() {
            self.whole_item(i, item, turn, out);
        }
        self.finish(body, turn, out);
    }
}
