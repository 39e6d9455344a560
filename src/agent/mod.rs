//! The interactive loop: one task per running session.

pub mod events;

pub use events::{AgentCommand, AgentEvent, NoticeLevel, ToolStatus, TurnOutcome};
