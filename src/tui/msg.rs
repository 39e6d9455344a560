//! Every input the interface reacts to.

use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use crate::agent::AgentEvent;

#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Paste(String),
    Mouse(MouseEvent),
    Resize {
        width: u16,
        height: u16,
    },
    Agent(AgentEvent),
    /// The frame timer (spinners, elapsed times, countdowns).
    Tick(Instant),
    /// `$EDITOR` closed: the edited prompt, or why it failed.
    EditorClosed(Result<String, String>),
    /// The agent's channel closed: nothing more will arrive.
    AgentGone,
    /// A service answered.
    Service(crate::tui::services::ServiceMsg),
}
