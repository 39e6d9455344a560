//! `cairn mcp login NAME` and `cairn mcp logout NAME`: OAuth for a remote
//! (streamable HTTP) server. The authorization page opens in the browser
//! (`CAIRN_BROWSER` names another command to open it with, or `none` to
//! only print it); the tokens land 0600 in cairn's data directory.

use std::io::Write;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use crate::mcp::oauth::{self, LoginTarget, TokenStore};
use crate::mcp::{McpManager, ServerState};

/// How long the person has to finish in the browser.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

pub async fn login(name: &str, overrides: &crate::cli::startup::Overrides) -> Result<u8> {
    let config = super::mcp_servers::load(overrides)?;
    let server = super::mcp_servers::find(&config, name)?;
    let Some(url) = &server.url else {
        bail!(
            "MCP server `{name}` is a local command; only remote (URL) servers log in. \
             Give a local server its secrets with `env` under [mcp.{name}]"
        );
    };
    if server.transport.as_deref() == Some("sse") {
        bail!(
            "MCP server `{name}` uses the older HTTP+SSE transport, for which cairn has no \
             login; give it a token with `headers` under [mcp.{name}]"
        );
    }
    // A project's entry gets no secret of the person's, as when it starts.
    let url = crate::mcp::expand_for(server, url).map_err(|e| anyhow!("[mcp.{name}] url: {e}"))?;
    let headers = crate::mcp::headers_for(server).map_err(|e| anyhow!("[mcp.{name}]: {e}"))?;
    if headers.contains_key(&reqwest::header::AUTHORIZATION) {
        bail!(
            "MCP server `{name}` already sends an Authorization header from [mcp.{name}] \
             headers; remove it to log in instead"
        );
    }
    let target = LoginTarget {
        server: name,
        url: &url,
        headers,
        wait: LOGIN_WAIT,
    };
    let done = oauth::login(&target, &|address| show(name, address))
        .await
        .map_err(|e| anyhow!("logging in to MCP server `{name}` failed: {e}"))?;
    println!(
        "Logged in to MCP server `{name}`; its tokens are in {}.",
        done.path.display()
    );
    check(name, server).await
}

/// Prints the authorization URL and opens it.
fn show(server: &str, address: &str) {
    println!("To log in to MCP server `{server}`, open this address in your browser:");
    println!("  {}", crate::term_safe::escape(address));
    let opened = crate::mcp::browser::open(address);
    match opened {
        Ok(true) => println!("(Opened in your browser; waiting for it to come back…)"),
        Ok(false) => println!("(Waiting for the browser to come back…)"),
        Err(why) => println!("(Could not open a browser: {why}; open the address yourself.)"),
    }
    let _ = std::io::stdout().flush();
}

/// Connects with the new tokens and says what came of it.
async fn check(name: &str, server: &crate::config::McpServerConfig) -> Result<u8> {
    let manager = McpManager::start([(name.to_string(), server.clone())].into());
    manager
        .settle(manager.longest_startup() + Duration::from_secs(2))
        .await;
    let statuses = manager.statuses();
    manager.shutdown().await;
    let Some(status) = statuses.first() else {
        return Ok(0);
    };
    match &status.state {
        ServerState::Connected { tools } => {
            println!(
                "Connected: {tools} tool{} ({}). A running cairn picks the login up with \
                 /mcp restart {name}.",
                if *tools == 1 { "" } else { "s" },
                crate::term_safe::escape(&status.tools.join(", "))
            );
            Ok(0)
        }
        ServerState::Failed { reason } | ServerState::NeedsLogin { reason } => {
            eprintln!(
                "cairn: the server still does not work with the new login: {}",
                crate::term_safe::escape(reason)
            );
            Ok(1)
        }
        _ => Ok(0),
    }
}

pub async fn logout(name: &str, overrides: &crate::cli::startup::Overrides) -> Result<u8> {
    let config = super::mcp_servers::load(overrides)?;
    let url = config
        .file
        .mcp
        .get(name)
        .and_then(|s| s.url.clone())
        .unwrap_or_default();
    let store = TokenStore::in_data_dir(name, &url)
        .ok_or_else(|| anyhow!("this system has no data directory (is HOME set?)"))?;
    let removed = store
        .remove()
        .map_err(|e| anyhow!("cannot remove {}: {e}", store.path().display()))?;
    if removed {
        println!(
            "Logged out of MCP server `{name}`: removed {}.",
            store.path().display()
        );
    } else {
        println!("No login is stored for MCP server `{name}`.");
    }
    Ok(0)
}
