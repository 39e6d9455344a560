//! The gate every tool call passes: security, permission, repetition.
//!
//! - `gate` — `Gate::check(&CallInfo) -> Verdict`, the entry point.
//! - bash commands are judged on their parse by `crate::shell` (simple
//!   commands, redirections, nested code).
//! - `security` (+ `security_exec`, `security_rm`, `catastrophes`,
//!   `cautions`) — what is blocked in every mode, and what must be
//!   confirmed even in auto mode. It looks through programs that run
//!   programs (`wrappers`), into shell code outside argv and other
//!   programs' command hooks (`nested`), and into what a shell is fed on
//!   standard input (`stdin_feed`).
//! - `readonly` — the commands smart mode runs without asking (with
//!   `readonly_tools`, `readonly_builtins`, `readonly_git`,
//!   `readonly_more`); `runtime_paths` asks about reads of files only known
//!   when the command runs; `wrappers` and `getopt` read options the way
//!   the programs themselves do.
//! - `git_hooks` — a read-only git runs with the repository's command
//!   hooks neutralised (applied by the bash tool).
//! - `rules` — `tool(pattern)` allow/deny rules, "allow always"
//!   suggestions, and storing rules in `.cairn/config.toml`.
//! - `repetition` — the same call again and again is blocked.

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

mod catastrophes;
mod cautions;
pub mod gate;
mod getopt;
pub mod git_hooks;
pub mod needs;
mod nested;
mod nested_code;
mod outside;
pub mod paths;
mod preview;
pub mod readonly;
mod readonly_builtins;
mod readonly_git;
mod readonly_more;
mod readonly_tools;
pub mod repetition;
pub mod rules;
mod runtime_paths;
pub mod security;
mod security_exec;
mod security_rm;
mod sed_script;
mod stdin_feed;
pub mod store;
mod suggest;
mod wrappers;

pub use gate::Gate;
