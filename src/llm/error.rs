//! What can go wrong talking to a model, classified so the retry layer
//! knows what is worth another attempt and the person knows what to fix;
//! and why no provider could be set up from the configuration at all.

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// Why no provider could be set up from the configuration (`resolve`).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct ResolveError(pub String);

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum LlmError {
    /// The provider refused the key. `message` ends with where the key
    /// came from once the agent knows it (`llm::explain`). Status 0: cairn
    /// could not get a credential to send (cloud credentials), said whole
    /// in `message`.
    #[error("{}", auth_text(*status, message))]
    Auth { status: u16, message: String },
    #[error(
        "the account has no quota left: {message}. Check the plan and billing of this provider's account."
    )]
    Quota { message: String },
    #[error("rate limited: {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// A limit that lifts only after longer than cairn waits on its own:
    /// said at once, with the wait the provider named.
    #[error(
        "the provider's limit is reached and it asks to wait {} before the next request: {message}. Try again then, or switch model or provider with /model.",
        human_wait(*wait)
    )]
    LimitReached { wait: Duration, message: String },
    #[error("the provider had a server error ({status}): {message}")]
    Server { status: u16, message: String },
    #[error("the conversation is longer than the model's context window: {message}")]
    ContextLength { message: String },
    #[error("the request was refused ({status}): {message}")]
    BadRequest { status: u16, message: String },
    /// A transient transport failure: a reset, a cut stream, a stall.
    #[error("network error: {0}")]
    Network(String),
    /// The server cannot be reached as configured; trying again will not
    /// help (an unknown host name, TLS spoken to a plain-HTTP port, a bad
    /// URL).
    #[error("cannot reach the provider: {0}")]
    Unreachable(String),
    #[error("the provider sent a response cairn could not read: {0}")]
    Malformed(String),
}

fn auth_text(status: u16, message: &str) -> String {
    if status == 0 {
        message.to_string()
    } else {
        format!("the API key was refused ({status}): {message}")
    }
}

/// The longest `retry-after` cairn waits out by itself before retrying.
pub const LONGEST_WAIT: Duration = Duration::from_secs(180);

/// `2 h 5 min`, `12 min`, `40 s`.
fn human_wait(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=119 => format!("{s} s"),
        120..=3599 => format!("{} min", s.div_ceil(60)),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

impl LlmError {
    /// A few words for a retry notice: `server error 529`, `rate limited`.
    pub fn brief(&self) -> String {
        match self {
            LlmError::RateLimited { .. } => "rate limited".into(),
            LlmError::Server { status, .. } => format!("server error {status}"),
            LlmError::Network(cause) | LlmError::Unreachable(cause) => one_line(cause),
            other => one_line(&other.to_string()),
        }
    }

    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. } | LlmError::Server { .. } | LlmError::Network(_)
        )
    }

    /// Classifies an HTTP error response.
    pub fn from_status(status: u16, retry_after: Option<Duration>, body: &str) -> LlmError {
        let message = error_message(body);
        if let Some(e) = from_code(&error_code(body), &message) {
            // A code says more than a status: OpenAI answers an empty
            // account with 429, which must not be retried as a rate limit.
            if !matches!(e, LlmError::RateLimited { .. } | LlmError::Server { .. }) {
                return e;
            }
        }
        if body.contains("API_KEY_INVALID") || body.contains("API key not valid") {
            // Gemini answers a bad key with 400.
            return LlmError::Auth { status, message };
        }
        let context = mentions_context_length(body);
        match status {
            401 | 403 => LlmError::Auth { status, message },
            402 => LlmError::Quota { message },
            429 => match retry_after {
                Some(wait) if wait > LONGEST_WAIT => LlmError::LimitReached { wait, message },
                _ => LlmError::RateLimited {
                    retry_after,
                    message,
                },
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

    /// Classifies an error object sent inside a 200 stream, whose `code`
    /// may be a number (an HTTP status) or a string (`invalid_api_key`).
    pub fn from_stream_error(err: &Value) -> LlmError {
        let body = serde_json::json!({ "error": err }).to_string();
        let message = error_message(&body);
        let code = error_code(&body);
        if let Some(e) = from_code(&code, &message) {
            return e;
        }
        let status = err
            .get("code")
            .or_else(|| err.get("status"))
            .and_then(Value::as_u64)
            .filter(|s| (400..600).contains(s))
            .unwrap_or(500) as u16;
        LlmError::from_status(status, None, &body)
    }
}

/// Whether an error body says the request did not fit the model's window,
/// in any of the ways servers put it: OpenAI and vLLM ("maximum context
/// length"), Anthropic ("prompt is too long"), Gemini ("input token count …
/// exceeds the maximum"), llama.cpp ("exceeds the available context size"),
/// LM Studio and Ollama ("context length"), LiteLLM
/// (`ContextWindowExceededError` wrapped around any of these).
fn mentions_context_length(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "contextwindowexceeded",
        "exceed_context_size",
        "context length",
        "context size",
        "maximum context",
        "prompt is too long",
        "prompt too long",
        "too many tokens",
        "context window",
        "input is too long",
        "input token count",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// The string codes and types of an error body (`code`, `type`, `status`),
/// lower-cased, joined by spaces.
fn error_code(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return String::new();
    };
    let err = v.get("error").filter(|e| e.is_object()).unwrap_or(&v);
    ["code", "type", "status"]
        .iter()
        .filter_map(|k| err.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase()
}

/// What a string error code means, when it says.
fn from_code(code: &str, message: &str) -> Option<LlmError> {
    let has = |words: &[&str]| words.iter().any(|w| code.contains(w));
    let message = message.to_string();
    if has(&["insufficient_quota", "billing", "quota_exceeded", "credit"]) {
        Some(LlmError::Quota { message })
    } else if has(&[
        "invalid_api_key",
        "authentication",
        "permission",
        "unauthenticated",
        "permission_denied",
        "unauthorized",
    ]) {
        Some(LlmError::Auth {
            status: 401,
            message,
        })
    } else if has(&[
        "context_length_exceeded",
        "exceed_context_size",
        "contextwindowexceeded",
    ]) {
        Some(LlmError::ContextLength { message })
    } else if has(&["rate_limit", "resource_exhausted", "too_many_requests"]) {
        Some(LlmError::RateLimited {
            retry_after: None,
            message,
        })
    } else if has(&[
        "overloaded",
        "server_error",
        "api_error",
        "unavailable",
        "internal",
    ]) {
        Some(LlmError::Server {
            status: 503,
            message,
        })
    } else {
        None
    }
}

/// Pulls the human-readable message out of a JSON error body, or returns a
/// trimmed body.
pub fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let candidates = [
            v.pointer("/error/message"),
            v.pointer("/message"),
            v.pointer("/error"),
            v.pointer("/0/error/message"),
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

/// Parses `retry-after-ms`, or `retry-after` as seconds or as an HTTP date.
pub fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    parse_retry_after_at(headers, SystemTime::now())
}

fn parse_retry_after_at(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_millis(ms.max(0.0) as u64));
    }
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Some(Duration::from_millis((secs.max(0.0) * 1000.0) as u64));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Turns a transport error into a classified one: what cannot succeed on
/// another attempt is said plainly and not retried. Each message keeps one
/// line of cause (the innermost error), not reqwest's whole chain.
pub fn from_transport(e: &reqwest::Error) -> LlmError {
    let chain = describe(e);
    let lower = chain.to_ascii_lowercase();
    let cause = root_cause(e);
    let url = e.url().map(|u| u.to_string()).unwrap_or_default();
    if e.is_builder() || lower.contains("relative url") || lower.contains("invalid url") {
        return LlmError::Unreachable(format!(
            "the base_url is not a valid URL ({cause}); check `base_url` in the provider's config"
        ));
    }
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
        || lower.contains("no such host")
    {
        return LlmError::Unreachable(format!(
            "the host name of {url} could not be resolved ({cause}); check `base_url` and the network"
        ));
    }
    if lower.contains("invalidcontenttype")
        || lower.contains("wrong version number")
        || lower.contains("corrupt message")
        || lower.contains("http request to https")
        || lower.contains("invalid tls")
    {
        return LlmError::Unreachable(format!(
            "{url} does not speak TLS ({cause}); the server is probably plain HTTP: use http:// in `base_url`"
        ));
    }
    if lower.contains("certificate") {
        return LlmError::Unreachable(format!(
            "the TLS certificate of {url} was not accepted ({cause})"
        ));
    }
    if lower.contains("connection refused") {
        return LlmError::Network(format!(
            "nothing answers at {} (connection refused); is the server running?",
            origin(&url)
        ));
    }
    if e.is_timeout() {
        return LlmError::Network(format!("{} did not answer in time", origin(&url)));
    }
    LlmError::Network(cause)
}

/// `scheme://host:port` of a URL, or the URL as given.
fn origin(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.to_string(),
    }
}

/// The innermost error of a chain: what actually went wrong.
fn root_cause(e: &reqwest::Error) -> String {
    let mut last = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        let text = inner.to_string();
        if !text.trim().is_empty() {
            last = text;
        }
        src = inner.source();
    }
    one_line(&last)
}

/// The first line of `s`, trimmed.
fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// A transport error's whole chain, which says more than its top line
/// (kept for the log).
pub fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        let next = inner.to_string();
        if !s.contains(&next) {
            s.push_str(": ");
            s.push_str(&next);
        }
        src = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_statuses() {
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

    #[test]
    fn an_empty_account_answered_with_429_is_not_retried() {
        let e = LlmError::from_status(
            429,
            None,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        );
        assert!(matches!(e, LlmError::Quota { .. }), "{e:?}");
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("billing"));
    }

    #[test]
    fn string_codes_in_a_stream_are_classified() {
        let auth = LlmError::from_stream_error(
            &json!({"code": "invalid_api_key", "message": "Incorrect API key provided"}),
        );
        assert!(matches!(auth, LlmError::Auth { .. }) && !auth.is_retryable());
        let quota =
            LlmError::from_stream_error(&json!({"code": "insufficient_quota", "message": "q"}));
        assert!(matches!(quota, LlmError::Quota { .. }));
        let rate = LlmError::from_stream_error(
            &json!({"code": "rate_limit_exceeded", "message": "slow down"}),
        );
        assert!(matches!(rate, LlmError::RateLimited { .. }) && rate.is_retryable());
        let server = LlmError::from_stream_error(&json!({"code": 502, "message": "bad gateway"}));
        assert!(matches!(server, LlmError::Server { status: 502, .. }));
        let unknown = LlmError::from_stream_error(&json!({"code": "weird", "message": "?"}));
        assert!(
            unknown.is_retryable(),
            "an unknown stream error is a server error"
        );
    }

    #[test]
    fn retry_after_as_an_http_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").unwrap();
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2026 07:28:30 GMT".parse().unwrap(),
        );
        assert_eq!(parse_retry_after_at(&h, now), Some(Duration::from_secs(30)));
        h.insert("retry-after", "2.5".parse().unwrap());
        assert_eq!(
            parse_retry_after_at(&h, now),
            Some(Duration::from_millis(2500))
        );
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2026 07:27:00 GMT".parse().unwrap(),
        );
        assert_eq!(parse_retry_after_at(&h, now), Some(Duration::ZERO));
    }
}

#[cfg(test)]
mod overflow_tests;
