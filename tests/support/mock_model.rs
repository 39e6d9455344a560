//! A scripted model server on 127.0.0.1 that streams exactly as the real
//! services do (OpenAI Chat Completions and Anthropic Messages), with real
//! pacing, and fails on demand. It records every request it receives.
//!
//! It also sends what real servers and proxies send beyond the textbook:
//! tool-call deltas that repeat or omit `index`, streams that end without
//! `[DONE]`, a whole JSON body to a streaming request, errors with string
//! codes inside a 200 stream, `redacted_thinking`, stop reasons, an HTML
//! page, a stall in the middle of a stream. With [`MockModel::cache`] it
//! keeps Anthropic's prompt cache as the service does and reports cache
//! reads and writes from the breakpoints each request carries.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenAi,
    Anthropic,
    /// The OpenAI Responses API.
    Responses,
    /// Gemini's native `streamGenerateContent` (SSE).
    Gemini,
    /// Ollama's native `/api/chat` (NDJSON); answers `/api/show` and
    /// `/api/tags` too.
    Ollama,
    /// Amazon Bedrock's Converse stream (AWS event-stream frames).
    Bedrock,
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
    /// A call whose arguments arrive exactly as given (possibly cut).
    RawToolCall {
        id: String,
        name: String,
        raw: String,
    },
    RedactedThinking(String),
}

/// How tool-call deltas name their call (OpenAI format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolIndex {
    /// `index` 0, 1, 2…, as OpenAI sends.
    #[default]
    Counted,
    /// Every call says `index: 0`; only its `id` tells them apart.
    Repeated,
    /// No `index` at all.
    Omitted,
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
    tool_index: ToolIndex,
    no_done: bool,
    whole_json: bool,
    stream_error: Option<Value>,
    stop: Option<String>,
    html: bool,
    stall: Option<(usize, Duration)>,
    /// During the stall, an SSE comment this often.
    keep_alive: Option<Duration>,
    cache: (u64, u64),
    /// `status`'s message is the whole body, sent as it is.
    raw_body: bool,
    /// Only a request whose body contains this gets this reply (requests
    /// that arrive together, as parallel sub-agents' do, in any order).
    needle: Option<String>,
    /// A search the provider runs itself before the reply's items.
    search: Option<search_wire::Search>,
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
            tool_index: ToolIndex::Counted,
            no_done: false,
            whole_json: false,
            stream_error: None,
            stop: None,
            html: false,
            stall: None,
            keep_alive: None,
            cache: (0, 0),
            raw_body: false,
            needle: None,
            search: None,
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
    /// The provider searches the web for `query` first (in the formats
    /// that can) and finds `pages` (title, url); the text cites the first.
    pub fn searched(mut self, query: &str, pages: &[(&str, &str)]) -> Reply {
        self.search = Some(search_wire::Search {
            query: query.into(),
            pages: pages
                .iter()
                .map(|(t, u)| (t.to_string(), u.to_string()))
                .collect(),
        });
        self
    }
    /// Answers only a request whose JSON body contains `needle`.
    pub fn when(mut self, needle: &str) -> Reply {
        self.needle = Some(needle.to_string());
        self
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
    /// `retry-after` exactly as given (an HTTP date, say).
    pub fn retry_after_raw(mut self, value: &str) -> Reply {
        self.retry_after = Some(value.to_string());
        self
    }
    pub fn raw_tool_call(mut self, id: &str, name: &str, raw: &str) -> Reply {
        self.items.push(Item::RawToolCall {
            id: id.to_string(),
            name: name.to_string(),
            raw: raw.to_string(),
        });
        self
    }
    /// An Anthropic `redacted_thinking` block with this opaque data.
    pub fn redacted_thinking(mut self, data: &str) -> Reply {
        self.items.push(Item::RedactedThinking(data.to_string()));
        self
    }
    pub fn tool_index(mut self, how: ToolIndex) -> Reply {
        self.tool_index = how;
        self
    }
    /// End the stream after `finish_reason` (and usage) without `[DONE]`.
    pub fn without_done(mut self) -> Reply {
        self.no_done = true;
        self
    }
    /// Answer the streaming request with one whole JSON response.
    pub fn whole_json_body(mut self) -> Reply {
        self.whole_json = true;
        self
    }
    /// A 200 stream that sends this error object (OpenAI: `{"error": …}`,
    /// Anthropic: an `error` event) after the first chunk.
    pub fn stream_error(error: Value) -> Reply {
        Reply {
            stream_error: Some(error),
            ..Reply::default()
        }
    }
    /// The stop reason to send, in the format's own words
    /// (`length`/`max_tokens`, `refusal`, …).
    pub fn stop_reason(mut self, reason: &str) -> Reply {
        self.stop = Some(reason.to_string());
        self
    }
    /// A 200 answer carrying an HTML page (a login portal, a proxy).
    pub fn html_page() -> Reply {
        Reply {
            html: true,
            ..Reply::default()
        }
    }
    /// Go silent for `pause` before chunk `at`.
    pub fn stall_before(mut self, at: usize, pause: Duration) -> Reply {
        self.stall = Some((at, pause));
        self
    }
    /// During the stall, send `: keep-alive` comments every `every`, as
    /// servers do while a model thinks.
    pub fn keep_alive(mut self, every: Duration) -> Reply {
        self.keep_alive = Some(every);
        self
    }
    /// Cache tokens to report (read, written), for a script that does not
    /// use [`MockModel::cache`].
    pub fn cache_usage(mut self, read: u64, write: u64) -> Reply {
        self.cache = (read, write);
        self
    }
    /// An HTTP error with exactly this body (a real server's words).
    pub fn error_body(code: u16, body: &str) -> Reply {
        Reply {
            status: Some((code, body.to_string())),
            raw_body: true,
            ..Reply::default()
        }
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
    paths: Mutex<Vec<String>>,
    token_requests: Mutex<Vec<String>>,
    token_lifetime: Mutex<Option<u64>>,
    cache: Mutex<Option<super_cache::PromptCache>>,
    only_model: Mutex<Option<String>>,
    /// The models list answers 401 unless the request carries this key.
    required_key: Mutex<Option<String>>,
    /// Requests with a larger body are refused as too long for the window.
    max_body: Mutex<Option<usize>>,
    /// The models list to answer instead of the usual one.
    models_list: Mutex<Option<Value>>,
    /// Streams being written now, and the most at any one time.
    streaming: std::sync::atomic::AtomicUsize,
    most_streaming: std::sync::atomic::AtomicUsize,
}

#[path = "mock_bedrock.rs"]
mod bedrock_wire;
#[path = "mock_chat.rs"]
mod chat_wire;
#[path = "mock_gemini.rs"]
mod gemini_wire;
#[path = "mock_http.rs"]
mod http;
#[path = "mock_responses.rs"]
mod responses_wire;
#[path = "mock_search.rs"]
pub mod search_wire;
#[path = "mock_cache.rs"]
mod super_cache;
#[allow(unused_imports)]
pub use super_cache::{system_text, tool_result_texts};

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
            Format::OpenAi | Format::Responses => format!("http://{}/v1", self.addr),
            Format::Gemini => format!("http://{}/v1beta", self.addr),
            Format::Ollama | Format::Bedrock => format!("http://{}", self.addr),
            Format::Anthropic => format!("http://{}", self.addr),
        }
    }

    pub fn push(&self, reply: Reply) {
        self.shared.replies.lock().unwrap().push_back(reply);
    }

    /// The most answers that were streaming at the same time.
    pub fn most_concurrent(&self) -> usize {
        self.shared
            .most_streaming
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Replies not yet used.
    pub fn pending(&self) -> usize {
        self.shared.replies.lock().unwrap().len()
    }

    /// Forgets the requests received so far (a long run would keep every
    /// request's whole conversation).
    pub fn forget_requests(&self) {
        self.shared.requests.lock().unwrap().clear();
        self.shared.headers.lock().unwrap().clear();
        self.shared.paths.lock().unwrap().clear();
    }

    /// The JSON bodies received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn request_headers(&self) -> Vec<Vec<(String, String)>> {
        self.shared.headers.lock().unwrap().clone()
    }

    /// The form bodies posted to the OAuth token endpoint (`/token`).
    pub fn token_requests(&self) -> Vec<String> {
        self.shared.token_requests.lock().unwrap().clone()
    }

    /// The `expires_in` the token endpoint gives (3600 unless set).
    pub fn token_lifetime(&self, secs: u64) {
        *self.shared.token_lifetime.lock().unwrap() = Some(secs);
    }

    /// Answers `GET …/models` with this list (a server's own metadata).
    pub fn models_list(&self, list: Value) {
        *self.shared.models_list.lock().unwrap() = Some(list);
    }

    /// The request targets (path and query), in order.
    pub fn request_paths(&self) -> Vec<String> {
        self.shared.paths.lock().unwrap().clone()
    }

    /// Serve `model` alone, as a server with a single model does: a
    /// request whose body names any other gets a 404 "not found" (recorded, and
    /// using no scripted reply).
    pub fn only_model(&self, model: &str) {
        *self.shared.only_model.lock().unwrap() = Some(model.to_string());
    }

    /// Refuse, as a model with a small window does (400, context length
    /// exceeded, no scripted reply used), every request whose JSON body is
    /// larger than `bytes`. Recorded like any other request.
    pub fn refuse_over(&self, bytes: usize) {
        *self.shared.max_body.lock().unwrap() = Some(bytes);
    }

    /// Have the models list refuse (401) any key but `key`, as a real
    /// provider refuses a wrong one.
    pub fn require_key(&self, key: &str) {
        *self.shared.required_key.lock().unwrap() = Some(key.to_string());
    }

    /// Keep a prompt cache as Anthropic does: each request's usage is
    /// computed from its `cache_control` breakpoints and what earlier
    /// requests wrote.
    pub fn cache(&self) {
        *self.shared.cache.lock().unwrap() = Some(super_cache::PromptCache::default());
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(mut sock: TcpStream, format: Format, s: Arc<Shared>) -> std::io::Result<()> {
    let Some(req) = http::read_request(&mut sock).await? else {
        return Ok(());
    };
    if let Some(resp) = http::side_endpoint(format, &req, &s) {
        return sock.write_all(resp.as_bytes()).await;
    }
    if req.target == "/token" {
        return token_endpoint(&mut sock, &s, &req.body).await;
    }
    // A metadata server's token (GCE_METADATA_HOST pointed here): recorded
    // by its address, which carries the scopes.
    if req.target.starts_with(METADATA_TOKEN) {
        return token_endpoint(&mut sock, &s, req.target.as_bytes()).await;
    }
    if req.head.starts_with("GET ") {
        // Model calls are POSTs; a probe of an endpoint this server lacks
        // (`/props`, `/model/info`) gets what real servers answer.
        s.paths.lock().unwrap().push(req.target.clone());
        let resp = http::response(
            "404 Not Found",
            "application/json",
            "",
            r#"{"error":"not found"}"#,
        );
        return sock.write_all(resp.as_bytes()).await;
    }
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let refused = s.only_model.lock().unwrap().clone().and_then(|only| {
        let asked = body["model"].as_str()?;
        (asked != only).then(|| asked.to_string())
    });
    let too_long = s
        .max_body
        .lock()
        .unwrap()
        .is_some_and(|max| req.body.len() > max);
    let cached = s.cache.lock().unwrap().as_mut().map(|c| c.account(&body));
    let raw = body.to_string();
    s.requests.lock().unwrap().push(body);
    s.headers.lock().unwrap().push(req.headers);
    s.paths.lock().unwrap().push(req.target);
    if let Some(asked) = refused {
        let body = http::error_body(format, 404, &format!("model `{asked}` not found"));
        let resp = http::response("404 Not Found", "application/json", "", &body);
        return sock.write_all(resp.as_bytes()).await;
    }
    if too_long {
        let body = http::error_body(
            format,
            400,
            "prompt is too long: the request exceeds the model's context window (context_length_exceeded)",
        );
        let resp = http::response("400 Bad Request", "application/json", "", &body);
        return sock.write_all(resp.as_bytes()).await;
    }
    let reply = {
        let mut replies = s.replies.lock().unwrap();
        let at = replies
            .iter()
            .position(|r| r.needle.as_ref().is_none_or(|n| raw.contains(n.as_str())));
        at.and_then(|i| replies.remove(i))
    }
    .map(|mut r| {
        if let Some((input, read, write)) = cached {
            r.usage.0 = input;
            r.cache = (read, write);
        }
        r
    });
    let Some(reply) = reply else {
        let msg = json!({"error": {"message": "the mock model's script is exhausted"}}).to_string();
        let resp = http::response("500 Internal Server Error", "application/json", "", &msg);
        return sock.write_all(resp.as_bytes()).await;
    };
    if let Some((code, message)) = &reply.status {
        let body = if reply.raw_body {
            message.clone()
        } else {
            http::error_body(format, *code, message)
        };
        let retry = reply
            .retry_after
            .as_ref()
            .map(|r| format!("retry-after: {r}\r\n"))
            .unwrap_or_default();
        let resp = http::response(&format!("{code} Error"), "application/json", &retry, &body);
        return sock.write_all(resp.as_bytes()).await;
    }
    if reply.html || reply.whole_json {
        let (ct, body) = if reply.html {
            (
                "text/html; charset=utf-8",
                "<!DOCTYPE html><html><head><title>Sign in - Corporate Proxy</title></head><body>Please sign in.</body></html>".to_string(),
            )
        } else {
            ("application/json", super_cache::whole_json(format, &reply))
        };
        return sock
            .write_all(http::response("200 OK", ct, "", &body).as_bytes())
            .await;
    }
    use std::sync::atomic::Ordering::SeqCst;
    let now = s.streaming.fetch_add(1, SeqCst) + 1;
    s.most_streaming.fetch_max(now, SeqCst);
    let written = write_stream(&mut sock, format, &reply).await;
    s.streaming.fetch_sub(1, SeqCst);
    written
}

/// A 200 stream of the reply in the format's framing, paced, cut or
/// stalled as the reply says.
async fn write_stream(sock: &mut TcpStream, format: Format, reply: &Reply) -> std::io::Result<()> {
    let content_type = match format {
        Format::Ollama => "application/x-ndjson",
        Format::Bedrock => "application/vnd.amazon.eventstream",
        _ => "text/event-stream",
    };
    sock.write_all(
        format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await?;
    let chunks: Vec<Vec<u8>> = match format {
        Format::OpenAi => bytes(chat_wire::openai_chunks(reply)),
        Format::Anthropic => bytes(chat_wire::anthropic_chunks(reply)),
        Format::Responses => bytes(responses_wire::chunks(reply)),
        Format::Gemini => bytes(gemini_wire::gemini_chunks(reply)),
        Format::Ollama => bytes(gemini_wire::ollama_lines(reply)),
        Format::Bedrock => bedrock_wire::frames(reply),
    };
    for (i, chunk) in chunks.iter().enumerate() {
        if reply.cut_after == Some(i) {
            // Drop the connection mid-stream.
            return sock.shutdown().await;
        }
        if let Some((at, pause)) = reply.stall
            && at == i
        {
            match reply.keep_alive {
                Some(every) => {
                    let until = tokio::time::Instant::now() + pause;
                    while tokio::time::Instant::now() < until {
                        sock.write_all(b": keep-alive\n\n").await?;
                        sock.flush().await?;
                        tokio::time::sleep(every).await;
                    }
                }
                None => tokio::time::sleep(pause).await,
            }
        }
        sock.write_all(chunk).await?;
        sock.flush().await?;
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
    }
    sock.shutdown().await
}

fn bytes(chunks: Vec<String>) -> Vec<Vec<u8>> {
    chunks.into_iter().map(String::into_bytes).collect()
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

/// Where a Google metadata server hands out the machine's token.
pub const METADATA_TOKEN: &str = "/computeMetadata/v1/instance/service-accounts/default/token";

/// An OAuth token endpoint (Google's `token_uri`, an STS exchange, the
/// metadata server's token): records the request and hands out a new
/// access token each time.
async fn token_endpoint(sock: &mut TcpStream, s: &Shared, body: &[u8]) -> std::io::Result<()> {
    let form = String::from_utf8_lossy(body).into_owned();
    let n = {
        let mut t = s.token_requests.lock().unwrap();
        t.push(form);
        t.len()
    };
    let lifetime = s.token_lifetime.lock().unwrap().unwrap_or(3600);
    let body = json!({"access_token": format!("ya29.test-token-{n}"), "expires_in": lifetime,
        "token_type": "Bearer", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
    .to_string();
    let resp = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(resp.as_bytes()).await
}
