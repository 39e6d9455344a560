//! `cairn mcp login`: find the server's authorization server (from the
//! `WWW-Authenticate` of a 401, through protected-resource metadata, or the
//! authorization server's own metadata), register cairn with it, send the
//! person to its authorization page, take the code back on a loopback
//! listener, and exchange it, with PKCE, for tokens kept in the token file.
//! rmcp's `AuthorizationManager` and `AuthorizationSession` do the protocol.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderName, HeaderValue, WWW_AUTHENTICATE};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest, AuthorizationSession,
};

use super::callback::Loopback;
use super::store::TokenStore;
use super::{OAuthError, http_client};

/// The name cairn registers under.
const CLIENT_NAME: &str = "cairn";

/// What a login needs: the server, as configured.
pub struct LoginTarget<'a> {
    pub server: &'a str,
    /// The server's URL, `${VAR}` already filled in.
    pub url: &'a str,
    /// The headers the configuration sends it.
    pub headers: HashMap<HeaderName, HeaderValue>,
    /// How long the person has to finish in the browser.
    pub wait: Duration,
}

/// A finished login.
#[derive(Debug)]
pub struct LoggedIn {
    /// Where the tokens are.
    pub path: PathBuf,
}

/// Logs in to `target`: `show` is given the authorization URL to open (and
/// print), then this waits for the browser to come back.
pub async fn login(
    target: &LoginTarget<'_>,
    show: &(dyn Fn(&str) + Sync),
) -> Result<LoggedIn, OAuthError> {
    let store = TokenStore::in_data_dir(target.server, target.url).ok_or(OAuthError::NoDataDir)?;
    let challenge = probe(target).await?;
    let mut manager = AuthorizationManager::new(target.url)
        .await
        .map_err(|e| OAuthError::Discovery(e.to_string()))?;
    manager.set_credential_store(store.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| OAuthError::Discovery(e.to_string()))?;
    if challenge.is_none()
        && resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback
    {
        return Err(OAuthError::NotProtected {
            url: target.url.to_string(),
        });
    }
    manager.set_metadata(resolution.metadata);

    let loopback = Loopback::bind().await.map_err(OAuthError::Listener)?;
    let request = AuthorizationRequest::new(loopback.redirect_uri())
        .with_client_name(CLIENT_NAME)
        .with_initial_scope_selection();
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| OAuthError::Registration(e.to_string()))?;
    // The address comes from the server's metadata: only a web page is
    // printed and handed to the browser (never `file:` or `javascript:`).
    let address = crate::mcp::browser::web_address(session.get_authorization_url())
        .ok_or(OAuthError::NotWebPage)?;
    let state = super::callback::state_of(&address).unwrap_or_default();
    show(&address);

    let callback = tokio::time::timeout(target.wait, loopback.wait(&state))
        .await
        .map_err(|_| OAuthError::TimedOut(target.wait.as_secs()))?
        .map_err(OAuthError::Listener)?;
    if let Some(denied) = refusal(&callback.url) {
        callback.reply(false, &denied).await;
        return Err(OAuthError::Denied(denied));
    }
    match session.handle_callback_url(&callback.url).await {
        Ok(_) => {
            let done = format!(
                "cairn is logged in to MCP server `{}`. You can close this tab.",
                target.server
            );
            callback.reply(true, &done).await;
            Ok(LoggedIn {
                path: store.path().to_path_buf(),
            })
        }
        Err(e) => {
            let why = e.to_string();
            callback.reply(false, &why).await;
            Err(OAuthError::Exchange(why))
        }
    }
}

/// Asks the server to start a session without a token: a 401 carries the
/// `WWW-Authenticate` challenge discovery starts from.
async fn probe(target: &LoginTarget<'_>) -> Result<Option<String>, OAuthError> {
    let unreachable = |e: reqwest::Error| OAuthError::Unreachable {
        url: target.url.to_string(),
        why: super::super::errors::reqwest_reason(&e),
    };
    let client = http_client().map_err(unreachable)?;
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let mut request = client
        .post(target.url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .timeout(Duration::from_secs(15));
    for (name, value) in &target.headers {
        request = request.header(name, value);
    }
    let response = request.send().await.map_err(unreachable)?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string))
}

/// The authorization server's `error` (and description) on the redirect,
/// when the person or the server said no.
fn refusal(callback_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(callback_url).ok()?;
    let pairs: HashMap<String, String> = url.query_pairs().into_owned().collect();
    let error = pairs.get("error")?;
    Some(match pairs.get("error_description") {
        Some(description) => format!("{error}: {description}"),
        None => error.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_on_the_redirect_is_read() {
        assert_eq!(
            refusal("http://127.0.0.1:1/callback?error=access_denied&error_description=no+thanks"),
            Some("access_denied: no thanks".to_string())
        );
        assert_eq!(refusal("http://127.0.0.1:1/callback?code=x&state=y"), None);
    }
}
