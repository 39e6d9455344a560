//! The only things that cross between the agent and an interface.

use serde::{Deserialize, Serialize};

use crate::conversation::{ImageData, Message};
use crate::llm::Usage;
use crate::permission::{Decision, Mode, PermissionRequest};
use crate::tools::ToolDisplay;
use crate::tools::state::Todo;

#[derive(Debug, Clone, PartialEq)]
pub enum AgentCommand {
    /// A new user prompt. Queued if a turn is running.
    Submit {
        text: String,
        images: Vec<ImageData>,
    },
    /// Stop the running turn: the stream and any running tools.
    Cancel,
    PermissionReply {
        id: u64,
        decision: Decision,
    },
    SetMode(Mode),
    /// Switch model (and provider, when given by name).
    SetModel {
        provider: Option<String>,
        model: String,
    },
    /// Start a fresh conversation.
    NewSession,
    /// Replace the conversation (resume, rewind).
    LoadHistory {
        messages: Vec<Message>,
    },
    Compact {
        focus: Option<String>,
    },
    Shutdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Done,
    Failed,
    Denied,
    Blocked,
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TurnOutcome {
    Completed,
    Cancelled,
    TurnLimit { limit: u32 },
    Failed { error: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A user prompt starts a turn (also for queued prompts).
    TurnStarted {
        turn: u64,
        prompt: String,
    },
    /// A new model response begins streaming within the turn.
    ResponseStarted,
    TextDelta(String),
    ReasoningDelta(String),
    /// The stream restarted and the partial response must be dropped.
    ResponseReset,
    /// The model asked for a tool.
    ToolCallStarted {
        call_id: String,
        name: String,
        input: serde_json::Value,
        summary: String,
    },
    ToolCallProgress {
        call_id: String,
        message: String,
    },
    ToolCallFinished {
        call_id: String,
        status: ToolStatus,
        output: String,
        display: Option<ToolDisplay>,
    },
    PermissionRequested {
        id: u64,
        request: PermissionRequest,
    },
    /// A request was answered (or dropped by a cancel).
    PermissionResolved {
        id: u64,
    },
    /// Usage after one model response.
    Usage {
        usage: Usage,
        /// Tokens in the context window now.
        context_tokens: u64,
        context_window: u64,
        /// Session cost so far in US dollars, when prices are known.
        cost: Option<f64>,
    },
    /// A request failed and will be tried again.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error: String,
    },
    Notice {
        level: NoticeLevel,
        text: String,
    },
    Todos(Vec<Todo>),
    ModeChanged(Mode),
    ModelChanged {
        provider: String,
        model: String,
    },
    /// A message was added to the conversation (for the session store).
    MessageAdded(Message),
    TurnFinished {
        turn: u64,
        outcome: TurnOutcome,
    },
}
