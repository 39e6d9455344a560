//! The gate every tool call passes: security, permission, repetition.
//!
//! - `gate` — `Gate::check(&CallInfo) -> Verdict`, the entry point.
//! - bash commands are judged on their parse by `crate::shell` (simple
//!   commands, redirections, nested code).
//! - `security` (+ `cautions`) — what is blocked in every mode, and what
//!   must be confirmed even in auto mode.
//! - `readonly` — the commands smart mode runs without asking (with
//!   `readonly_tools`, `readonly_builtins`, `readonly_git`); `wrappers` and
//!   `getopt` read options the way the programs themselves do.
//! - `rules` — `tool(pattern)` allow/deny rules, "allow always"
//!   suggestions, and storing rules in `.cairn/config.toml`.
//! - `repetition` — the same call again and again is blocked.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::Preview;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Read-only tools run; writes and commands that may change things ask.
    #[default]
    Smart,
    AlwaysAsk,
    /// Asks nothing except paths outside the workspace; deny rules hold.
    Auto,
    /// No tools run.
    Chat,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Smart, Mode::AlwaysAsk, Mode::Auto, Mode::Chat];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Smart => "smart",
            Mode::AlwaysAsk => "always-ask",
            Mode::Auto => "auto",
            Mode::Chat => "chat",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The person's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    /// Allow and store `rule` (one of the request's offered rules).
    AllowAlways {
        rule: String,
    },
    Deny {
        reason: Option<String>,
    },
}

/// What the dialog shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub tool: String,
    pub summary: String,
    /// Why it asks: "writes a file", "`rm` is not a read-only command", ...
    pub reasons: Vec<String>,
    pub preview: Option<Preview>,
    /// The rules "Allow always" can store, narrowest first; the first is the
    /// default. Empty when nothing may be stored (outside the workspace).
    pub rules: Vec<String>,
}

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

mod cautions;
pub mod gate;
mod getopt;
pub mod paths;
pub mod readonly;
mod readonly_builtins;
mod readonly_git;
mod readonly_tools;
pub mod repetition;
pub mod rules;
pub mod security;
mod security_exec;
mod sed_script;
pub mod store;
mod suggest;
mod wrappers;

pub use gate::Gate;
