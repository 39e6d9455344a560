//! The permission mode: how much the gate asks before a tool runs. A
//! setting like any other, so it lives with the configuration and every
//! layer can name it.

use serde::{Deserialize, Serialize};

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
    /// Read-only exploration that ends in a plan the person approves.
    Plan,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Smart,
        Mode::AlwaysAsk,
        Mode::Auto,
        Mode::Chat,
        Mode::Plan,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Smart => "smart",
            Mode::AlwaysAsk => "always-ask",
            Mode::Auto => "auto",
            Mode::Chat => "chat",
            Mode::Plan => "plan",
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
