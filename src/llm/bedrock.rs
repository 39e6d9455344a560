//! Amazon Bedrock's Converse stream (`/model/{id}/converse-stream`): the
//! AWS event-stream framing decoded with `aws-smithy-eventstream`, requests
//! signed with SigV4, text, reasoning (with signatures, and redacted
//! reasoning kept), tool use and usage with cache tokens.

use std::time::SystemTime;

use async_trait::async_trait;
use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::{HeaderValue, Message as Frame};
use bytes::BytesMut;
use serde_json::{Value, json};

use super::stream::{self, Endpoint, Turn, WireFormat};
use super::transport::{Events, Framing};
use super::{
    AwsAuth, EventStream, LlmError, Provider, ProviderSettings, Request, StopReason, StreamEvent,
    Usage,
};
use crate::conversation::{Message, Part, ResultContent};

/// The name [`StreamEvent::ProviderData`] carries for this wire format.
pub const FORMAT: &str = "bedrock";

pub struct Bedrock {
    http: Endpoint,
    keys: Keys,
}

/// Fixed keys (with the region cairn's config named), or the SDK's chain.
enum Keys {
    Fixed(super::AwsCredentials, String),
    Chain(super::aws_chain::AwsChain),
}

impl Bedrock {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let region = settings.cloud.region.clone();
        let keys = match settings.cloud.aws.clone() {
            Some(AwsAuth::Keys(k)) => Keys::Fixed(
                k,
                region.ok_or_else(|| LlmError::BadRequest {
                    status: 0,
                    message: "a bedrock provider needs `region` (or AWS_REGION)".into(),
                })?,
            ),
            Some(AwsAuth::Chain { profile }) => {
                Keys::Chain(super::aws_chain::AwsChain::new(profile, region))
            }
            None => Keys::Chain(super::aws_chain::AwsChain::new(None, region)),
        };
        Ok(Bedrock {
            http: Endpoint::new(settings)?,
            keys,
        })
    }

    /// The keys to sign with and the region they are for.
    async fn credentials(&self) -> Result<(super::AwsCredentials, String), LlmError> {
        match &self.keys {
            Keys::Fixed(k, r) => Ok((k.clone(), r.clone())),
            Keys::Chain(chain) => chain.credentials().await,
        }
    }

    fn url(&self, model: &str, region: &str) -> String {
        let base = self.http.base();
        let base = if base.is_empty() {
            format!("https://bedrock-runtime.{region}.amazonaws.com")
        } else {
            base.to_string()
        };
        let model: String = model
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                other => format!("%{other:02X}"),
            })
            .collect();
        format!("{base}/model/{model}/converse-stream")
    }
}

#[async_trait]
impl Provider for Bedrock {
    fn name(&self) -> &str {
        &self.http.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let (creds, region) = self.credentials().await?;
        let url = self.url(&request.model, &region);
        let body = serde_json::to_vec(&request_body(request))
            .map_err(|e| LlmError::Malformed(e.to_string()))?;
        let parsed = reqwest::Url::parse(&url).map_err(|e| {
            LlmError::Unreachable(format!("the bedrock URL {url} is not valid ({e})"))
        })?;
        let host = match (parsed.host_str(), parsed.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => String::new(),
        };
        let signed = super::aws::sign_headers(
            "POST",
            &url,
            &[("host", &host), ("content-type", "application/json")],
            &body,
            &creds,
            &super::aws::Scope {
                region: &region,
                service: "bedrock",
                time: SystemTime::now(),
            },
        )?;
        let mut req = (self.http.client()?.post(parsed))
            .header("content-type", "application/json")
            .header("accept", "application/vnd.amazon.eventstream")
            .body(body);
        for (k, v) in signed {
            req = req.header(k, v);
        }
        stream::send::<Converse>(req, &self.http.settings, EventStreamFrames::default()).await
    }
}

/// The JSON body of a Converse request.
pub fn request_body(request: &Request) -> Value {
    let messages = super::anthropic_request::alternating(&request.messages, content);
    let mut body =
        json!({"messages": messages, "inferenceConfig": {"maxTokens": request.max_tokens}});
    if !request.system.is_empty() {
        body["system"] = json!([{"text": request.system}]);
    }
    let budget = super::effort::thinking_budget(request);
    if let Some(budget) = budget.filter(|_| request.model.contains("claude")) {
        body["additionalModelRequestFields"] =
            json!({"thinking": {"type": "enabled", "budget_tokens": budget}});
    } else if request.reasoning
        && let Some(effort) = request.effort
    {
        // Other reasoning families on Bedrock (OpenAI's open models) take
        // OpenAI's field.
        body["additionalModelRequestFields"] = json!({"reasoning_effort": effort.three_level()});
    } else if let Some(t) = request.temperature {
        body["inferenceConfig"]["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"toolSpec": {"name": t.name, "description": t.description,
                "inputSchema": {"json": t.input_schema}}})
            })
            .collect();
        body["toolConfig"] = json!({"tools": tools});
    }
    body
}

fn image(media_type: &str, data: &str) -> Value {
    let format = media_type.strip_prefix("image/").unwrap_or("png");
    json!({"image": {"format": format, "source": {"bytes": data}}})
}

fn content(m: &Message) -> Vec<Value> {
    let mut out = Vec::new();
    for p in &m.parts {
        match p {
            Part::Text { text } if !text.is_empty() => out.push(json!({"text": text})),
            Part::Reasoning {
                text,
                signature: Some(sig),
            } => out.push(
                json!({"reasoningContent": {"reasoningText": {"text": text, "signature": sig}}}),
            ),
            Part::ProviderData { format, data } if format == FORMAT => out.push(data.clone()),
            Part::Image { image: i } => out.push(image(&i.media_type, &i.data)),
            Part::ToolCall { id, name, input } => {
                out.push(json!({"toolUse": {"toolUseId": id, "name": name, "input": input}}))
            }
            Part::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let inner: Vec<Value> = content
                    .iter()
                    .map(|c| match c {
                        ResultContent::Text { text } => json!({"text": if text.is_empty() { "(no output)" } else { text.as_str() }}),
                        ResultContent::Image { image: i } => image(&i.media_type, &i.data),
                    })
                    .collect();
                out.push(
                    json!({"toolResult": {"toolUseId": call_id, "content": inner,
                    "status": if *is_error { "error" } else { "success" }}}),
                );
            }
            _ => {}
        }
    }
    out
}

/// Splits the body into event-stream frames; yields (event type, payload),
/// or an error for an exception frame.
#[derive(Default)]
pub struct EventStreamFrames {
    buf: BytesMut,
    decoder: MessageFrameDecoder,
}

fn header(frame: &Frame, name: &str) -> Option<String> {
    frame
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str().to_string()),
            _ => None,
        })
}

fn exception(kind: &str, payload: &str) -> LlmError {
    let message = super::error_message(payload);
    let status = match kind {
        "throttlingException" => 429,
        "accessDeniedException" => 403,
        "validationException" => 400,
        _ => 500,
    };
    LlmError::from_status(status, None, &json!({"message": message}).to_string())
}

impl Framing for EventStreamFrames {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<(String, String), LlmError>>) {
        self.buf.extend_from_slice(bytes);
        loop {
            match self.decoder.decode_frame(&mut self.buf) {
                Ok(DecodedFrame::Complete(frame)) => {
                    let payload = String::from_utf8_lossy(frame.payload()).into_owned();
                    if header(&frame, ":message-type").as_deref() == Some("exception") {
                        let kind = header(&frame, ":exception-type").unwrap_or_default();
                        out.push(Err(exception(&kind, &payload)));
                    } else {
                        let kind = header(&frame, ":event-type").unwrap_or_default();
                        out.push(Ok((kind, payload)));
                    }
                }
                Ok(DecodedFrame::Incomplete) => return,
                Err(e) => {
                    out.push(Err(LlmError::Malformed(format!(
                        "a broken event-stream frame: {e}"
                    ))));
                    self.buf.clear();
                    return;
                }
            }
        }
    }

    fn finish(&mut self, _out: &mut Vec<Result<(String, String), LlmError>>) {}

    fn pending(&self) -> usize {
        self.buf.len()
    }
}

/// Converse events as the shared stream loop reads them.
#[derive(Default)]
pub(crate) struct Converse;

fn stop_reason(r: &str) -> StopReason {
    match r {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "guardrail_intervened" | "content_filtered" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

fn delta(turn: &mut Turn, index: usize, d: &Value, out: &mut Events) {
    if let Some(t) = d["text"].as_str().filter(|t| !t.is_empty()) {
        out.push(Ok(StreamEvent::TextDelta(t.to_string())));
    }
    if let Some(input) = d.pointer("/toolUse/input").and_then(Value::as_str) {
        turn.fragment(index, input.to_string(), out);
    }
    let r = &d["reasoningContent"];
    if let Some(t) = r["text"].as_str().filter(|t| !t.is_empty()) {
        out.push(Ok(StreamEvent::ReasoningDelta(t.to_string())));
    }
    if let Some(s) = r["signature"].as_str() {
        out.push(Ok(StreamEvent::ReasoningSignature(s.to_string())));
    }
    if let Some(data) = r["redactedContent"].as_str() {
        out.push(Ok(StreamEvent::ProviderData {
            format: FORMAT.into(),
            data: json!({"reasoningContent": {"redactedContent": data}}),
        }));
    }
}

fn tool_use(turn: &mut Turn, index: usize, t: &Value, out: &mut Events) {
    let text = |k: &str| t[k].as_str().unwrap_or_default();
    turn.start_call(index, text("toolUseId"), text("name"), out);
}

fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u["inputTokens"].as_u64().unwrap_or(0),
        output_tokens: u["outputTokens"].as_u64().unwrap_or(0),
        cache_read_tokens: u["cacheReadInputTokens"].as_u64().unwrap_or(0),
        cache_write_tokens: u["cacheWriteInputTokens"].as_u64().unwrap_or(0),
    }
}

impl WireFormat for Converse {
    const UNIT: &'static str = "an event's payload";

    fn message(&mut self, event: &str, v: &Value, turn: &mut Turn, out: &mut Events) {
        let index = v["contentBlockIndex"].as_u64().unwrap_or(0) as usize;
        match event {
            "contentBlockStart" => {
                if let Some(t) = v.pointer("/start/toolUse") {
                    tool_use(turn, index, t, out);
                }
            }
            "contentBlockDelta" => delta(turn, index, &v["delta"], out),
            "messageStop" => {
                turn.stop = Some(stop_reason(v["stopReason"].as_str().unwrap_or("end_turn")))
            }
            "metadata" => {
                if let Some(u) = v.get("usage") {
                    turn.usage(usage(u), out);
                }
                if turn.stop.is_some() {
                    stream::finish::<Self>(turn, out);
                }
            }
            _ => {}
        }
    }

    /// `Converse` (not streamed) answers with the whole message.
    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events) {
        let blocks = body
            .pointer("/output/message/content")
            .and_then(Value::as_array);
        for (index, b) in blocks.into_iter().flatten().enumerate() {
            if let Some(t) = b.get("toolUse") {
                tool_use(turn, index, t, out);
                turn.fragment(index, t["input"].to_string(), out);
            } else {
                delta(turn, index, b, out);
            }
        }
        if let Some(u) = body.get("usage") {
            turn.usage(usage(u), out);
        }
        turn.stop = Some(stop_reason(
            body["stopReason"].as_str().unwrap_or("end_turn"),
        ));
        stream::finish::<Self>(turn, out);
    }
}
