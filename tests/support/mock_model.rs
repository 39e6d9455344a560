//! A scripted model server on 127.0.0.1 that streams exactly as the real
//! services do (OpenAI Chat Completions and Anthropic Messages), with real
//! pacing, and fails on demand. It records every request it receives.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenAi,
    Anthropic,
}

#[derive(Debug, Clone)]
enum Item {
    Text(String),
    Reasoning(String),
    ToolCall {
        id: String,
        name: String,
        args: Value,
    },
}

/// One answer to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    items: Vec<Item>,
    status: Option<(u16, String)>,
    retry_after: Option<String>,
    delay: Duration,
    cut_after: Option<usize>,
    usage: (u64, u64),
    chunk_chars: usize,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            items: Vec::new(),
            status: None,
            retry_after: None,
            delay: Duration::from_millis(2),
            cut_after: None,
            usage: (120, 30),
            chunk_chars: 6,
        }
    }
}

impl Reply {
    pub fn text(t: &str) -> Reply {
        Reply::default().and_text(t)
    }
    pub fn tool(id: &str, name: &str, args: Value) -> Reply {
        Reply::default().tool_call(id, name, args)
    }
    pub fn and_text(mut self, t: &str) -> Reply {
        self.items.push(Item::Text(t.to_string()));
        self
    }
    pub fn reasoning(mut self, t: &str) -> Reply {
        self.items.push(Item::Reasoning(t.to_string()));
        self
    }
    pub fn tool_call(mut self, id: &str, name: &str, args: Value) -> Reply {
        self.items.push(Item::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            args,
        });
        self
    }
    /// Pause between chunks.
    pub fn chunk_delay(mut self, d: Duration) -> Reply {
        self.delay = d;
        self
    }
    /// Characters of text per chunk.
    pub fn chunk_chars(mut self, n: usize) -> Reply {
        self.chunk_chars = n.max(1);
        self
    }
    pub fn usage(mut self, input: u64, output: u64) -> Reply {
        self.usage = (input, output);
        self
    }
    /// Close the connection after this many chunks, mid-stream.
    pub fn cut_after(mut self, chunks: usize) -> Reply {
        self.cut_after = Some(chunks);
        self
    }
    /// An HTTP error with a JSON body in the provider's shape.
    pub fn status(code: u16) -> Reply {
        let message = match code {
            401 => "invalid x-api-key",
            429 => "rate limit exceeded",
            _ => "internal server error",
        };
        Reply {
            status: Some((code, message.to_string())),
            ..Reply::default()
        }
    }
    pub fn retry_after(mut self, secs: f64) -> Reply {
        self.retry_after = Some(format!("{secs}"));
        self
    }
    pub fn context_length_error() -> Reply {
        Reply {
            status: Some((
                400,
                "prompt is too long: 210000 tokens > 200000 maximum (context_length_exceeded)"
                    .to_string(),
            )),
            ..Reply::default()
        }
    }
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Value>>,
    headers: Mutex<Vec<Vec<(String, String)>>>,
}

pub struct MockModel {
    format: Format,
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockModel {
    pub async fn start(format: Format, replies: Vec<Reply>) -> MockModel {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        Self::serve(format, replies, listener)
    }

    /// Starts on a given listener (the standalone example binds a port).
    pub fn serve(format: Format, replies: Vec<Reply>, listener: TcpListener) -> MockModel {
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            ..Shared::default()
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = handle(sock, format, s).await;
                });
            }
        });
        MockModel {
            format,
            addr,
            shared,
            task,
        }
    }

    /// The base URL to configure: `…/v1` for OpenAI, the root for Anthropic.
    pub fn url(&self) -> String {
        match self.format {
            Format::OpenAi => format!("http://{}/v1", self.addr),
            Format::Anthropic => format!("http://{}", self.addr),
        }
    }

    pub fn push(&self, reply: Reply) {
        self.shared.replies.lock().unwrap().push_back(reply);
    }

    /// Replies not yet used.
    pub fn pending(&self) -> usize {
        self.shared.replies.lock().unwrap().len()
    }

    /// The JSON bodies received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn request_headers(&self) -> Vec<Vec<(String, String)>> {
        self.shared.headers.lock().unwrap().clone()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(mut sock: TcpStream, format: Format, s: Arc<Shared>) -> std::io::Result<()> {
    // Read the head, then the body by Content-Length.
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
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
    let body: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    s.requests.lock().unwrap().push(body);
    s.headers.lock().unwrap().push(headers);
    let reply = s.replies.lock().unwrap().pop_front();
    let Some(reply) = reply else {
        let msg = json!({"error": {"message": "the mock model's script is exhausted"}}).to_string();
        let resp = format!(
            "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{msg}",
            msg.len()
        );
        return sock.write_all(resp.as_bytes()).await;
    };
    if let Some((code, message)) = &reply.status {
        let body = match format {
            Format::OpenAi => json!({"error": {"message": message, "type": "error", "code": code}}),
            Format::Anthropic => {
                json!({"type": "error", "error": {"type": "error", "message": message}})
            }
        }
        .to_string();
        let retry = reply
            .retry_after
            .as_ref()
            .map(|r| format!("retry-after: {r}\r\n"))
            .unwrap_or_default();
        let resp = format!(
            "HTTP/1.1 {code} Error\r\ncontent-type: application/json\r\n{retry}content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        return sock.write_all(resp.as_bytes()).await;
    }
    sock.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    )
    .await?;
    let chunks = match format {
        Format::OpenAi => openai_chunks(&reply),
        Format::Anthropic => anthropic_chunks(&reply),
    };
    for (i, chunk) in chunks.iter().enumerate() {
        if reply.cut_after == Some(i) {
            // Drop the connection mid-stream.
            return sock.shutdown().await;
        }
        sock.write_all(chunk.as_bytes()).await?;
        sock.flush().await?;
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
    }
    sock.shutdown().await
}

fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

fn args_pieces(args: &Value) -> Vec<String> {
    let raw = args.to_string();
    let n = (raw.chars().count() / 3).max(1);
    pieces(&raw, n)
}

fn openai_chunks(r: &Reply) -> Vec<String> {
    let data = |v: Value| format!("data: {v}\n\n");
    let mut out = vec![data(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
    )];
    let mut tool_index = 0;
    let mut has_tools = false;
    for item in &r.items {
        match item {
            Item::Text(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(data(
                        json!({"choices": [{"index": 0, "delta": {"content": p}}]}),
                    ));
                }
            }
            Item::Reasoning(t) => {
                for p in pieces(t, r.chunk_chars) {
                    out.push(data(
                        json!({"choices": [{"index": 0, "delta": {"reasoning_content": p}}]}),
                    ));
                }
            }
            Item::ToolCall { id, name, args } => {
                has_tools = true;
                out.push(data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": tool_index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}}]})));
                for p in args_pieces(args) {
                    out.push(data(
                        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                        {"index": tool_index, "function": {"arguments": p}}]}}]}),
                    ));
                }
                tool_index += 1;
            }
        }
    }
    let finish = if has_tools { "tool_calls" } else { "stop" };
    out.push(data(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
    ));
    out.push(data(json!({"choices": [], "usage": {"prompt_tokens": r.usage.0, "completion_tokens": r.usage.1, "total_tokens": r.usage.0 + r.usage.1}})));
    out.push("data: [DONE]\n\n".to_string());
    out
}

fn anthropic_chunks(r: &Reply) -> Vec<String> {
    let ev = |name: &str, v: Value| format!("event: {name}\ndata: {v}\n\n");
    let mut out = vec![ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "model": "mock", "stop_reason": null,
            "usage": {"input_tokens": r.usage.0, "output_tokens": 1}}}),
    )];
    let mut has_tools = false;
    for (index, item) in r.items.iter().enumerate() {
        match item {
            Item::Text(t) => {
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                for (i, p) in pieces(t, r.chunk_chars).into_iter().enumerate() {
                    if i % 5 == 4 {
                        out.push(ev("ping", json!({"type": "ping"})));
                    }
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})));
                }
            }
            Item::Reasoning(t) => {
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}})));
                for p in pieces(t, r.chunk_chars) {
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}})));
                }
                out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "c2ln"}})));
            }
            Item::ToolCall { id, name, args } => {
                has_tools = true;
                out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                for p in args_pieces(args) {
                    out.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}})));
                }
            }
        }
        out.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = if has_tools { "tool_use" } else { "end_turn" };
    out.push(ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": r.usage.1}})));
    out.push(ev("message_stop", json!({"type": "message_stop"})));
    out
}
