//! The older HTTP+SSE transport (protocol revision 2024-11-05), which rmcp
//! has no client for: a `GET` opens an event stream whose first `endpoint`
//! event names the URL to `POST` messages to; the server's messages arrive
//! as `message` events on the stream.

use std::borrow::Cow;
use std::future::Future;

use futures::StreamExt;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, watch};

use crate::llm::sse::{SseEvent, SseParser};

/// Messages from the server waiting to be read.
const INCOMING: usize = 64;

#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    #[error("the event stream ended before the server named its message endpoint")]
    NoEndpoint,
    #[error("posting a message failed: {0}")]
    Post(reqwest::Error),
    #[error("the server answered a posted message with HTTP {0}")]
    Status(u16),
}

pub(crate) struct SseTransport {
    http: reqwest::Client,
    headers: HeaderMap,
    endpoint: watch::Receiver<Option<reqwest::Url>>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

/// Opens the event stream at `url`. `Err` is the reason shown for the
/// server, and the HTTP status when it answered with one.
pub(crate) async fn open(
    url: &str,
    headers: HeaderMap,
) -> Result<SseTransport, (String, Option<u16>)> {
    let url = reqwest::Url::parse(url).map_err(|e| (format!("`{url}` is not a URL: {e}"), None))?;
    let http = reqwest::Client::new();
    let response = http
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
        .send()
        .await
        .map_err(|e| {
            if e.is_connect() {
                (
                    format!(
                        "nothing answers at {url}; is the server running, and is the address right?"
                    ),
                    None,
                )
            } else {
                (format!("the request to {url} failed: {e}"), None)
            }
        })?;
    let status = response.status();
    if !status.is_success() {
        let hint = match status.as_u16() {
            401 | 403 => "; it needs authorization: give it a token under `headers`",
            404 | 405 => "; check the URL (HTTP+SSE servers usually serve /sse)",
            _ => "",
        };
        return Err((
            format!("the server at {url} answered HTTP {status}{hint}"),
            Some(status.as_u16()),
        ));
    }
    let (endpoint_tx, endpoint) = watch::channel(None);
    let (incoming_tx, incoming) = mpsc::channel(INCOMING);
    let reader = tokio::spawn(read_events(response, url, endpoint_tx, incoming_tx));
    Ok(SseTransport {
        http,
        headers,
        endpoint,
        incoming,
        reader,
    })
}

/// Reads the stream until it ends: the endpoint first, then messages.
async fn read_events(
    response: reqwest::Response,
    base: reqwest::Url,
    endpoint: watch::Sender<Option<reqwest::Url>>,
    incoming: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    let mut parser = SseParser::default();
    let mut bytes = response.bytes_stream();
    let mut events = Vec::new();
    while let Some(Ok(chunk)) = bytes.next().await {
        parser.push(&chunk, &mut events);
        for SseEvent { event, data } in events.drain(..) {
            match event.as_str() {
                "endpoint" => match base.join(data.trim()) {
                    Ok(url) => {
                        let _ = endpoint.send(Some(url));
                    }
                    Err(e) => tracing::warn!("MCP SSE endpoint `{data}` is not a URL: {e}"),
                },
                "" | "message" => match serde_json::from_str(&data) {
                    Ok(message) => {
                        if incoming.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!("MCP SSE message is not JSON-RPC: {e}"),
                },
                other => tracing::debug!("MCP SSE event `{other}` ignored"),
            }
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "HTTP+SSE".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let http = self.http.clone();
        let headers = self.headers.clone();
        let mut endpoint = self.endpoint.clone();
        async move {
            let url = endpoint
                .wait_for(Option::is_some)
                .await
                .map_err(|_| SseError::NoEndpoint)?
                .clone()
                .ok_or(SseError::NoEndpoint)?;
            let response = http
                .post(url)
                .headers(headers)
                .json(&item)
                .send()
                .await
                .map_err(SseError::Post)?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError::Status(response.status().as_u16()))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        std::future::ready(Ok(()))
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
