//! MCP servers as tool providers.
//!
//! Each `[mcp.NAME]` server from the configuration is started in the
//! background by the [`McpManager`] (a child process speaking stdio, or a
//! streamable HTTP endpoint) and its tools are offered to the model as
//! `mcp__<server>__<tool>`. The manager never blocks its caller: servers
//! connect, fail or crash on their own time and `changes()` ticks whenever
//! the tool set moves, so the agent can refresh its registry.
//!
//! stdio and streamable HTTP go through rmcp; the older HTTP+SSE transport,
//! which rmcp 3.11 has no client for, is cairn's own (`sse.rs`).
//!
//! `manager` runs the servers and `slot` is one of them; `tool`, `prompts`
//! and `resources` are what a server offers (its resources attached to a
//! prompt through `attach`); `oauth/` signs in to remote servers;
//! `config_file` is `cairn mcp add/remove`'s edit of the user's config.

mod attach;
pub mod browser;
mod client;
pub mod config_file;
mod content;
mod elicit;
mod errors;
mod manager;
mod notices;
pub mod oauth;
mod oversize;
mod progress;
mod prompts;
mod ready;
mod resources;
mod slot;
mod sse;
mod status;
mod tool;
mod transport;

pub(crate) use transport::{expand_for, headers_for};

pub use manager::McpManager;
pub use prompts::PromptEntry;
pub use status::format_status;
pub use tool::McpTool;

/// Longest tool name the providers accept.
const MAX_TOOL_NAME: usize = 64;
const PREFIX: &str = "mcp__";
const SEPARATOR: &str = "__";

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Connected {
        tools: usize,
    },
    Failed {
        reason: String,
    },
    /// It answered 401: the person must run `cairn mcp login NAME`.
    NeedsLogin {
        reason: String,
    },
    Disabled,
}

impl ServerState {
    /// Failed, or waiting for a login: either way, not working.
    pub fn is_failed(&self) -> bool {
        matches!(
            self,
            ServerState::Failed { .. } | ServerState::NeedsLogin { .. }
        )
    }
}

/// How cairn talks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    Stdio,
    Http,
    /// The older HTTP+SSE transport.
    Sse,
}

impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
        })
    }
}

/// One server as `/mcp` and `cairn mcp list` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    /// The server's own tool names (without the `mcp__` prefix).
    pub tools: Vec<String>,
    pub transport: TransportKind,
    /// The command line or URL, as configured (before `${VAR}` expansion, so
    /// no secret from the environment is shown).
    pub target: String,
    pub trusted: bool,
    /// A person's own server cairn runs in the sandbox because it loads
    /// from this place, which sandboxed commands can change.
    pub contained_at: Option<std::path::PathBuf>,
}

/// Keeps `[a-zA-Z0-9_-]`; anything else becomes `_`.
fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A server's name as it appears inside tool names: sanitised, and with no
/// `__` so that [`split_tool_name`] finds where it ends.
pub fn server_key(server: &str) -> String {
    let mut key = sanitize(server);
    while key.contains("__") {
        key = key.replace("__", "_");
    }
    key
}

/// The name the model sees for `tool` of `server`: `mcp__<server>__<tool>`,
/// sanitised and cut to 64 characters.
pub fn tool_name(server: &str, tool: &str) -> String {
    let mut name = format!(
        "{PREFIX}{}{SEPARATOR}{}",
        server_key(server),
        sanitize(tool)
    );
    // Only ASCII remains after sanitising, so byte truncation is safe.
    name.truncate(MAX_TOOL_NAME);
    name
}

/// Splits `mcp__server__tool` into `("server", "tool")`. The server part is
/// everything up to the first `__` after the prefix ([`tool_name`] keeps `__`
/// out of server names; tool names may contain it).
pub fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(PREFIX)?;
    let (server, tool) = rest.split_once(SEPARATOR)?;
    if server.is_empty() || tool.is_empty() {
        return None;
    }
    Some((server, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_sanitised() {
        assert_eq!(
            tool_name("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(tool_name("my server", "a.b/c"), "mcp__my_server__a_b_c");
        assert_eq!(tool_name("s", "naïve"), "mcp__s__na_ve");
        let odd = tool_name("my__srv", "do__it");
        assert_eq!(odd, "mcp__my_srv__do__it");
        assert_eq!(split_tool_name(&odd), Some(("my_srv", "do__it")));
    }

    #[test]
    fn long_names_are_cut_to_64() {
        let name = tool_name("server", &"x".repeat(100));
        assert_eq!(name.len(), 64);
        assert!(name.starts_with("mcp__server__xxx"));
    }

    #[test]
    fn split_finds_server_and_tool() {
        assert_eq!(
            split_tool_name("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(split_tool_name("mcp__s__a__b"), Some(("s", "a__b")));
        assert_eq!(split_tool_name("bash"), None);
        assert_eq!(split_tool_name("mcp__nodelimiter"), None);
        assert_eq!(split_tool_name("mcp____t"), None);
    }
}
