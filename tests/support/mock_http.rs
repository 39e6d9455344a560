//! The scripted server's HTTP plumbing: reading a request, the side
//! endpoints (models lists, Ollama's `/api/show` and `/api/tags`), and
//! error bodies in each format's shape.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Format, Shared};

pub struct HttpRequest {
    pub head: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Reads the head, then the body by Content-Length. `None` when the peer
/// closed, or spoke TLS (answered as a plain HTTP server does).
pub async fn read_request(sock: &mut TcpStream) -> std::io::Result<Option<HttpRequest>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
        if buf[0] == 0x16 {
            sock.write_all(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n")
                .await?;
            sock.shutdown().await?;
            return Ok(None);
        }
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut headers = Vec::new();
    let mut len = 0usize;
    for line in head.lines().skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
    Ok(Some(HttpRequest {
        body: buf[head_end..].to_vec(),
        head,
        target,
        headers,
    }))
}

pub fn response(status: &str, content_type: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Answers the requests that are not model calls.
pub fn side_endpoint(format: Format, req: &HttpRequest, s: &Shared) -> Option<String> {
    let path = req.target.split('?').next().unwrap_or("");
    let body = if req.head.starts_with("GET ") && path.ends_with("/models") {
        s.paths.lock().unwrap().push(req.target.clone());
        if let Some(key) = s.required_key.lock().unwrap().clone() {
            let given = req.headers.iter().any(|(k, v)| {
                (k == "x-api-key" && *v == key)
                    || (k == "authorization" && *v == format!("Bearer {key}"))
            });
            if !given {
                let body = error_body(format, 401, "invalid x-api-key");
                return Some(response("401 Unauthorized", "application/json", "", &body));
            }
        }
        if let Some(list) = s.models_list.lock().unwrap().clone() {
            list
        } else if format == Format::Gemini {
            json!({"models": [{"name": "models/gemini-mock", "supportedGenerationMethods": ["generateContent"]}]})
        } else {
            json!({"object": "list", "data": [{"id": "mock-large"}, {"id": "mock-small"}]})
        }
    } else if format == Format::Ollama && path == "/api/show" {
        json!({"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}})
    } else if format == Format::Ollama && path == "/api/tags" {
        json!({"models": [{"name": "qwen3:8b", "model": "qwen3:8b"}]})
    } else {
        return None;
    };
    Some(response(
        "200 OK",
        "application/json",
        "",
        &body.to_string(),
    ))
}

/// An HTTP error body in the provider's shape.
pub fn error_body(format: Format, code: u16, message: &str) -> String {
    let v: Value = match format {
        Format::OpenAi | Format::Responses => {
            json!({"error": {"message": message, "type": "error", "code": code}})
        }
        Format::Gemini => json!({"error": {"code": code, "message": message,
            "status": if code == 429 { "RESOURCE_EXHAUSTED" } else { "INTERNAL" }}}),
        Format::Ollama => json!({"error": message}),
        Format::Bedrock => json!({"message": message}),
        Format::Anthropic => {
            json!({"type": "error", "error": {"type": "error", "message": message}})
        }
    };
    v.to_string()
}
