//! A permission request as the front end shows it, and the person's
//! decision as it travels back to the waiting call.

use serde::{Deserialize, Serialize};

use crate::permission::Preview;

/// The person's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    /// Allow and store `rule` (one of the request's offered rules).
    AllowAlways {
        rule: String,
    },
    /// Allow once, and run the command outside the sandbox.
    AllowUnsandboxed,
    Deny {
        reason: Option<String>,
    },
    /// Allow and store every rule of a request with `all_rules`.
    AllowAlwaysAll {
        rules: Vec<String>,
    },
    /// Allow an edit with only some of its hunks: those numbered (from 0)
    /// in `rejected` are left out, and the model is told why.
    AllowHunks {
        rejected: Vec<usize>,
        reason: Option<String>,
    },
    /// A proposed plan is approved; work continues in `mode`.
    ApprovePlan {
        mode: crate::config::Mode,
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
    /// The sandbox the call runs in and what approving adds to it
    /// ("sandbox: workspace-write, network off; approving grants the
    /// network for this run"). `None` for calls that start no command.
    #[serde(default)]
    pub sandbox: Option<String>,
    /// For an edit of a file `[format]` formats, what the dialog says of
    /// it: "will be formatted by rustfmt after it is applied", or why it
    /// will not be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formatting: Option<String>,
}

impl PermissionRequest {
    /// Whether "Allow always" stores every rule together rather than one
    /// of them: a command's rules are one for each of its parts (simple
    /// commands, files it writes), so the same command runs unasked next
    /// time only with all of them.
    pub fn rules_together(&self) -> bool {
        matches!(self.preview, Some(Preview::Command { .. })) && self.rules.len() > 1
    }

    /// A command that would run in an enforced sandbox may be let out of it
    /// once, if the person says so ("Allow once without the sandbox").
    pub fn can_unsandbox(&self) -> bool {
        self.sandbox
            .as_deref()
            .is_some_and(|s| s.starts_with("sandbox: "))
    }
}
