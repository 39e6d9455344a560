//! The gate every tool call passes: security, permission, repetition.
//!
//! - `gate/` — `Gate::check(&CallInfo) -> Verdict`, the entry point;
//!   `outside` finds the paths outside the workspace a command names,
//!   `needs` and `runtime_paths` what a command needs from the sandbox and
//!   which reads are only known when it runs.
//! - bash commands are judged on their parse by `crate::shell` (simple
//!   commands, redirections, nested code), layer by layer (`layers`:
//!   `sudo`, `env`, `find -exec`, …).
//! - `security/` — what is blocked in every mode, and what must be
//!   confirmed even in auto mode. It looks through programs that run
//!   programs (`wrappers`), into shell code outside argv and other
//!   programs' command hooks (`nested`, `nested_code`), and into what a
//!   shell is fed on standard input.
//! - `readonly/` — the commands smart mode runs without asking; `wrappers`
//!   and `getopt` read options the way the programs themselves do;
//!   `programs` names the families (shells, interpreters, awks,
//!   downloaders) every inspector recognises.
//! - `git_hooks` — a read-only git runs with the repository's command
//!   hooks neutralised (applied by the bash tool).
//! - `rules/` — `tool(pattern)` allow/deny rules; `suggest` offers the
//!   "allow always" rules, `store` keeps rules in `.cairn/config.toml`.
//! - `repetition` — the same call again and again is blocked.
//! - `paths` — resolving and classifying paths; `preview` — what the
//!   dialog shows.

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use crate::config::Mode;
pub use preview::Preview;

/// The gate's answer for one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allow,
    Ask {
        reasons: Vec<String>,
        rules: Vec<String>,
        /// Whether a reason no allow rule lifts is among `reasons` (outside
        /// the workspace, a caution such as a force push, what cannot be
        /// inspected): a hook's `allow` does not lift it either.
        fixed: bool,
    },
    /// Refused by a rule or the mode; the message goes to the model.
    Deny {
        message: String,
    },
    /// Refused as dangerous or repetitive; never offered for approval.
    Block {
        message: String,
    },
}

/// The facts the gate judges a call by.
#[derive(Debug, Clone)]
pub struct CallInfo<'a> {
    pub tool: &'a str,
    pub input: &'a Value,
    pub read_only: bool,
    /// Paths the call touches, resolved.
    pub paths: Vec<PathBuf>,
    pub workspace: &'a Path,
    /// The shell's working directory (for `bash`).
    pub cwd: &'a Path,
}

/// Whether a call of `tool` with `input` writes the files its `paths`
/// name: the file tools, and a language server's rename. The gate asks
/// about control files among them; the census takes them for the
/// person's writes, not a command's plants.
pub fn edits_files(tool: &str, input: &Value) -> bool {
    matches!(tool, "edit" | "multiedit" | "write")
        || (tool == "lsp" && input.get("operation").and_then(Value::as_str) == Some("rename"))
}

pub mod gate;
mod getopt;
pub mod git_hooks;
mod layers;
pub mod needs;
mod nested;
mod nested_code;
mod outside;
pub mod paths;
mod preview;
mod programs;
pub mod readonly;
pub mod repetition;
mod repo_code;
pub mod rules;
mod runtime_paths;
pub mod security;
pub mod store;
pub mod suggest;
mod wrappers;

pub use gate::Gate;
