//! What a tool call will do, built by the tool before it runs and shown
//! to the person when the gate asks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an acting tool will do, built before it runs and shown for review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// A file change. `old` is empty for a new file.
    Diff(crate::diff::FileDiff),
    /// A change of several files (a language server's rename), in the
    /// order the dialog shows them; their hunks are numbered across all
    /// of them, the first file's first.
    Diffs {
        files: Vec<crate::diff::FileDiff>,
    },
    /// A shell command, with the simple commands it was parsed into.
    Command {
        command: String,
        cwd: String,
        /// Each simple command as its words, e.g. `["cargo", "test"]`.
        commands: Vec<Vec<String>>,
        /// Redirection targets (`> notes.txt`) in order.
        redirects: Vec<String>,
    },
    Url {
        url: String,
    },
    /// Anything else: the call's arguments.
    Input {
        input: Value,
    },
    /// A call to a tool of an MCP server: what the server says the tool
    /// does, and the full arguments.
    Mcp {
        server: String,
        tool: String,
        description: String,
        /// The server's own hints ("read-only", "destructive", ...).
        hints: Vec<String>,
        input: Value,
    },
}
