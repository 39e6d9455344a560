//! An incremental parser for Server-Sent Events over a byte stream.

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
        // What is held is an unfinished line: no newline in it, so the
        // search starts at the new bytes and a long line costs linear time.
        let mut search = self.buf.len();
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(pos) = self.buf[search..].iter().position(|&b| b == b'\n') {
            let end = search + pos;
            let mut line = &self.buf[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            self.line(&line, out);
            start = end + 1;
            search = start;
        }
        self.buf.drain(..start);
    }

    /// Bytes held for the event not yet complete.
    pub fn pending(&self) -> usize {
        self.buf.len() + self.data.len()
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

impl super::transport::Framing for SseParser {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<(String, String), super::LlmError>>) {
        let mut events = Vec::new();
        SseParser::push(self, bytes, &mut events);
        out.extend(events.into_iter().map(|e| Ok((e.event, e.data))));
    }

    fn finish(&mut self, out: &mut Vec<Result<(String, String), super::LlmError>>) {
        let mut events = Vec::new();
        SseParser::finish(self, &mut events);
        out.extend(events.into_iter().map(|e| Ok((e.event, e.data))));
    }

    fn pending(&self) -> usize {
        SseParser::pending(self)
    }
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
