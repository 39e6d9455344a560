//! Sending a streaming request and reading its body: the request timeout
//! (until the response starts), the idle timeout (silence between bytes),
//! HTTP errors classified, and bodies that are not a stream at all (a whole
//! JSON response, an HTML page) recognised for what they are.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::Value;

use super::error::{from_transport, parse_retry_after};
use super::{EventStream, LlmError, ProviderSettings, StreamEvent};

pub type Events = Vec<Result<StreamEvent, LlmError>>;

const MB: usize = 1 << 20;

/// Bounds on reading one answer: silence before the first byte and
/// between pieces of content (keep-alive comments are not content), the
/// size of one event and of the whole answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Silence allowed once the answer has started.
    pub idle: Duration,
    /// Silence allowed before the first byte; `None`: the shorter of the
    /// idle limit and [`StreamLimits::FIRST_BYTE`].
    pub first_byte: Option<Duration>,
    pub max_event: usize,
    pub max_response: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            idle: ProviderSettings::DEFAULT_IDLE_TIMEOUT,
            first_byte: None,
            max_event: 32 * MB,
            max_response: 256 * MB,
        }
    }
}

impl StreamLimits {
    pub const FIRST_BYTE: Duration = Duration::from_secs(30);

    pub fn with_idle(self, idle: Duration) -> Self {
        StreamLimits { idle, ..self }
    }

    pub fn first_byte(&self) -> Duration {
        self.first_byte
            .unwrap_or_else(|| self.idle.min(Self::FIRST_BYTE))
    }
}

fn in_mb(bytes: usize) -> String {
    let mb = bytes as f64 / MB as f64;
    if mb >= 10.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{mb:.1} MB")
    }
}

/// Turns one wire format's stream into provider events.
pub trait Decoder: Send + 'static {
    /// One framed message (an SSE event's data, an NDJSON line, an
    /// event-stream frame's payload), with its event name if the framing
    /// has one.
    fn message(&mut self, event: &str, data: &str) -> Events;
    /// The body ended, cleanly or not. Returns what completes the response
    /// if what arrived is a complete answer (a stop reason was seen),
    /// otherwise nothing and the stream counts as cut.
    fn end(&mut self) -> Events {
        Vec::new()
    }
    /// A whole JSON response sent to a streaming request.
    fn whole(&mut self, body: &Value) -> Events;
}

/// Sends the request with the provider's extra headers, waiting at most
/// the request timeout for the response to start.
pub async fn send(
    req: reqwest::RequestBuilder,
    settings: &ProviderSettings,
) -> Result<reqwest::Response, LlmError> {
    let mut req = req;
    for (k, v) in &settings.headers {
        req = req.header(k, v);
    }
    let resp = match tokio::time::timeout(settings.request_timeout, req.send()).await {
        Err(_) => {
            return Err(LlmError::Network(format!(
                "the provider did not start answering within {} s (the request timeout, `timeout_secs`)",
                settings.request_timeout.as_secs()
            )));
        }
        Ok(r) => r.map_err(|e| from_transport(&e))?,
    };
    let status = resp.status();
    if !status.is_success() {
        let retry_after = parse_retry_after(resp.headers());
        let text = resp.text().await.unwrap_or_default();
        return Err(LlmError::from_status(status.as_u16(), retry_after, &text));
    }
    Ok(resp)
}

/// The body's bytes, ending with an error when nothing arrives for the
/// first-byte limit at the start or the idle limit later.
pub fn body_chunks(
    resp: reqwest::Response,
    limits: StreamLimits,
) -> impl Stream<Item = Result<Bytes, LlmError>> + Send {
    let body = resp.bytes_stream();
    // (body, ended, started)
    futures::stream::unfold(
        (body, false, false),
        move |(mut body, ended, started)| async move {
            if ended {
                return None;
            }
            let wait = if started {
                limits.idle
            } else {
                limits.first_byte()
            };
            match tokio::time::timeout(wait, body.next()).await {
                Err(_) => {
                    let why = if started {
                        format!(
                            "the provider sent nothing for {} s in the middle of its answer (the idle timeout, `idle_timeout_secs`)",
                            wait.as_secs_f32()
                        )
                    } else {
                        format!(
                            "the provider started its answer but sent nothing for {} s (`first_byte_timeout_secs`)",
                            wait.as_secs_f32()
                        )
                    };
                    Some((Err(LlmError::Network(why)), (body, true, started)))
                }
                Ok(None) => None,
                Ok(Some(Ok(b))) => Some((Ok(b), (body, false, true))),
                Ok(Some(Err(e))) => Some((Err(from_transport(&e)), (body, true, started))),
            }
        },
    )
}

/// What a successful response's body holds, by its content type.
enum BodyKind {
    Stream,
    Json,
    Html,
}

fn body_kind(resp: &reqwest::Response) -> BodyKind {
    let ct = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ct.contains("text/html") {
        BodyKind::Html
    } else if ct.starts_with("application/json") {
        BodyKind::Json
    } else {
        BodyKind::Stream
    }
}

/// Reads a response through a framing (`frames` splits bytes into
/// messages) and a decoder into provider events. A whole JSON body and an
/// HTML page are handled here for every wire format.
pub async fn decode_response<F>(
    resp: reqwest::Response,
    limits: StreamLimits,
    frames: F,
    mut decoder: impl Decoder,
) -> Result<EventStream, LlmError>
where
    F: Framing,
{
    match body_kind(&resp) {
        BodyKind::Html => {
            let text = resp.text().await.unwrap_or_default();
            Err(html_error(&text))
        }
        BodyKind::Json => {
            let text = whole_text(resp, limits).await?;
            whole_body(&text, &mut decoder)
        }
        BodyKind::Stream => {
            let chunks = body_chunks(resp, limits);
            Ok(Box::pin(ensure_done(decode_chunks(
                chunks, frames, decoder, limits,
            ))))
        }
    }
}

/// A whole JSON answer, read within the same bounds as a stream.
async fn whole_text(resp: reqwest::Response, limits: StreamLimits) -> Result<String, LlmError> {
    let mut body = Vec::new();
    let chunks = body_chunks(resp, limits);
    futures::pin_mut!(chunks);
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(&chunk?);
        if body.len() > limits.max_response {
            return Err(too_large(limits.max_response, "max_response_mb"));
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn too_large(limit: usize, setting: &str) -> LlmError {
    LlmError::Malformed(format!(
        "the answer was cut at {}: the provider sent more than that limit allows (`{setting}` in the provider's settings)",
        in_mb(limit)
    ))
}

fn event_too_large(limit: usize, at: usize) -> LlmError {
    LlmError::Malformed(format!(
        "one event of the answer grew past {} (`max_event_mb` in the provider's settings); the answer was cut at {}",
        in_mb(limit),
        in_mb(at)
    ))
}

fn whole_body(text: &str, decoder: &mut impl Decoder) -> Result<EventStream, LlmError> {
    if text.trim_start().starts_with('<') {
        return Err(html_error(text));
    }
    let v: Value = serde_json::from_str(text).map_err(|e| {
        LlmError::Malformed(format!(
            "a JSON answer did not parse ({e}): {}",
            text.chars().take(200).collect::<String>()
        ))
    })?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Err(LlmError::from_stream_error(err));
    }
    let events = decoder.whole(&v);
    Ok(Box::pin(ensure_done(futures::stream::iter(events))))
}

fn html_error(text: &str) -> LlmError {
    let title = text
        .split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map(|(t, _)| format!(" titled \"{}\"", t.trim()))
        .unwrap_or_default();
    LlmError::Malformed(format!(
        "the server answered with an HTML page{title} instead of a model response; \
         `base_url` probably points at a web page, a login portal or a proxy rather than the API"
    ))
}

/// Splits a byte stream into framed messages.
pub trait Framing: Send + 'static {
    /// Feeds bytes; appends complete messages as (event name, data).
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<(String, String), LlmError>>);
    /// The bytes ended: whatever complete message is left.
    fn finish(&mut self, out: &mut Vec<Result<(String, String), LlmError>>);
    /// Bytes held for the message not yet complete.
    fn pending(&self) -> usize {
        0
    }
}

/// Whether a chunk holds nothing but SSE comments (`: keep-alive`) and
/// blank lines: bytes that say the connection lives, not that the answer
/// moves on.
fn only_keep_alive(bytes: &[u8]) -> bool {
    let mut any = false;
    for line in bytes.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if line[0] != b':' {
            return false;
        }
        any = true;
    }
    any
}

/// How much of an answer has arrived, and when content last did.
struct Progress {
    bytes: usize,
    content_at: std::time::Instant,
}

impl Progress {
    /// Counts a chunk; an error when it breaks a bound.
    fn chunk(&mut self, bytes: &[u8], pending: usize, limits: &StreamLimits) -> Option<LlmError> {
        self.bytes += bytes.len();
        if self.bytes > limits.max_response {
            return Some(too_large(limits.max_response, "max_response_mb"));
        }
        if pending > limits.max_event {
            return Some(event_too_large(limits.max_event, self.bytes));
        }
        if !only_keep_alive(bytes) {
            self.content_at = std::time::Instant::now();
        } else if self.content_at.elapsed() > limits.idle {
            return Some(LlmError::Network(format!(
                "the provider sent only keep-alive comments for {} s (the idle timeout, `idle_timeout_secs`)",
                limits.idle.as_secs_f32()
            )));
        }
        None
    }
}

fn decode_chunks<F: Framing, D: Decoder>(
    chunks: impl Stream<Item = Result<Bytes, LlmError>> + Send + 'static,
    frames: F,
    decoder: D,
    limits: StreamLimits,
) -> impl Stream<Item = Result<StreamEvent, LlmError>> + Send {
    let chunks = chunks
        .map(Some)
        .chain(futures::stream::once(async { None }));
    let progress = Progress {
        bytes: 0,
        content_at: std::time::Instant::now(),
    };
    chunks
        .scan(
            (frames, decoder, progress),
            move |(frames, decoder, progress), item| {
                let mut msgs = Vec::new();
                let out: Events = match item {
                    Some(Ok(bytes)) => {
                        frames.push(&bytes, &mut msgs);
                        let broken = progress.chunk(&bytes, frames.pending(), &limits);
                        let mut out = run(decoder, msgs);
                        out.extend(broken.map(Err));
                        out
                    }
                    Some(Err(e)) => {
                        frames.finish(&mut msgs);
                        let mut out = run(decoder, msgs);
                        let end = decoder.end();
                        if end.is_empty() {
                            out.push(Err(e));
                        }
                        out.extend(end);
                        out
                    }
                    None => {
                        frames.finish(&mut msgs);
                        let mut out = run(decoder, msgs);
                        out.extend(decoder.end());
                        out
                    }
                };
                futures::future::ready(Some(futures::stream::iter(out)))
            },
        )
        .flatten()
}

fn run<D: Decoder>(decoder: &mut D, msgs: Vec<Result<(String, String), LlmError>>) -> Events {
    let mut out = Vec::new();
    for m in msgs {
        match m {
            Ok((event, data)) => out.extend(decoder.message(&event, &data)),
            Err(e) => out.push(Err(e)),
        }
    }
    out
}

/// Ends with an error if the stream stopped without saying it was done, so
/// a cut connection is noticed (and retried) rather than taken as the end.
/// A body that ended before saying anything at all is the server's error
/// (an empty 200), not the network's, and is not retried.
/// Nothing passes after the end or the first error.
pub fn ensure_done(
    inner: impl Stream<Item = Result<StreamEvent, LlmError>> + Send + 'static,
) -> impl Stream<Item = Result<StreamEvent, LlmError>> + Send {
    let tail = futures::stream::once(async { None });
    inner
        .map(Some)
        .chain(tail)
        .scan((false, false), |(stopped, seen), item| {
            if *stopped {
                return futures::future::ready(None);
            }
            let out = match item {
                Some(Ok(ev)) => {
                    *stopped = matches!(ev, StreamEvent::Done(_));
                    *seen = true;
                    Some(Ok(ev))
                }
                Some(Err(e)) => {
                    *stopped = true;
                    Some(Err(e))
                }
                None if !*seen => {
                    *stopped = true;
                    Some(Err(LlmError::Malformed(EMPTY_ANSWER.into())))
                }
                None => {
                    *stopped = true;
                    Some(Err(LlmError::Network(
                        "the connection closed before the response was complete".into(),
                    )))
                }
            };
            futures::future::ready(Some(out))
        })
        .filter_map(futures::future::ready)
}

/// What an empty successful answer means.
pub const EMPTY_ANSWER: &str = "the server answered with an empty body (HTTP 200 and nothing in it). That is an error of the server, not of the network: its log says why. Some servers do this for a streaming request with tools they cannot handle; `stream = false` in the provider's settings may help.";

#[cfg(test)]
mod ending_tests {
    use super::*;

    #[tokio::test]
    async fn an_empty_answer_is_the_servers_error_and_a_cut_one_the_networks() {
        let empty: Vec<_> = ensure_done(futures::stream::empty()).collect().await;
        assert!(
            matches!(&empty[..], [Err(LlmError::Malformed(m))] if m.contains("empty body")),
            "{empty:?}"
        );
        assert!(!empty[0].as_ref().unwrap_err().is_retryable());
        let started = futures::stream::iter(vec![Ok(StreamEvent::TextDelta("a".into()))]);
        let cut: Vec<_> = ensure_done(started).collect().await;
        assert!(
            matches!(cut.last(), Some(Err(LlmError::Network(_)))),
            "{cut:?}"
        );
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn keep_alive_chunks_are_told_from_content() {
        assert!(only_keep_alive(b": keep-alive\n\n"));
        assert!(only_keep_alive(b":\r\n\r\n: ping\n"));
        assert!(!only_keep_alive(b"\n\n"));
        assert!(!only_keep_alive(b": ping\ndata: {}\n\n"));
        assert!(!only_keep_alive(b"{\"a\":1}\n"));
    }

    #[test]
    fn one_event_over_its_limit_breaks_the_answer_at_once() {
        let limits = StreamLimits {
            max_event: 1000,
            ..StreamLimits::default()
        };
        let mut sse = crate::llm::sse::SseParser::default();
        let mut progress = Progress {
            bytes: 0,
            content_at: std::time::Instant::now(),
        };
        let mut out = Vec::new();
        let mut broken = None;
        for _ in 0..20 {
            let chunk = if sse.pending() == 0 {
                &b"data: "[..]
            } else {
                &[b'x'; 100][..]
            };
            Framing::push(&mut sse, chunk, &mut out);
            broken = progress.chunk(chunk, Framing::pending(&sse), &limits);
            if broken.is_some() {
                break;
            }
        }
        let err = broken.expect("the event grew past its limit").to_string();
        assert!(err.contains("max_event_mb"), "{err}");
        assert!(out.is_empty());
        assert!(progress.bytes <= 1106, "{}", progress.bytes);
    }

    /// A line that arrives in many pieces is searched once: the held part
    /// holds no newline.
    #[test]
    fn a_long_line_in_small_pieces_is_one_event() {
        let mut sse = crate::llm::sse::SseParser::default();
        let mut out = Vec::new();
        sse.push(b"data: ", &mut out);
        for _ in 0..1000 {
            sse.push(&[b'y'; 64], &mut out);
        }
        sse.push(b"\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 64_000);
        let mut nd = crate::llm::ndjson::NdjsonLines::default();
        let mut lines = Vec::new();
        for piece in [&b"{\"a\":"[..], b"1}\n{\"b\"", b":2}\n"] {
            nd.push(piece, &mut lines);
        }
        assert_eq!(lines.len(), 2);
    }
}
