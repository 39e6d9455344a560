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

/// The body's bytes, ending with an error when nothing arrives for `idle`.
pub fn body_chunks(
    resp: reqwest::Response,
    idle: Duration,
) -> impl Stream<Item = Result<Bytes, LlmError>> + Send {
    let body = resp.bytes_stream();
    futures::stream::unfold((body, false), move |(mut body, ended)| async move {
        if ended {
            return None;
        }
        match tokio::time::timeout(idle, body.next()).await {
            Err(_) => Some((
                Err(LlmError::Network(format!(
                    "the provider sent nothing for {idle:?} in the middle of its answer (the idle timeout, `idle_timeout_secs`)"
                ))),
                (body, true),
            )),
            Ok(None) => None,
            Ok(Some(Ok(b))) => Some((Ok(b), (body, false))),
            Ok(Some(Err(e))) => Some((Err(from_transport(&e)), (body, true))),
        }
    })
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
    idle: Duration,
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
            let text = resp.text().await.map_err(|e| from_transport(&e))?;
            whole_body(&text, &mut decoder)
        }
        BodyKind::Stream => {
            let chunks = body_chunks(resp, idle);
            Ok(Box::pin(ensure_done(decode_chunks(
                chunks, frames, decoder,
            ))))
        }
    }
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
}

fn decode_chunks<F: Framing, D: Decoder>(
    chunks: impl Stream<Item = Result<Bytes, LlmError>> + Send + 'static,
    frames: F,
    decoder: D,
) -> impl Stream<Item = Result<StreamEvent, LlmError>> + Send {
    let chunks = chunks
        .map(Some)
        .chain(futures::stream::once(async { None }));
    chunks
        .scan((frames, decoder), |(frames, decoder), item| {
            let mut msgs = Vec::new();
            let out: Events = match item {
                Some(Ok(bytes)) => {
                    frames.push(&bytes, &mut msgs);
                    run(decoder, msgs)
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
        })
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
