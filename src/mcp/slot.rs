//! One configured MCP server as the manager holds it: its configuration,
//! its state and, while connected, the session a tool call uses.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::Tool as McpToolDef;
use rmcp::service::Peer;
use tokio_util::sync::CancellationToken;

use super::ServerState;
use super::progress::ProgressRouter;
use crate::config::McpServerConfig;
use crate::sync::lock;

/// How long a server gets to start and list its tools, unless its
/// `startup_timeout_secs` (or `timeout_secs`) says otherwise.
/// A cold `uvx` or `npx` start downloads the server first: 7 s was seen
/// for a small PyPI server, so 10 s left too little room.
const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take, unless its `tool_timeout_secs` (or
/// `timeout_secs`) says otherwise.
const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// One configured server.
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(super) config: McpServerConfig,
    pub(super) inner: Mutex<SlotInner>,
    /// Set when the server announced a new tool list that is not listed
    /// yet, so the next model request waits for it.
    pub(super) relisting: Arc<AtomicBool>,
    pub(super) root: Option<std::path::PathBuf>,
    /// What a sandboxed stdio server runs under (`transport::connect_stdio`).
    pub(super) sandbox: Option<crate::sandbox::Sandbox>,
    pub(super) asker: super::elicit::SharedAsker,
    /// For a project's server that runs outside the sandbox: the
    /// workspace's change token when it was trusted (cairn's start).
    pub(super) outside: Option<String>,
    /// For a person's own server: the place commands can write it loads
    /// from, when it does, which puts it in the sandbox
    /// (`transport::loads_from_writable`). Decided once, by its first
    /// start, in the server's own task: never on cairn's start-up path.
    pub(super) contained: std::sync::OnceLock<Option<std::path::PathBuf>>,
}

pub(crate) struct SlotInner {
    pub(super) state: ServerState,
    pub(super) tools: Vec<McpToolDef>,
    pub(super) live: Option<Live>,
    pub(super) generation: u64,
    pub(super) stop: CancellationToken,
    pub(super) task: Option<tokio::task::JoinHandle<()>>,
    /// When the current generation began, for the start-up deadline.
    pub(super) started: tokio::time::Instant,
    /// Whether the server has failed before, so coming back is news.
    pub(super) failed_before: bool,
    /// The live connection speaks HTTP+SSE.
    pub(super) sse: bool,
}

impl SlotInner {
    /// Ends the current generation: its process is told to stop, its
    /// connection and tools are dropped, and the state is `state`.
    pub(super) fn halt(&mut self, state: ServerState) {
        self.generation += 1;
        self.stop.cancel();
        self.live = None;
        self.tools.clear();
        self.state = state;
    }
}

/// What a tool call needs from a connected server.
#[derive(Clone)]
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) progress: Arc<ProgressRouter>,
}

impl Slot {
    /// Why a project's server that runs outside the sandbox may not run
    /// now: it can load any file of the workspace, and a call other than
    /// its own (here) or another cairn has changed the workspace since the
    /// project was trusted. `None` for every other server.
    pub(crate) fn outside_changed(&self) -> Option<String> {
        use crate::sandbox::workspace_changes as changes;
        let trusted = self.outside.as_ref()?;
        let root = self.root.as_ref()?;
        let own = super::tool_name(&self.name, "");
        let others: Vec<String> = changes::causes_here(root)
            .into_iter()
            .filter(|c| !changes::is_own(c, &own))
            .collect();
        let what = if !others.is_empty() {
            format!("this session's {} changed the workspace", others.join(", "))
        } else if changes::changed_elsewhere(root, trusted) {
            "another cairn session changed the workspace".to_string()
        } else {
            return None;
        };
        Some(format!(
            "stopped: it runs outside the sandbox (`sandbox = false`) and can load any file of the \
             workspace, and {what} since you trusted the project; it starts again after you trust \
             the project anew at cairn's next start"
        ))
    }

    /// How long the server may take to start and list its tools.
    pub(crate) fn startup_timeout(&self) -> Duration {
        self.config
            .startup_timeout_secs
            .or(self.config.timeout_secs)
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_STARTUP_TIMEOUT)
    }

    /// How long one call may take.
    pub(crate) fn tool_timeout(&self) -> Duration {
        self.config
            .tool_timeout_secs
            .or(self.config.timeout_secs)
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TOOL_TIMEOUT)
    }

    /// The live session, or the answer a tool gives when there is none.
    pub(crate) fn live(&self) -> Result<Live, String> {
        let inner = lock(&self.inner);
        match (&inner.live, &inner.state) {
            (Some(live), _) => Ok(live.clone()),
            (None, state) => Err(self.not_connected(state)),
        }
    }

    /// If the server has failed since a call began, why.
    pub(crate) fn failure(&self) -> Option<String> {
        let inner = lock(&self.inner);
        match &inner.state {
            state if state.is_failed() => Some(self.not_connected(state)),
            _ => None,
        }
    }

    fn not_connected(&self, state: &ServerState) -> String {
        let why = match state {
            ServerState::Starting => "it is still starting".to_string(),
            ServerState::Failed { reason } | ServerState::NeedsLogin { reason } => reason.clone(),
            ServerState::Disabled => "it is disabled in the configuration".to_string(),
            ServerState::Connected { .. } => "the connection is being replaced".to_string(),
        };
        format!(
            "MCP server `{}` is not connected: {why}; it can be restarted with /mcp",
            self.name
        )
    }
}
