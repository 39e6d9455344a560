//! rmcp's errors in words a person can act on: what went wrong with which
//! server, and what to do. No Rust type names (rmcp's transport errors
//! carry them) and no HTML error pages.

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// Longest piece of a server's error body quoted back.
const BODY_QUOTE: usize = 200;

/// What a request to an HTTP server carried to prove who is asking, which
/// decides what its 401 means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Credentials {
    /// Nothing: the server wants a login.
    None,
    /// An `Authorization` header from the configuration: it was refused.
    Header,
    /// Tokens from `cairn mcp login`, refused even after a refresh.
    Login,
}

/// Why connecting to an HTTP server failed.
pub(crate) struct Failure {
    pub(crate) reason: String,
    /// The HTTP status, when the server answered with one.
    pub(crate) status: Option<u16>,
    /// The person must log in (again) before the server will talk.
    pub(crate) needs_login: bool,
}

impl Failure {
    fn plain(reason: String, status: Option<u16>) -> Failure {
        Failure {
            reason,
            status,
            needs_login: false,
        }
    }
}

/// Why connecting to the HTTP server `server` at `url` failed.
pub(crate) fn connect_failure(
    server: &str,
    url: &str,
    credentials: Credentials,
    e: &ClientInitializeError,
) -> Failure {
    let reason = match e {
        ClientInitializeError::TransportError { error, .. } => {
            return transport_failure(server, url, credentials, error);
        }
        ClientInitializeError::JsonRpcError(data) => format!(
            "the server at {url} refused to start a session: {}",
            data.message
        ),
        ClientInitializeError::ConnectionClosed(_) => {
            format!("the server at {url} closed the connection while starting")
        }
        other => format!("the server at {url} did not start an MCP session properly ({other})"),
    };
    Failure::plain(reason, None)
}

fn transport_failure(
    server: &str,
    url: &str,
    credentials: Credentials,
    error: &DynamicTransportError,
) -> Failure {
    let Some(http) = error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()
    else {
        return Failure::plain(
            format!("the connection to {url} failed: {}", error.error),
            None,
        );
    };
    let (reason, status) = match http {
        StreamableHttpError::Client(e) => (request_failure(url, e), None),
        StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => {
            return unauthorized(server, url, credentials);
        }
        StreamableHttpError::Auth(e) => (
            format!(
                "its stored login could not be used ({e}); run `cairn mcp login {server}` again"
            ),
            None,
        ),
        StreamableHttpError::HttpStatus(s) => (
            format!("the server at {url} answered HTTP {}", s.status),
            Some(s.status),
        ),
        StreamableHttpError::UnexpectedServerResponse(text) => unexpected_response(url, text),
        other => (
            format!("the server at {url} answered in a way cairn cannot use: {other}"),
            None,
        ),
    };
    Failure::plain(reason, status)
}

/// What a 401 means, given what the request carried.
pub(crate) fn unauthorized(server: &str, url: &str, credentials: Credentials) -> Failure {
    let (reason, needs_login) = match credentials {
        Credentials::None => (
            format!(
                "needs login: the server at {url} asks for authorization; run `cairn mcp login \
                 {server}` (or give it a token with `headers = {{ Authorization = \"Bearer \
                 ${{TOKEN}}\" }}` under [mcp.{server}])"
            ),
            true,
        ),
        Credentials::Login => (
            format!(
                "needs login: the server at {url} refused cairn's stored login and it could not \
                 be refreshed; run `cairn mcp login {server}` again"
            ),
            true,
        ),
        Credentials::Header => (
            format!(
                "the server at {url} refused the Authorization header set under [mcp.{server}] \
                 (HTTP 401); check the token it sends"
            ),
            false,
        ),
    };
    Failure {
        reason,
        status: Some(401),
        needs_login,
    }
}

/// A request that got no HTTP answer, in plain words.
fn request_failure(url: &str, e: &reqwest::Error) -> String {
    if e.is_connect() {
        format!("nothing answers at {url}; is the server running, and is the address right?")
    } else if e.is_timeout() {
        format!("{url} did not answer in time")
    } else {
        format!("the request to {url} failed: {}", reqwest_reason(e))
    }
}

/// A reqwest error as one line: its own words and its causes', without
/// type names.
pub(crate) fn reqwest_reason(e: &reqwest::Error) -> String {
    if e.is_connect() {
        return "nothing answers there; is the server running, and is the address right?"
            .to_string();
    }
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

/// rmcp words an HTTP error as `HTTP 404 Not Found: <body>`.
fn unexpected_response(url: &str, text: &str) -> (String, Option<u16>) {
    let Some(rest) = text.strip_prefix("HTTP ") else {
        return (
            format!("the server at {url} answered unexpectedly: {}", quote(text)),
            None,
        );
    };
    let (status_line, body) = rest.split_once(": ").unwrap_or((rest, ""));
    let status = status_line
        .split_whitespace()
        .next()
        .and_then(|code| code.parse::<u16>().ok());
    let mut why = format!("the server at {url} answered HTTP {}", status_line.trim());
    let body = quote(body);
    if !body.is_empty() {
        why.push_str(&format!(" ({body})"));
    }
    if matches!(status, Some(404 | 405)) {
        why.push_str(
            "; check the URL (streamable HTTP servers usually serve /mcp, older SSE ones /sse)",
        );
    }
    (why, status)
}

/// A short, plain piece of an error body: an HTML page becomes nothing
/// (its title says no more than the status), anything else is cut.
fn quote(body: &str) -> String {
    let body = body.trim();
    let lower = body.to_ascii_lowercase();
    if lower.starts_with('<') || lower.contains("<html") || lower.contains("<body") {
        return String::new();
    }
    let one_line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > BODY_QUOTE {
        let cut: String = one_line.chars().take(BODY_QUOTE).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// Why a stdio session did not start, without rmcp's type names.
pub(crate) fn init_failure(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, .. } => error.error.to_string(),
        other => other.to_string(),
    }
}

/// A failed request on an open session, without rmcp's type names.
pub(crate) fn service_failure(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportSend(error) => format!("sending failed: {}", error.error),
        ServiceError::TransportClosed => "the connection is closed".to_string(),
        ServiceError::McpError(data) => data.message.to_string(),
        ServiceError::Timeout { timeout } => format!("no answer within {} s", timeout.as_secs()),
        ServiceError::Cancelled { .. } => "the request was cancelled".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_pages_are_dropped_and_404_says_what_to_check() {
        let (why, status) = unexpected_response(
            "http://h/x",
            "HTTP 404 Not Found: <html><body><h1>Not Found</h1></body></html>",
        );
        assert_eq!(status, Some(404));
        assert!(!why.contains('<'), "{why}");
        assert!(
            why.contains("HTTP 404 Not Found") && why.contains("check the URL"),
            "{why}"
        );
        let (why, status) =
            unexpected_response("http://h/x", "HTTP 400 Bad Request: {\"error\":\"bad\"}");
        assert_eq!(status, Some(400));
        assert!(why.ends_with("({\"error\":\"bad\"})"), "{why}");
        assert_eq!(quote(&"x".repeat(500)).chars().count(), BODY_QUOTE + 1);
    }

    #[test]
    fn a_401_says_what_to_do_for_what_was_sent() {
        let url = "https://h/mcp";
        let none = unauthorized("docs", url, Credentials::None);
        assert!(none.needs_login && none.reason.starts_with("needs login"));
        assert!(
            none.reason.contains("run `cairn mcp login docs`"),
            "{}",
            none.reason
        );
        let login = unauthorized("docs", url, Credentials::Login);
        assert!(login.needs_login && login.reason.contains("`cairn mcp login docs` again"));
        let header = unauthorized("docs", url, Credentials::Header);
        assert!(!header.needs_login && header.reason.contains("refused the Authorization header"));
        assert_eq!(header.status, Some(401));
    }
}
