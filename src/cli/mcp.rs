//! `cairn mcp …`: list the configured servers (starting each, bounded by its
//! start-up limit), and add, remove or show one in the user's config.

use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use clap::Subcommand;

use super::mcp_servers::{find, load, user_config};
use crate::mcp::config_file::{self, NewServer};
use crate::mcp::{McpManager, ServerState};

#[derive(Subcommand, Debug)]
pub enum McpAction {
    /// Start each configured server and show its state and tools; exits
    /// non-zero when one failed.
    List,
    /// Add a server to your config: `NAME -- COMMAND ARGS…` for a local
    /// one, `NAME --url URL` for a remote one.
    Add {
        name: String,
        /// The server's URL (streamable HTTP, or HTTP+SSE with --transport sse).
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// An HTTP header, NAME=VALUE; `${VAR}` is filled from the environment.
        #[arg(long = "header", requires = "url")]
        headers: Vec<String>,
        /// `http` (streamable HTTP, the default) or `sse`.
        #[arg(long, requires = "url")]
        transport: Option<String>,
        /// An environment variable for a local server, NAME=VALUE.
        #[arg(long = "env", conflicts_with = "url")]
        env: Vec<String>,
        /// The command that starts a local server, and its arguments.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove a server from your config.
    Remove { name: String },
    /// Show one server: its configuration and, once started, its state and tools.
    Get { name: String },
    /// Log in to a remote server that asks for OAuth authorization: opens
    /// its authorization page in the browser ($CAIRN_BROWSER, or `none` to
    /// only print the address) and keeps the tokens in cairn's data directory.
    Login { name: String },
    /// Forget the tokens `cairn mcp login` stored for a server.
    Logout { name: String },
}

/// Runs the action; the exit code is 0 on success.
pub async fn run(action: McpAction, overrides: &crate::cli::startup::Overrides) -> Result<u8> {
    match action {
        McpAction::List => list(overrides).await,
        McpAction::Add {
            name,
            url,
            headers,
            transport,
            env,
            command,
        } => {
            let server = match (url, command.split_first()) {
                (Some(url), _) => NewServer::Http {
                    url,
                    headers,
                    transport,
                },
                (None, Some((program, args))) => NewServer::Stdio {
                    command: program.clone(),
                    args: args.to_vec(),
                    env: env
                        .iter()
                        .map(|kv| {
                            kv.split_once('=')
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                                .ok_or_else(|| anyhow!("`{kv}` is not NAME=VALUE"))
                        })
                        .collect::<Result<_>>()?,
                },
                (None, None) => bail!(
                    "say how to reach the server: `cairn mcp add {name} -- COMMAND ARGS…` \
                     or `cairn mcp add {name} --url URL`"
                ),
            };
            let path = user_config()?;
            config_file::add_server(&path, &name, &server)?;
            println!("Added MCP server `{name}` to {}", path.display());
            println!("Check it with `cairn mcp get {name}`.");
            Ok(0)
        }
        McpAction::Remove { name } => {
            let path = user_config()?;
            if config_file::remove_server(&path, &name)? {
                println!("Removed MCP server `{name}` from {}", path.display());
                Ok(0)
            } else {
                bail!(
                    "there is no MCP server `{name}` in {} (see `cairn mcp list`)",
                    path.display()
                )
            }
        }
        McpAction::Get { name } => get(&name, overrides).await,
        McpAction::Login { name } => super::mcp_login::login(&name, overrides).await,
        McpAction::Logout { name } => super::mcp_login::logout(&name, overrides).await,
    }
}

/// A prompt written as `/mcp__SERVER__PROMPT args` becomes that MCP
/// prompt's text, once its server is ready; any other prompt is kept.
pub async fn expand_prompt(manager: &McpManager, prompt: String) -> Result<String, String> {
    let Some(command) = prompt.trim_start().strip_prefix('/') else {
        return Ok(prompt);
    };
    if !command.starts_with("mcp__") {
        return Ok(prompt);
    }
    manager.ready(&|note| eprintln!("[note] {note}")).await;
    manager.expand_prompt(command).await
}

/// A manager for `servers` as a session in this folder would start them:
/// from the project's root, under the configured sandbox's rules.
fn contained(
    servers: std::collections::BTreeMap<String, crate::config::McpServerConfig>,
    config: &crate::config::Config,
    overrides: &crate::cli::startup::Overrides,
) -> std::sync::Arc<McpManager> {
    let root = std::env::current_dir()
        .ok()
        .map(|cwd| crate::agent::instructions::project_root(&cwd));
    let sandbox = crate::sandbox::Sandbox::from_config(&config.file.sandbox, overrides.no_sandbox);
    McpManager::start_contained(servers, root, Some(sandbox))
}

/// Starts `manager`'s servers and waits for each, bounded by its limit.
async fn started(manager: &McpManager) {
    manager
        .settle(manager.longest_startup() + Duration::from_secs(2))
        .await;
}

async fn list(overrides: &crate::cli::startup::Overrides) -> Result<u8> {
    let config = load(overrides)?;
    if config.file.mcp.is_empty() {
        println!(
            "No MCP servers are configured. Add one with `cairn mcp add NAME -- COMMAND ARGS…` \
             or as [mcp.NAME] in {}",
            user_config()?.display()
        );
        return Ok(0);
    }
    let manager = contained(config.file.mcp.clone(), &config, overrides);
    started(&manager).await;
    let statuses = manager.statuses();
    print!(
        "{}",
        crate::term_safe::escape(&crate::mcp::format_status(&statuses))
    );
    manager.shutdown().await;
    let failed: Vec<&str> = statuses
        .iter()
        .filter(|s| s.state.is_failed() || s.state == ServerState::Starting)
        .map(|s| s.name.as_str())
        .collect();
    if failed.is_empty() {
        Ok(0)
    } else {
        eprintln!("cairn: MCP server(s) not working: {}", failed.join(", "));
        Ok(1)
    }
}

/// The server `name` of `config`, or an error naming the configured ones.
async fn get(name: &str, overrides: &crate::cli::startup::Overrides) -> Result<u8> {
    let config = load(overrides)?;
    let server = find(&config, name)?;
    match config_file::server_text(&user_config()?, name)? {
        Some(text) => print!("{}", crate::term_safe::escape(&text)),
        None => println!("(configured in the project's config file)"),
    }
    let manager = contained(
        [(name.to_string(), server.clone())].into(),
        &config,
        overrides,
    );
    started(&manager).await;
    let statuses = manager.statuses();
    println!();
    print!(
        "{}",
        crate::term_safe::escape(&crate::mcp::format_status(&statuses))
    );
    manager.shutdown().await;
    let ok = statuses.iter().all(|s| {
        matches!(
            s.state,
            ServerState::Connected { .. } | ServerState::Disabled
        )
    });
    Ok(if ok { 0 } else { 1 })
}
