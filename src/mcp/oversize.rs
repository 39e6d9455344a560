//! What a stdio server writes, passed on a whole message (one line) at a
//! time, with a message too large for the transport answered at once.
//!
//! The transport drops a line over its limit and only logs it, so the call
//! that line answered would wait out its whole timeout and then blame the
//! server's speed. Here such a line is dropped before the transport sees
//! it, its request id is read from its first or last bytes (servers write
//! `id` before or after `result`), and an error answer for that id takes its
//! place: the call fails at once and says why.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest line the transport reads, without its newline.
pub(crate) const LIMIT: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH - 1;

/// The error code of cairn's answer in place of an oversized one (from the
/// range JSON-RPC leaves to implementations).
pub(crate) const CODE: i32 = -32_090;

/// How much of an oversized line's start and end is kept to find its id.
const EDGE: usize = 512;

/// The most room kept between messages.
const KEPT: usize = 1024 * 1024;

/// A line over the limit, being skipped.
struct Skipping {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    size: usize,
}

pub(crate) struct Bounded<R> {
    inner: R,
    limit: usize,
    line: Vec<u8>,
    skipping: Option<Skipping>,
    /// Whole lines ready for the transport, and how much of them it has.
    ready: Vec<u8>,
    given: usize,
    chunk: Box<[u8]>,
    ended: bool,
}

impl<R> Bounded<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self::with_limit(inner, LIMIT)
    }

    fn with_limit(inner: R, limit: usize) -> Self {
        Bounded {
            inner,
            limit,
            line: Vec::new(),
            skipping: None,
            ready: Vec::new(),
            given: 0,
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
            ended: false,
        }
    }

    /// Takes in bytes the server wrote.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|b| *b == b'\n');
            let (part, rest) = match end {
                Some(i) => (&bytes[..i], &bytes[i + 1..]),
                None => (bytes, &[][..]),
            };
            match &mut self.skipping {
                Some(s) => {
                    s.size += part.len();
                    s.tail.extend(part);
                    let extra = s.tail.len().saturating_sub(EDGE);
                    s.tail.drain(..extra);
                }
                None if self.line.len() + part.len() > self.limit => {
                    let line = std::mem::take(&mut self.line);
                    let size = line.len() + part.len();
                    let all = || line.iter().chain(part).copied();
                    let head = all().take(EDGE).collect();
                    let tail = all().skip(size.saturating_sub(EDGE)).collect();
                    self.skipping = Some(Skipping { head, tail, size });
                }
                None => self.line.extend_from_slice(part),
            }
            if end.is_some() {
                self.end_line();
            }
            bytes = rest;
        }
    }

    fn end_line(&mut self) {
        match self.skipping.take() {
            Some(s) => {
                let tail: Vec<u8> = s.tail.into();
                match id_of(&s.head, &tail) {
                    Some(id) => {
                        self.ready.extend(refusal(&id, s.size, self.limit));
                        self.ready.push(b'\n');
                    }
                    None => tracing::warn!(
                        size = s.size,
                        "an MCP server's message over the size limit was dropped; it named no request"
                    ),
                }
            }
            None => {
                // A large message is handed on without a copy.
                if self.ready.is_empty() {
                    self.ready = std::mem::take(&mut self.line);
                } else {
                    self.ready.append(&mut self.line);
                }
                self.ready.push(b'\n');
            }
        }
    }
}

/// The error answer that replaces an oversized one.
fn refusal(id: &str, size: usize, limit: usize) -> Vec<u8> {
    let mib = |n: usize| n as f64 / (1024.0 * 1024.0);
    let message = format!(
        "the server's answer was {:.1} MiB, more than the {:.0} MiB cairn reads from a server, so \
         it was dropped; ask for less at a time (a narrower query, a smaller page or range)",
        mib(size),
        mib(limit + 1)
    );
    let error = serde_json::json!({"code": CODE, "message": message});
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#).into_bytes()
}

/// The request id of a JSON-RPC answer from its first and last bytes, as
/// JSON text: the top-level `id` member when it comes first (after
/// `jsonrpc`, or alone) or last. `None` for a request or notification.
fn id_of(head: &[u8], tail: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(head);
    let tail = String::from_utf8_lossy(tail);
    // A request of the server's own (`method` before any `result` or
    // `error`) has an id from another count: it is not answered here.
    if let Some(method) = head.find(r#""method""#) {
        let answer = [head.find(r#""result""#), head.find(r#""error""#)];
        if answer.iter().flatten().all(|a| method < *a) {
            return None;
        }
    }
    let start = head.trim_start().strip_prefix('{')?;
    let mut rest = start.trim_start();
    if let Some(after) = rest.strip_prefix(r#""jsonrpc""#) {
        let after = after.trim_start().strip_prefix(':')?.trim_start();
        let after = after.strip_prefix(r#""2.0""#)?.trim_start();
        rest = after.strip_prefix(',')?.trim_start();
    }
    if let Some(after) = rest.strip_prefix(r#""id""#) {
        return value(after.trim_start().strip_prefix(':')?, |v| {
            v.trim_start().starts_with(',')
        });
    }
    // Last: `"id": VALUE }` right before the end.
    let body = tail.trim_end().strip_suffix('}')?.trim_end();
    let at = body.rfind(r#""id""#)?;
    let before = body[..at].trim_end();
    if !before.ends_with(',') {
        return None;
    }
    value(body[at + 4..].trim_start().strip_prefix(':')?, |v| {
        v.trim().is_empty()
    })
}

/// A number or a string without escapes at the start of `text`, when what
/// follows it passes `after`.
fn value(text: &str, after: impl Fn(&str) -> bool) -> Option<String> {
    let text = text.trim_start();
    let len = if let Some(s) = text.strip_prefix('"') {
        let close = s.find('"')?;
        if s[..close].contains('\\') {
            return None;
        }
        close + 2
    } else {
        text.find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(text.len())
    };
    let (v, rest) = text.split_at(len);
    (!v.is_empty() && v != "-" && after(rest)).then(|| v.to_string())
}

impl<R: AsyncRead + Unpin> AsyncRead for Bounded<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.given < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.given);
                buf.put_slice(&this.ready[this.given..this.given + n]);
                this.given += n;
                if this.given == this.ready.len() {
                    // Room a large message needed is not kept for later.
                    if this.ready.capacity() > KEPT {
                        this.ready = Vec::new();
                    } else {
                        this.ready.clear();
                    }
                    this.given = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut chunk))?;
            let n = chunk.filled().len();
            if n == 0 {
                // The end: a last line without a newline goes on as it is.
                this.ended = true;
                if this.skipping.is_none() {
                    this.ready.append(&mut this.line);
                }
                continue;
            }
            let chunk = std::mem::take(&mut this.chunk);
            this.take(&chunk[..n]);
            this.chunk = chunk;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through(input: &[u8], limit: usize) -> String {
        let mut out = String::new();
        let mut r = Bounded::with_limit(input, limit);
        r.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn lines_under_the_limit_pass_unchanged_and_one_over_is_answered_for_its_id() {
        let small = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let big_first = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":"{}"}}"#,
            "x".repeat(5000)
        );
        let big_last = format!(
            r#"{{"result":{{"id":3,"t":"{}"}},"jsonrpc":"2.0","id":"a-9"}}"#,
            "y".repeat(5000)
        );
        let note = format!(
            r#"{{"jsonrpc":"2.0","method":"n","params":"{}"}}"#,
            "z".repeat(5000)
        );
        let input = format!("{small}\n{big_first}\n{note}\n{big_last}\n{small}");
        let out = through(input.as_bytes(), 1000).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert_eq!(lines[0], small);
        assert_eq!(lines[3], small);
        for (line, id) in [
            (lines[1], serde_json::json!(7)),
            (lines[2], serde_json::json!("a-9")),
        ] {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["id"], id);
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("more than the") && message.contains("ask for less"),
                "{message}"
            );
        }
    }

    #[test]
    fn only_a_top_level_id_is_taken() {
        let id = |h: &str, t: &str| id_of(h.as_bytes(), t.as_bytes());
        assert_eq!(id(r#"{"id": 12 , "result""#, ""), Some("12".into()));
        assert_eq!(
            id(r#"{"result":{"#, r#"x"}, "id":"q"}"#),
            Some(r#""q""#.into())
        );
        // The last member is the result, which ends with a nested id.
        assert_eq!(id(r#"{"jsonrpc":"2.0","result":{"#, r#","id":4}}"#), None);
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","method":"x","params""#, r#"}"#),
            None
        );
        assert_eq!(id(r#"{"id":"a\"b","result""#, ""), None);
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":3,"method":"x","params""#, ""),
            None
        );
        assert_eq!(id(r#"{"id":5,"result":{"method":"#, ""), Some("5".into()));
    }
}
