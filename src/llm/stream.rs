//! The stream skeleton every wire format shares: send the request, split
//! the body into messages (SSE, NDJSON or AWS event-stream, by the
//! [`Framing`] given), parse each message's JSON, keep the tool calls as
//! their fragments arrive, the usage and the stop reason, and end the
//! response exactly once. A wire format ([`WireFormat`]) supplies only what
//! its messages mean.

use serde_json::Value;

use super::transport::{self, Events, Framing};
use super::{EventStream, LlmError, ProviderSettings, StopReason, StreamEvent, Usage};

/// What one wire format supplies to the shared loop.
pub(crate) trait WireFormat: Default + Send + 'static {
    /// What one framed message is called in an error ("a stream chunk").
    const UNIT: &'static str;
    /// Whether the server's own stop reason stands even after tool calls;
    /// when not, an answer that made calls but says it simply stopped ends
    /// as [`StopReason::ToolUse`] (servers that say `stop` after calls).
    const TRUSTS_STOP_AFTER_CALLS: bool = true;

    /// A message that is not JSON but ends the response (`[DONE]`).
    fn is_end_marker(_data: &str) -> bool {
        false
    }
    /// One parsed message, with its event name if the framing has one.
    fn message(&mut self, event: &str, v: &Value, turn: &mut Turn, out: &mut Events);
    /// A whole JSON answer sent to a streaming request; it must end the
    /// response ([`Turn::finish`]) when it is complete.
    fn whole(&mut self, body: &Value, turn: &mut Turn, out: &mut Events);
}

/// One tool call of the response as its fragments arrive.
#[derive(Debug, Default)]
pub(crate) struct Call {
    /// The index its events carry.
    pub index: usize,
    pub id: String,
    pub name: String,
    pub args: String,
}

/// What the shared loop keeps of one response.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    pub calls: Vec<Call>,
    pub usage: Usage,
    pub stop: Option<StopReason>,
    pub done: bool,
}

impl Turn {
    /// A tool call begins, numbered `index` (the server's block index, or
    /// [`Turn::next_index`] where the server numbers nothing).
    pub fn start_call(&mut self, index: usize, id: &str, name: &str, out: &mut Events) {
        self.calls.push(Call {
            index,
            id: id.to_string(),
            name: name.to_string(),
            args: String::new(),
        });
        out.push(Ok(StreamEvent::ToolCallStart {
            index,
            id: id.to_string(),
            name: name.to_string(),
        }));
    }

    /// The number of the next call when they are numbered in order.
    pub fn next_index(&self) -> usize {
        self.calls.len()
    }

    /// A fragment of call `index`'s JSON arguments.
    pub fn fragment(&mut self, index: usize, fragment: String, out: &mut Events) {
        if let Some(call) = self.calls.iter_mut().rev().find(|c| c.index == index) {
            call.args.push_str(&fragment);
        }
        out.push(Ok(StreamEvent::ToolCallDelta { index, fragment }));
    }

    /// The response's usage so far.
    pub fn usage(&mut self, usage: Usage, out: &mut Events) {
        self.usage = usage;
        out.push(Ok(StreamEvent::Usage(usage)));
    }

    /// Ends the response with its stop reason, once.
    pub fn finish(&mut self, trusts_stop: bool, out: &mut Events) {
        if self.done {
            return;
        }
        self.done = true;
        let stop = match self.stop.take() {
            Some(StopReason::EndTurn) | None if !trusts_stop && !self.calls.is_empty() => {
                StopReason::ToolUse
            }
            Some(s) => s,
            None => StopReason::EndTurn,
        };
        out.push(Ok(StreamEvent::Done(stop)));
    }
}

/// A wire format driven by the shared loop: the decoder a response is read
/// through.
#[derive(Default)]
pub(crate) struct Stream<W> {
    pub wire: W,
    pub turn: Turn,
}

impl<W: WireFormat> Stream<W> {
    fn finish(&mut self, out: &mut Events) {
        self.turn.finish(W::TRUSTS_STOP_AFTER_CALLS, out);
    }
}

/// Ends the response: for a wire format's own code, which knows its
/// [`WireFormat::TRUSTS_STOP_AFTER_CALLS`].
pub(crate) fn finish<W: WireFormat>(turn: &mut Turn, out: &mut Events) {
    turn.finish(W::TRUSTS_STOP_AFTER_CALLS, out);
}

/// The start of a message for an error: enough to recognise it.
pub(crate) fn excerpt(text: &str) -> String {
    text.chars().take(200).collect()
}

impl<W: WireFormat> transport::Decoder for Stream<W> {
    fn message(&mut self, event: &str, data: &str) -> Events {
        let data = data.trim();
        let mut out = Vec::new();
        if data.is_empty() || self.turn.done {
            return out;
        }
        if W::is_end_marker(data) {
            self.finish(&mut out);
            return out;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(v) => self.wire.message(event, &v, &mut self.turn, &mut out),
            Err(e) => out.push(Err(LlmError::Malformed(format!(
                "{} was not JSON ({e}): {}",
                W::UNIT,
                excerpt(data)
            )))),
        }
        out
    }

    /// A body that ends after a stop reason without its end marker is
    /// complete: the answer is all there. Otherwise it counts as cut.
    fn end(&mut self) -> Events {
        let mut out = Vec::new();
        if self.turn.stop.is_some() {
            self.finish(&mut out);
        }
        out
    }

    fn whole(&mut self, body: &Value) -> Events {
        let mut out = Vec::new();
        self.wire.whole(body, &mut self.turn, &mut out);
        out
    }
}

/// How a provider sends its key.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyIn {
    /// `Authorization: Bearer …`.
    Bearer,
    /// In a header of its own (`x-api-key`, `x-goog-api-key`).
    Header(&'static str),
    /// `api-key` for Azure, a bearer token otherwise.
    AzureOrBearer,
}

/// Adds the settings' key, if any, the way the provider wants it.
pub(crate) fn with_key(
    req: reqwest::RequestBuilder,
    settings: &ProviderSettings,
    how: KeyIn,
) -> reqwest::RequestBuilder {
    let Some(key) = &settings.api_key else {
        return req;
    };
    match how {
        KeyIn::AzureOrBearer if settings.azure => req.header("api-key", key),
        KeyIn::Bearer | KeyIn::AzureOrBearer => req.bearer_auth(key),
        KeyIn::Header(name) => req.header(name, key),
    }
}

/// Sends the request and reads its answer through `framing` and the wire
/// format `W`.
pub(crate) async fn send<W: WireFormat>(
    req: reqwest::RequestBuilder,
    settings: &ProviderSettings,
    framing: impl Framing,
) -> Result<EventStream, LlmError> {
    let resp = transport::send(req, settings).await?;
    let limits = settings.wire.limits.with_idle(settings.idle_timeout);
    transport::decode_response(resp, limits, framing, Stream::<W>::default()).await
}

/// The HTTP side every provider holds: its settings and a client.
pub(crate) struct Endpoint {
    pub settings: ProviderSettings,
    /// Built on the first request: building reads every certificate of the
    /// system's store, and the interface's first frame must not wait for it.
    client: std::sync::OnceLock<reqwest::Client>,
}

impl Endpoint {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        Ok(Endpoint {
            client: std::sync::OnceLock::new(),
            settings,
        })
    }

    /// The HTTP client, built the first time it is needed.
    pub fn client(&self) -> Result<&reqwest::Client, LlmError> {
        if let Some(c) = self.client.get() {
            return Ok(c);
        }
        let built = super::http_client()?;
        Ok(self.client.get_or_init(|| built))
    }

    /// The base URL without its trailing slash.
    pub fn base(&self) -> &str {
        self.settings.base_url.trim_end_matches('/')
    }
}
