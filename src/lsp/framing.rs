//! The base protocol's framing: each JSON-RPC message is preceded by a
//! `Content-Length` header and a blank line.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest message cairn reads from a server (a workspace's symbols
/// can be large, but not this large).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("the server closed its output")]
    Closed,
    #[error("reading from the server: {0}")]
    Io(#[from] std::io::Error),
    #[error("the server sent a bad header: {0}")]
    Header(String),
    #[error("the server sent a message of {0} bytes, more than cairn reads")]
    TooLarge(usize),
}

/// Reads one message body; `Closed` at a clean end between messages.
pub async fn read_message<R: AsyncBufRead + Unpin>(r: &mut R) -> Result<Vec<u8>, FrameError> {
    let mut length = None;
    let mut line = String::new();
    let mut first = true;
    loop {
        line.clear();
        let n = r.read_line(&mut line).await?;
        if n == 0 {
            return Err(if first && length.is_none() {
                FrameError::Closed
            } else {
                FrameError::Header("the output ended inside a header".into())
            });
        }
        first = false;
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            if length.is_none() {
                // Stray blank lines between messages are harmless.
                first = true;
                continue;
            }
            break;
        }
        let Some((name, value)) = trimmed.split_once(':') else {
            return Err(FrameError::Header(crate::text::fit(trimmed, 80)));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| FrameError::Header(crate::text::fit(trimmed, 80)))?;
            length = Some(n);
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE {
        return Err(FrameError::TooLarge(length));
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).await?;
    Ok(body)
}

/// Writes one message with its header.
pub async fn write_message<W: AsyncWrite + Unpin>(w: &mut W, body: &[u8]) -> std::io::Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    w.write_all(header.as_bytes()).await?;
    w.write_all(body).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn read_all(bytes: &[u8]) -> Vec<Result<Vec<u8>, String>> {
        let mut r = BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            match read_message(&mut r).await {
                Ok(m) => out.push(Ok(m)),
                Err(FrameError::Closed) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[tokio::test]
    async fn messages_round_trip_with_other_headers_and_multibyte_text() {
        let mut buf = Vec::new();
        write_message(&mut buf, "{\"a\":\"é\"}".as_bytes())
            .await
            .unwrap();
        buf.extend_from_slice(
            b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
        );
        let got = read_all(&buf).await;
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].as_deref().unwrap(), "{\"a\":\"é\"}".as_bytes());
        assert_eq!(got[1].as_deref().unwrap(), b"{}");
    }

    #[tokio::test]
    async fn a_cut_or_broken_stream_is_an_error_not_a_hang() {
        let got = read_all(b"Content-Length: 10\r\n\r\n{}").await;
        assert!(got[0].is_err(), "{got:?}");
        let got = read_all(b"Content-Length: ten\r\n\r\n").await;
        assert!(got[0].as_ref().unwrap_err().contains("bad header"));
        let got = read_all(b"Content-Length: 5\r\n").await;
        assert!(got[0].as_ref().unwrap_err().contains("inside a header"));
        let big = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE + 1);
        let got = read_all(big.as_bytes()).await;
        assert!(got[0].as_ref().unwrap_err().contains("more than"));
    }
}
