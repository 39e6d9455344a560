//! Gemini's native `streamGenerateContent` (SSE): function calls and their
//! responses, thought parts, thought signatures passed back, and
//! `usageMetadata`. Vertex AI serves the same format for Gemini models.

use std::collections::HashMap;

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
pub const FORMAT: &str = "gemini";

pub struct Gemini(Endpoint);

impl Gemini {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Endpoint::new(settings).map(Gemini)
    }

    fn url(&self, model: &str) -> String {
        // A base URL written for the OpenAI-compatible endpoint still works.
        let base = self.0.base();
        let base = base.strip_suffix("/openai").unwrap_or(base);
        let model = model.strip_prefix("models/").unwrap_or(model);
        format!("{base}/models/{model}:streamGenerateContent")
    }
}

#[async_trait]
impl Provider for Gemini {
    fn name(&self) -> &str {
        &self.0.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let req = (self.0.client()?.post(self.url(&request.model)))
            .query(&[("alt", "sse")])
            .query(&self.0.settings.query)
            .json(&request_body(request));
        let req = stream::with_key(req, &self.0.settings, KeyIn::Header("x-goog-api-key"));
        stream_with(req, &self.0.settings).await
    }

    fn native_search(&self, _model: &str) -> bool {
        true
    }

    fn search_beside_tools(&self, _model: &str) -> bool {
        false
    }
}

/// Sends a Gemini request (from here or from Vertex) and decodes it.
pub(crate) async fn stream_with(
    req: reqwest::RequestBuilder,
    settings: &ProviderSettings,
) -> Result<EventStream, LlmError> {
    stream::send::<Chunks>(req, settings, SseParser::default()).await
}

/// The JSON body of a request.
pub fn request_body(request: &Request) -> Value {
    let names = call_names(&request.messages);
    let contents: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|m| content(m, &names))
        .collect();
    let mut generation = json!({"maxOutputTokens": request.max_tokens});
    if request.reasoning {
        generation["thinkingConfig"] = thinking_config(request);
    }
    if let Some(t) = request.temperature {
        generation["temperature"] = json!(t);
    }
    let mut body = json!({"contents": contents, "generationConfig": generation});
    if !request.system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
    }
    if !request.tools.is_empty() {
        let decls: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.input_schema}))
            .collect();
        body["tools"] = json!([{"functionDeclarations": decls}]);
    } else if request.web_search.is_some() {
        // Google Search beside function declarations needs a combination
        // mode cairn does not speak: grounding goes with tool-less
        // requests (chat mode, and the agent's grounded `web_search`).
        body["tools"] = json!([{"google_search": {}}]);
    }
    body
}

/// Thoughts shown, and the effort as Gemini 3's `thinkingLevel` (low or
/// high) or Gemini 2.5's `thinkingBudget` in tokens.
fn thinking_config(request: &Request) -> Value {
    let mut config = json!({"includeThoughts": true});
    match request.effort {
        Some(e) if request.model.contains("gemini-3") => {
            let level = if e <= crate::config::effort::Effort::Low {
                "low"
            } else {
                "high"
            };
            config["thinkingLevel"] = json!(level);
        }
        Some(e) => config["thinkingBudget"] = json!(e.budget_tokens().min(request.max_tokens)),
        None => {}
    }
    config
}

/// Call id → tool name: a function response must name its function.
fn call_names(messages: &[Message]) -> HashMap<String, String> {
    messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|(id, name, _)| (id.to_string(), name.to_string()))
        .collect()
}

fn inline(media_type: &str, data: &str) -> Value {
    json!({"inlineData": {"mimeType": media_type, "data": data}})
}

fn content(m: &Message, names: &HashMap<String, String>) -> Option<Value> {
    let mut parts = Vec::new();
    let mut signatures: HashMap<String, String> = HashMap::new();
    let mut loose_signature = None;
    for p in &m.parts {
        if let Part::ProviderData { format, data } = p
            && format == FORMAT
            && let Some(sig) = data["thoughtSignature"].as_str()
        {
            match data["call_id"].as_str() {
                Some(id) => {
                    signatures.insert(id.to_string(), sig.to_string());
                }
                None => loose_signature = Some(sig.to_string()),
            }
        }
    }
    for p in &m.parts {
        match p {
            Part::Text { text } if !text.is_empty() => parts.push(json!({"text": text})),
            Part::Image { image } => parts.push(inline(&image.media_type, &image.data)),
            Part::ToolCall { id, name, input } => {
                let mut call = json!({"name": name, "args": input});
                if !id.starts_with(GENERATED_ID) {
                    call["id"] = json!(id);
                }
                let mut part = json!({"functionCall": call});
                if let Some(sig) = signatures.get(id) {
                    part["thoughtSignature"] = json!(sig);
                }
                parts.push(part);
            }
            Part::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let text = crate::conversation::result_text(content);
                let key = if *is_error { "error" } else { "content" };
                let mut resp = json!({
                    "name": names.get(call_id).cloned().unwrap_or_default(),
                    "response": {key: text},
                });
                if !call_id.starts_with(GENERATED_ID) {
                    resp["id"] = json!(call_id);
                }
                parts.push(json!({"functionResponse": resp}));
                for c in content {
                    if let ResultContent::Image { image } = c {
                        parts.push(inline(&image.media_type, &image.data));
                    }
                }
            }
            _ => {}
        }
    }
    if let (Some(sig), Some(first)) = (loose_signature, parts.first_mut()) {
        first["thoughtSignature"] = json!(sig);
    }
    if parts.is_empty() {
        return None;
    }
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "model",
    };
    Some(json!({"role": role, "parts": parts}))
}

/// Gemini's calls may come without ids; cairn names them, and does not
/// send those names back.
const GENERATED_ID: &str = "gemini_call_";

/// Gemini's chunks as the shared stream loop reads them.
#[derive(Default)]
pub(crate) struct Chunks {
    /// The grounding already reported: later chunks repeat it.
    grounded: Option<Value>,
}

fn usage(u: &Value) -> Usage {
    let prompt = u["promptTokenCount"].as_u64().unwrap_or(0);
    let cached = u["cachedContentTokenCount"].as_u64().unwrap_or(0);
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: u["candidatesTokenCount"].as_u64().unwrap_or(0)
            + u["thoughtsTokenCount"].as_u64().unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

fn stop_reason(r: &str) -> StopReason {
    match r {
        "STOP" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            StopReason::Refusal
        }
        other => StopReason::Other(other.to_lowercase()),
    }
}

fn signature(data: Value) -> Result<StreamEvent, LlmError> {
    Ok(StreamEvent::ProviderData {
        format: FORMAT.into(),
        data,
    })
}

fn part(turn: &mut Turn, p: &Value, out: &mut Events) {
    if let Some(call) = p.get("functionCall") {
        let index = turn.next_index();
        let id = call["id"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("{GENERATED_ID}{index}_{}", uuid::Uuid::new_v4().simple()));
        let name = call["name"].as_str().unwrap_or_default();
        turn.start_call(index, &id, name, out);
        let args = call.get("args").cloned().unwrap_or(json!({}));
        turn.fragment(index, args.to_string(), out);
        if let Some(sig) = p["thoughtSignature"].as_str() {
            out.push(signature(json!({"call_id": id, "thoughtSignature": sig})));
        }
        return;
    }
    if let Some(sig) = p["thoughtSignature"].as_str() {
        out.push(signature(json!({"thoughtSignature": sig})));
    }
    if let Some(t) = p["text"].as_str().filter(|t| !t.is_empty()) {
        out.push(Ok(if p["thought"] == true {
            StreamEvent::ReasoningDelta(t.to_string())
        } else {
            StreamEvent::TextDelta(t.to_string())
        }));
    }
}

/// A candidate's `groundingMetadata`: the searches Google ran and the
/// pages the answer rests on, reported once however often it repeats.
fn grounding(seen: &mut Option<Value>, meta: &Value, out: &mut Events) {
    if !meta.is_object() || seen.as_ref() == Some(meta) {
        return;
    }
    *seen = Some(meta.clone());
    let queries: Vec<String> = meta["webSearchQueries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| q.as_str().map(str::to_string))
        .collect();
    let chunks: Vec<Source> = meta["groundingChunks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| Source {
            title: c["web"]["title"].as_str().unwrap_or_default().to_string(),
            url: c["web"]["uri"].as_str().unwrap_or_default().to_string(),
        })
        .collect();
    if queries.is_empty() && chunks.is_empty() {
        return;
    }
    let mut sources = Vec::new();
    for s in &chunks {
        Source::add_unique(&mut sources, s.clone());
    }
    out.push(Ok(StreamEvent::WebSearch(WebSearch {
        id: String::new(),
        queries,
        sources,
        error: None,
        format: FORMAT.to_string(),
        wire: Vec::new(),
    })));
    // The pages the answer's sentences rest on, in the order cited.
    for support in meta["groundingSupports"].as_array().into_iter().flatten() {
        for i in support["groundingChunkIndices"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let chunk = i.as_u64().and_then(|i| chunks.get(i as usize));
            if let Some(s) = chunk.filter(|s| !s.url.is_empty()) {
                out.push(Ok(StreamEvent::Citation(s.clone())));
            }
        }
    }
}

fn chunk(grounded: &mut Option<Value>, turn: &mut Turn, v: &Value, out: &mut Events) {
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        out.push(Err(LlmError::from_stream_error(err)));
        return;
    }
    if let Some(reason) = v
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
    {
        tracing::warn!(reason, "gemini blocked the prompt");
        turn.stop = Some(StopReason::Refusal);
    }
    if let Some(c) = v.pointer("/candidates/0") {
        for p in c
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            part(turn, p, out);
        }
        if let Some(r) = c["finishReason"].as_str() {
            turn.stop = Some(stop_reason(r));
        }
        grounding(grounded, &c["groundingMetadata"], out);
    }
    if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
        turn.usage(usage(u), out);
    }
}

/// Gemini's stream has no end marker: it ends after the chunk that gives
/// the finish reason (the shared loop's end).
impl WireFormat for Chunks {
    const UNIT: &'static str = "a stream chunk";
    const TRUSTS_STOP_AFTER_CALLS: bool = false;

    fn message(&mut self, _event: &str, v: &Value, turn: &mut Turn, out: &mut Events) {
        chunk(&mut self.grounded, turn, v, out);
    }

    /// Without `alt=sse` the answer is a JSON array of chunks.
    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events) {
        match body {
            Value::Array(chunks) => chunks
                .iter()
                .for_each(|c| chunk(&mut self.grounded, turn, c, out)),
            other => chunk(&mut self.grounded, turn, other, out),
        }
        if !out.iter().any(Result::is_err) {
            stream::finish::<Self>(turn, out);
        }
    }
}
