//! Newline-delimited JSON framing (Ollama's native API): one message per
//! line, lines split across chunks put back together.

use super::LlmError;
use super::transport::Framing;

#[derive(Debug, Default)]
pub struct NdjsonLines {
    buf: Vec<u8>,
}

impl Framing for NdjsonLines {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<(String, String), LlmError>>) {
        // The held bytes are an unfinished line: search only the new ones.
        let mut search = self.buf.len();
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(pos) = self.buf[search..].iter().position(|&b| b == b'\n') {
            let end = search + pos;
            let line = String::from_utf8_lossy(&self.buf[start..end]);
            let line = line.trim();
            if !line.is_empty() {
                out.push(Ok((String::new(), line.to_string())));
            }
            start = end + 1;
            search = start;
        }
        self.buf.drain(..start);
    }

    fn pending(&self) -> usize {
        self.buf.len()
    }

    fn finish(&mut self, out: &mut Vec<Result<(String, String), LlmError>>) {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
        if !rest.trim().is_empty() {
            out.push(Ok((String::new(), rest.trim().to_string())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_are_joined() {
        let mut f = NdjsonLines::default();
        let mut out = Vec::new();
        f.push(b"{\"a\":1}\n{\"b\":", &mut out);
        f.push("\"é\"}\n\n{\"c\":3}".as_bytes(), &mut out);
        f.finish(&mut out);
        let data: Vec<String> = out.into_iter().map(|r| r.unwrap().1).collect();
        assert_eq!(data, ["{\"a\":1}", "{\"b\":\"é\"}", "{\"c\":3}"]);
    }
}
