//! The contract between the agent and its front ends (the full-screen
//! interface, `cairn run`, and any front end to come): every type that
//! crosses between them is declared here, and nothing else is shared.
//!
//! Two conversations, each one way in and one way out:
//!
//! - **With the agent** (`agent.rs`), over channels. A front end sends
//!   [`AgentCommand`]s (a prompt, cancel, a mode or model switch, undo,
//!   rewind, load a stored session, shut down); the agent answers with a
//!   stream of [`AgentEvent`]s (text as it streams, tool calls and their
//!   progress, usage, notices, the turn's end with its [`TurnOutcome`], and
//!   what the session store did). Events are facts, not replies: they come
//!   whenever the agent has something to say, also between turns.
//! - **Permission**, inside that conversation (`permission.rs`). When a call
//!   needs the person, the agent sends `AgentEvent::PermissionRequested`
//!   with an id and a [`PermissionRequest`] (what the dialog shows) and the
//!   call waits; the front end answers with
//!   `AgentCommand::PermissionReply` carrying the same id and a
//!   [`Decision`]. `PermissionResolved` says the wait is over (answered or
//!   dropped by a cancel). Input requests from MCP servers go the same way
//!   (`InputRequested` ↓ `InputReply`).
//! - **With stored sessions** (`sessions.rs`), by call. A front end asks a
//!   [`SessionRequest`] (list, search, preview, resume, rewind, fork,
//!   rename, delete, export) and the sessions service (`crate::sessions`)
//!   answers each with one [`SessionReply`]. A session to continue comes
//!   back as a [`LoadedSession`], which the front end hands to the agent
//!   with [`AgentCommand::load`].
//!
//! The agent answers commands, the sessions service answers session
//! requests, and the person (through a front end) answers permission and
//! input requests. The session store writer listens to the same events
//! the front end does.
//!
//! Layer: below the sessions service and the agent, above the services. The
//! types here may carry service and foundation types (a diff preview, a
//! tool's display, a message), never the agent's or a front end's.

mod agent;
mod permission;
mod sessions;
pub mod slash;

/// What front ends see of language servers: their states and an edit's
/// verdict (the servers themselves stay behind the agent).
pub use crate::lsp::{
    Finding, KnownServer, ServerState, ServerStatus, Severity, Verdict, report_text as lsp_report,
};
pub use agent::{AgentCommand, AgentEvent, NoticeLevel, StoredSettings, ToolStatus, TurnOutcome};
pub use permission::{Decision, PermissionRequest};
pub use sessions::{
    CompactionMark, Later, LoadedSession, OpenAs, Resumed, RewindTo, Runs, SessionEntry,
    SessionReply, SessionRequest, StoredCall, short_id,
};
