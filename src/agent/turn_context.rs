//! What one turn's steps share: the turn's context (options, provider,
//! tools, the state shared with the command handler, the cancel token) and
//! the tool calls of a response as they stream in.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{AgentOptions, Shared};
use crate::llm::Provider;
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::state::lock;
use crate::tools::{Registry, SessionState, ToolSource};

pub(crate) struct TurnContext {
    pub opts: AgentOptions,
    pub provider: Arc<dyn Provider>,
    /// The built-in tools; the tool source's are added before each request.
    pub builtin: Registry,
    pub tool_source: Option<Arc<dyn ToolSource>>,
    /// The tools offered in the latest request, which its calls use.
    pub registry: std::sync::Mutex<Arc<Registry>>,
    pub shared: Arc<Shared>,
    pub session: Arc<SessionState>,
    pub cancel: CancellationToken,
    /// The turn being run (the last one, for `/compact` between turns).
    pub turn: u64,
    /// Where skills (and commands) are read from; `None`: none are.
    pub extensions: Option<crate::extensions::commands::Roots>,
    /// A hook answered `continue: false`: the turn ends, for this reason.
    pub hook_stop: std::sync::Mutex<Option<String>>,
    /// Set when this turn is a sub-agent's.
    pub sub: Option<Arc<Frame>>,
    /// A sub-agent's own shell directory (`ToolContext::own_cwd`).
    pub own_cwd: Option<Arc<std::sync::Mutex<std::path::PathBuf>>>,
}

impl TurnContext {
    /// The shell's working directory in this turn (a sub-agent's own).
    pub fn cwd(&self) -> std::path::PathBuf {
        match &self.own_cwd {
            Some(c) => lock(c).clone(),
            None => self.session.cwd(),
        }
    }

    /// The tools offered in the latest request.
    pub fn tools(&self) -> Arc<Registry> {
        lock(&self.registry).clone()
    }

    /// Waits for the tool source's starting servers (bounded, visibly) and
    /// takes its current tools. False when the turn was cancelled meanwhile.
    pub async fn refresh_tools(&self) -> bool {
        let Some(source) = &self.tool_source else {
            return true;
        };
        let shared = self.shared.clone();
        let waiting = move |text: String| {
            shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Info,
                text,
            })
        };
        tokio::select! {
            _ = source.ready(&waiting) => {}
            _ = self.cancel.cancelled() => return false,
        }
        let mut registry = self.builtin.clone();
        for tool in source.tools() {
            registry.register(tool);
        }
        *lock(&self.registry) = Arc::new(registry);
        true
    }
}

/// What marks a turn as a sub-agent's.
pub(crate) struct Frame {
    pub name: String,
    pub description: String,
    /// Its system prompt, before the environment is added.
    pub prompt: String,
    /// Only read-only calls run.
    pub read_only: bool,
}

/// A tool call as it streams in.
#[derive(Debug, Default, Clone)]
pub(crate) struct PendingCall {
    pub id: String,
    pub name: String,
    pub args: String,
}

/// A call with its parsed input, or why the input could not be read.
pub(crate) type ParsedCall = (PendingCall, Result<serde_json::Value, String>);
