//! Model providers: one streaming trait, two wire formats.
//!
//! `llm` knows a tool only as a [`ToolSpec`]: name, description, schema.

pub mod anthropic;
pub mod models;
pub mod openai;
pub mod retry;
pub mod sse;

use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures::Stream;
use serde::{Deserialize, Serialize};

use crate::conversation::Message;

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// One request to the model.
#[derive(Debug, Clone)]
pub struct Request {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// Ask for reasoning/thinking where the model supports it.
    pub reasoning: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
    /// Tokens the context window holds after this exchange.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    Other(String),
}

/// What a provider stream yields, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    ReasoningSignature(String),
    /// A tool call begins. `index` identifies it among this response's calls.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of the call's JSON arguments.
    ToolCallDelta {
        index: usize,
        fragment: String,
    },
    Usage(Usage),
    /// The stream was cut and restarted by the retry layer after text had
    /// already been shown, and the new attempt's text differs from it:
    /// consumers drop what they have of this response and start over.
    Reset,
    Done(StopReason),
}

pub use models::{ModelCatalog, ModelInfo};

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum LlmError {
    #[error(
        "authentication failed ({status}): {message}. Check the API key in the environment variable your provider uses."
    )]
    Auth { status: u16, message: String },
    #[error("rate limited: {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("the provider had a server error ({status}): {message}")]
    Server { status: u16, message: String },
    #[error("the conversation is longer than the model's context window: {message}")]
    ContextLength { message: String },
    #[error("the request was refused ({status}): {message}")]
    BadRequest { status: u16, message: String },
    #[error("network error: {0}")]
    Network(String),
    #[error("the provider sent a response cairn could not read: {0}")]
    Malformed(String),
}

impl LlmError {
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. } | LlmError::Server { .. } | LlmError::Network(_)
        )
    }

    /// Classifies an HTTP error response.
    pub fn from_status(status: u16, retry_after: Option<Duration>, body: &str) -> LlmError {
        let message = error_message(body);
        let lower = body.to_ascii_lowercase();
        let context = lower.contains("context_length_exceeded")
            || lower.contains("context length")
            || lower.contains("maximum context")
            || lower.contains("prompt is too long")
            || lower.contains("too many tokens")
            || lower.contains("context window");
        match status {
            401 | 403 => LlmError::Auth { status, message },
            429 => LlmError::RateLimited {
                retry_after,
                message,
            },
            400 | 413 | 422 if context => LlmError::ContextLength { message },
            408 | 409 | 425 => LlmError::Server { status, message },
            s if s >= 500 => {
                if context {
                    LlmError::ContextLength { message }
                } else {
                    LlmError::Server { status, message }
                }
            }
            _ => LlmError::BadRequest { status, message },
        }
    }
}

/// Pulls the human-readable message out of a JSON error body, or returns a
/// trimmed body.
pub fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let candidates = [
            v.pointer("/error/message"),
            v.pointer("/message"),
            v.pointer("/error"),
        ];
        for c in candidates.into_iter().flatten() {
            if let Some(s) = c.as_str() {
                return s.to_string();
            }
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        "(no details given)".to_string()
    } else {
        trimmed.chars().take(500).collect()
    }
}

/// Parses a `retry-after` header: seconds, or `retry-after-ms`.
pub fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_millis(ms.max(0.0) as u64));
    }
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map(|secs| Duration::from_millis((secs.max(0.0) * 1000.0) as u64))
}

#[async_trait]
pub trait Provider: Send + Sync {
    /// The configured name of this provider ("anthropic", "local", ...).
    fn name(&self) -> &str;
    /// Starts one streaming request. Connection and HTTP errors surface here;
    /// errors after the stream starts surface as stream items.
    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    #[default]
    Openai,
    Anthropic,
}

/// Everything needed to talk to one provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key: Option<String>,
    /// Extra headers (Azure's `api-key`, OpenRouter's referer, ...).
    pub headers: Vec<(String, String)>,
    /// Extra query parameters (Azure's `api-version`).
    pub query: Vec<(String, String)>,
    /// Send the key as `api-key` instead of a bearer token (Azure).
    pub azure: bool,
    pub request_timeout: Duration,
}

pub fn http_client(timeout: Duration) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(timeout)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Network(e.to_string()))
}

/// Builds the provider for its wire format.
pub fn build_provider(settings: ProviderSettings) -> Result<Box<dyn Provider>, LlmError> {
    Ok(match settings.kind {
        ProviderKind::Openai => Box::new(openai::OpenAi::new(settings)?),
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(settings)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_errors() {
        assert!(matches!(
            LlmError::from_status(401, None, r#"{"error":{"message":"bad key"}}"#),
            LlmError::Auth { message, .. } if message == "bad key"
        ));
        assert!(matches!(
            LlmError::from_status(
                400,
                None,
                r#"{"error":{"code":"context_length_exceeded","message":"too long"}}"#
            ),
            LlmError::ContextLength { .. }
        ));
        assert!(matches!(
            LlmError::from_status(400, None, "{}"),
            LlmError::BadRequest { .. }
        ));
        assert!(LlmError::from_status(503, None, "").is_retryable());
        assert!(!LlmError::from_status(401, None, "").is_retryable());
    }
}
