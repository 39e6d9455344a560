//! Every effect `update` asks for; only the runtime executes them.

use crate::agent::AgentCommand;

#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    Send(AgentCommand),
    /// OSC 52 to the terminal and the system clipboard when there is one.
    CopyToClipboard(String),
    /// Suspend the screen, edit this text in `$EDITOR`, answer with
    /// `Msg::EditorClosed`.
    OpenEditor(String),
    /// Append a submitted prompt to the per-project history file.
    AppendHistory(String),
    /// Turn the terminal's mouse reporting on or off.
    SetMouseCapture(bool),
    /// Slow work for the services (store, files, MCP).
    Service(crate::tui::services::ServiceCmd),
    Quit,
}
