//! An incremental parser for Server-Sent Events over a byte stream.

use futures::{Stream, StreamExt};

/// One event: its `event:` name (empty when absent) and its data lines
/// joined with newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Feeds bytes in, takes complete events out. Handles events split across
/// chunks, CRLF or LF line ends, comments and multi-line data.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(pos) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            let mut line = &self.buf[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            self.line(&line, out);
            start = end + 1;
        }
        self.buf.drain(..start);
    }

    /// Whatever is left when the stream ends (a last event without its
    /// blank line).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.buf.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
            self.line(rest.trim_end_matches('\r'), out);
        }
        self.dispatch(out);
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data || !self.event.is_empty() {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        }
        self.has_data = false;
        self.event.clear();
        self.data.clear();
    }
}

/// Turns a response body into a stream of events. A transport error ends
/// the stream with that error.
pub fn events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<SseEvent, reqwest::Error>> + Send {
    let body = response.bytes_stream();
    futures::stream::unfold(
        (
            body,
            SseParser::default(),
            std::collections::VecDeque::new(),
            false,
        ),
        |(mut body, mut parser, mut ready, mut ended)| async move {
            loop {
                if let Some(ev) = ready.pop_front() {
                    return Some((Ok(ev), (body, parser, ready, ended)));
                }
                if ended {
                    return None;
                }
                match body.next().await {
                    Some(Ok(bytes)) => {
                        let mut out = Vec::new();
                        parser.push(&bytes, &mut out);
                        ready.extend(out);
                    }
                    Some(Err(e)) => {
                        ended = true;
                        return Some((Err(e), (body, parser, ready, ended)));
                    }
                    None => {
                        ended = true;
                        let mut out = Vec::new();
                        parser.finish(&mut out);
                        ready.extend(out);
                    }
                }
            }
        },
    )
}

/// Sends a streaming request and turns its event stream into provider
/// events with `decode`; HTTP errors are classified, and a stream that ends
/// without saying it is done counts as cut.
pub async fn send_and_decode(
    req: reqwest::RequestBuilder,
    headers: &[(String, String)],
    mut decode: impl FnMut(SseEvent) -> Vec<Result<super::StreamEvent, super::LlmError>>
    + Send
    + 'static,
) -> Result<super::EventStream, super::LlmError> {
    use super::LlmError;
    use super::openai::{describe, ensure_done};
    let mut req = req;
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| LlmError::Network(describe(&e)))?;
    let status = resp.status();
    if !status.is_success() {
        let retry_after = super::parse_retry_after(resp.headers());
        let text = resp.text().await.unwrap_or_default();
        return Err(LlmError::from_status(status.as_u16(), retry_after, &text));
    }
    let stream = events(resp)
        .map(move |item| match item {
            Ok(ev) => decode(ev),
            Err(e) => vec![Err(LlmError::Network(describe(&e)))],
        })
        .flat_map(futures::stream::iter);
    Ok(Box::pin(ensure_done(stream)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn events_split_across_chunks_and_line_ends() {
        let out = parse_chunks(&[
            b"event: message_start\r\nda",
            b"ta: {\"a\":1}\r\n\r\n: ping comment\n\ndata: one\ndata: two\n\n",
            b"data: [DONE]",
        ]);
        assert_eq!(
            out,
            vec![
                SseEvent {
                    event: "message_start".into(),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "one\ntwo".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "[DONE]".into()
                },
            ]
        );
    }

    #[test]
    fn multibyte_characters_split_between_chunks_survive() {
        let bytes = "data: héllo\n\n".as_bytes();
        let (a, b) = bytes.split_at(8);
        let out = parse_chunks(&[a, b]);
        assert_eq!(out[0].data, "héllo");
    }
}
