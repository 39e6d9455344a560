//! The gate with an enforced sandbox: what smart and auto still ask, and
//! what an approval grants for one run.

use super::{Gate, Mode, needs, readonly, runtime_paths, shell};
use crate::permission::CallInfo;
use crate::sandbox::Grant;
use crate::shell::ShellAnalysis;

impl Gate {
    /// With an enforced sandbox, smart and auto ask only for what it would
    /// refuse: the network, and (read-only sandbox) writes in the
    /// workspace. Writes inside the workspace are confined and undoable.
    pub(super) fn sandbox_reasons(&self, a: &ShellAnalysis, call: &CallInfo) -> Vec<String> {
        if self.covered_by_rules(a) {
            return Vec::new();
        }
        let mut reasons = Vec::new();
        if self.mode == Mode::Smart
            && let Some(why) = needs::destructive(a)
        {
            reasons.push(format!("{why}, which `/undo` may not bring back"));
        }
        if self.mode == Mode::Smart {
            // The sandbox leaves most of the disk readable: files a command
            // names only when it runs may lie anywhere (issue 10, 7).
            for (index, cmd) in a.commands.iter().enumerate() {
                if self.rules.command_allowed_by(cmd).is_none() {
                    reasons.extend(runtime_paths::reasons(a, index, call.cwd, call.workspace));
                }
            }
        }
        if !self.sandbox.network
            && let Some(why) = needs::network(a)
        {
            reasons.push(format!("{why}, which the sandbox keeps off"));
        }
        if !self.sandbox.workspace_writable && self.writes_workspace(a, call) {
            reasons.push("writes in the workspace, which the read-only sandbox refuses".into());
        }
        reasons
    }

    /// Allow rules cover the command: each simple command is allowed by a
    /// rule or read-only, and at least one by a rule.
    pub(super) fn covered_by_rules(&self, a: &ShellAnalysis) -> bool {
        let ruled = |c| self.rules.command_allowed_by(c).is_some();
        a.commands.iter().any(ruled)
            && a.commands
                .iter()
                .all(|c| ruled(c) || readonly::check(c).is_ok())
    }

    pub(super) fn writes_workspace(&self, a: &ShellAnalysis, _call: &CallInfo) -> bool {
        a.file_writes().next().is_some()
            || a.commands
                .iter()
                .any(|c| c.name().is_some() && readonly::check(c).is_err())
    }

    /// What running `call` adds to the sandbox's policy: nothing unless the
    /// person `approved` it, or allow rules cover every command (a stored
    /// "Always" holds with what the command needed).
    pub fn grant_for(&self, call: &CallInfo, approved: bool) -> Grant {
        let mut grant = Grant::default();
        if call.tool != "bash" || !self.sandbox.enforced {
            return grant;
        }
        let Some(command) = call.input.get("command").and_then(|c| c.as_str()) else {
            return grant;
        };
        let a = shell::parse(command);
        let allowed = approved || self.covered_by_rules(&a);
        if !allowed {
            return grant;
        }
        grant.network = !self.sandbox.network && needs::network(&a).is_some();
        if approved {
            grant.write = needs::writes_outside(&a, call.cwd, call.workspace, self.home.as_deref());
        }
        if !self.sandbox.workspace_writable && self.writes_workspace(&a, call) {
            grant.write.push(call.workspace.to_path_buf());
        }
        grant
    }
}
