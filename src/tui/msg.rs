//! Every input the interface reacts to.

use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use crate::protocol::SessionReply;
use crate::protocol::{AgentEvent, NoticeLevel};

// An agent event is large (JSON values keep their key order, see
// Cargo.toml) and moved once per input: boxing it buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Paste(String),
    /// The terminal gained (`true`) or lost focus.
    Focus(bool),
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
    /// The sessions service answered.
    Session(SessionReply),
    /// The project's files, for the `@` picker.
    Files(Vec<String>),
    /// How the sandbox stands, worked out after the first frame.
    Sandbox(crate::tui::sandbox_view::SandboxView),
    /// A text to show in a panel (`/mcp`, `/permissions`).
    Text {
        title: String,
        text: String,
    },
    /// Text to send as the person's prompt (an MCP prompt's result).
    SubmitPrompt(String),
    /// The prompts the MCP servers offer now, for the `/` menu and
    /// `/prompts`.
    McpPrompts(Vec<crate::tui::commands::CustomEntry>),
    /// The person's commands and skills, read again.
    CustomCommands(Vec<crate::tui::commands::CustomEntry>),
    /// An effect finished or failed: a notice to show.
    Notice(NoticeLevel, String),
    /// A picture read for the prompt, or why not (with the pasted text
    /// to put in the prompt instead, when it came from a paste).
    Image(Result<crate::conversation::ImageData, ImageRefused>),
    /// A copy went out: `system` when the system clipboard took it (else
    /// only the terminal was asked, with OSC 52).
    Copied {
        system: bool,
    },
    /// What the terminal is and answered, learned once at start.
    Terminal(TerminalFacts),
}

/// What the runtime learned about the terminal at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalFacts {
    /// The background colour it reported (OSC 11), if it did.
    pub background: Option<(u8, u8, u8)>,
    /// A multiplexer that holds a lone Esc while mouse tracking is on and
    /// sends it with the next key (GNU screen).
    pub holds_lone_esc: bool,
    /// The terminal reports Shift+Enter apart from Enter (kitty protocol).
    pub enhanced_keys: bool,
}

/// Why a picture could not be attached.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageRefused {
    pub why: String,
    pub pasted: Option<String>,
}
