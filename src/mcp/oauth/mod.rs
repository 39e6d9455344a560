//! OAuth for remote (streamable HTTP) MCP servers: `cairn mcp login` gets
//! tokens ([`login`]), they are kept per server in a 0600 file
//! ([`TokenStore`]), and a connection to a server that has them goes through
//! rmcp's `AuthClient`, which sends the token, refreshes it when it expires
//! or the server answers 401, and saves the new one.

mod callback;
mod login;
mod store;

use rmcp::transport::auth::{AuthClient, AuthorizationManager};

pub use login::{LoggedIn, LoginTarget, login};
pub use store::TokenStore;

/// Why a login did not finish, in words a person can act on.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("this system has no data directory to keep tokens in (is HOME set?)")]
    NoDataDir,
    #[error("cannot reach {url}: {why}")]
    Unreachable { url: String, why: String },
    #[error(
        "the server at {url} does not ask for authorization and publishes no OAuth metadata, \
         so it needs no login"
    )]
    NotProtected { url: String },
    #[error("finding the server's authorization server failed: {0}")]
    Discovery(String),
    #[error("the authorization server did not register cairn as a client: {0}")]
    Registration(String),
    #[error(
        "the server's metadata names an authorization page that is not a web address \
         (http or https); it was not opened"
    )]
    NotWebPage,
    #[error("cannot listen on 127.0.0.1 for the browser's return: {0}")]
    Listener(std::io::Error),
    #[error("the browser did not come back within {0} s; run the command again")]
    TimedOut(u64),
    #[error("the authorization server refused: {0}")]
    Denied(String),
    #[error("exchanging the authorization code for tokens failed: {0}")]
    Exchange(String),
}

/// The HTTP client for requests to MCP servers that use OAuth. Redirects
/// are not followed: a redirected POST would lose its body, and a redirect
/// to another host would carry the token there.
pub(crate) fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

/// The authorised client for `server` at `url` when a login is stored for
/// it; `None` when there is none. The error says what to do.
pub(crate) async fn stored_login(
    server: &str,
    url: &str,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    let Some(store) = TokenStore::in_data_dir(server, url) else {
        return Ok(None);
    };
    if !store.has_tokens() {
        return Ok(None);
    }
    let again = |e: &dyn std::fmt::Display| {
        format!("its stored login could not be used ({e}); run `cairn mcp login {server}` again")
    };
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| again(&e))?;
    manager.set_credential_store(store);
    match manager.initialize_from_store().await {
        Ok(true) => {
            let client = http_client().map_err(|e| again(&e))?;
            Ok(Some(AuthClient::new(client, manager)))
        }
        Ok(false) => Ok(None),
        Err(e) => Err(again(&e)),
    }
}
