//! Every effect `update` asks for; only the runtime executes them
//! (`runtime::execute`).

use crate::protocol::AgentCommand;
use crate::protocol::SessionRequest;

/// Where a picture for the prompt comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// The system clipboard (Ctrl+V, `/paste-image`).
    Clipboard,
    /// A file whose path was pasted; `pasted` is the text as it came, put
    /// in the prompt instead when the file is not a picture.
    File {
        path: std::path::PathBuf,
        pasted: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    Send(AgentCommand),
    /// Ask the sessions service; the answer comes as `Msg::Session`.
    Session(SessionRequest),
    /// The project's files for the `@` picker, answered with `Msg::Files`.
    ListFiles,
    /// Read the person's commands and skills again, answered with
    /// `Msg::CustomCommands`.
    ReloadCommands,
    /// The MCP servers' state, answered with `Msg::Text`.
    ShowMcpStatus,
    RestartMcp(String),
    /// Fetch an MCP prompt (`mcp__SERVER__PROMPT args`), answered with
    /// `Msg::SubmitPrompt`.
    McpPrompt(String),
    /// The stored permission rules, answered with `Msg::Text`.
    ShowPermissionRules,
    /// The hooks and how they last ran, answered with `Msg::Text`.
    ShowHooks,
    /// Remember a top-level setting (`theme`) in the global config.
    SaveSetting {
        key: &'static str,
        value: String,
    },
    /// OSC 52 to the terminal and the system clipboard when there is one.
    CopyToClipboard(String),
    /// Suspend the screen, edit this text in `$EDITOR`, answer with
    /// `Msg::EditorClosed`.
    OpenEditor(String),
    /// Append a submitted prompt to the per-project history file.
    AppendHistory(String),
    /// Turn the terminal's mouse reporting on or off.
    SetMouseCapture(bool),
    /// Get the person's attention (bell or OSC 9/777 with this text).
    Notify(String),
    /// Read a picture for the prompt, answered with `Msg::Image`.
    ReadImage(ImageSource),
    Quit,
}
