//! Where only reading is allowed — plan mode, and sub-agents that only
//! explore — a call that may change anything is refused, never asked.

use super::{Gate, READ_ONLY_TOOLS};
use crate::permission::{CallInfo, readonly};
use crate::shell;

impl Gate {
    /// Why `call` is not a read-only call, or `None` when it only reads:
    /// a read-only tool, or a shell command whose every part is a known
    /// read-only command that writes no file.
    pub fn read_only_refusal(&self, call: &CallInfo) -> Option<String> {
        if call.tool == "bash" {
            let Some(command) = call.input.get("command").and_then(|c| c.as_str()) else {
                return Some("`bash` needs a `command` string argument".into());
            };
            return shell_refusal(command);
        }
        if call.tool.starts_with("mcp__") {
            return (!call.read_only)
                .then(|| format!("`{}` is not marked read-only by its server", call.tool));
        }
        if READ_ONLY_TOOLS.contains(&call.tool) || call.read_only {
            return None;
        }
        Some(format!("`{}` can change things", call.tool))
    }
}

fn shell_refusal(command: &str) -> Option<String> {
    let a = shell::parse(command);
    if let Some(e) = &a.parse_error {
        return Some(format!(
            "{e}; cairn cannot tell whether `{command}` only reads"
        ));
    }
    if let Some(part) = a.opaque.first() {
        return Some(format!(
            "`{command}` contains {part}, which cannot be inspected"
        ));
    }
    if let Some(place) = a.evaluated.first() {
        return Some(format!("`{command}` evaluates {place} as code"));
    }
    if let Some(r) = a.file_writes().next() {
        return Some(format!("`{command}` writes `{}`", r.target));
    }
    for cmd in &a.commands {
        if let Err(reason) = readonly::check(cmd) {
            return Some(reason);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use crate::permission::gate::Gate;
    use crate::permission::rules::Rules;
    use crate::permission::{CallInfo, Mode, Verdict};

    fn check(gate: &mut Gate, tool: &str, input: serde_json::Value, read_only: bool) -> Verdict {
        let ws = Path::new("/w");
        gate.check(&CallInfo {
            tool,
            input: &input,
            read_only,
            paths: vec![ws.join("a.rs")],
            workspace: ws,
            cwd: ws,
        })
    }

    #[test]
    fn plan_mode_refuses_writes_and_runs_reads() {
        let mut gate = Gate::new(Mode::Plan, Rules::default(), 10);
        for (tool, input, ro) in [
            ("edit", json!({"file_path": "a.rs"}), false),
            ("write", json!({"file_path": "a.rs"}), false),
            ("bash", json!({"command": "rm a.rs"}), false),
            ("bash", json!({"command": "ls > list.txt"}), false),
            ("bash", json!({"command": "cargo test"}), false),
        ] {
            match check(&mut gate, tool, input.clone(), ro) {
                Verdict::Deny { message } => {
                    assert!(message.contains("plan mode"), "{message}");
                    assert!(message.contains("exit_plan_mode"), "{message}");
                }
                other => panic!("{tool} {input}: {other:?}"),
            }
        }
        for (tool, input, ro) in [
            ("view", json!({"file_path": "a.rs"}), true),
            ("grep", json!({"pattern": "x"}), true),
            (
                "bash",
                json!({"command": "git log --oneline | head -5"}),
                false,
            ),
        ] {
            assert_eq!(check(&mut gate, tool, input, ro), Verdict::Allow, "{tool}");
        }
    }

    #[test]
    fn the_refusal_names_what_would_change() {
        let gate = Gate::new(Mode::Smart, Rules::default(), 10);
        let ws = Path::new("/w");
        let input = json!({"command": "echo hi > notes.txt"});
        let call = CallInfo {
            tool: "bash",
            input: &input,
            read_only: false,
            paths: vec![],
            workspace: ws,
            cwd: ws,
        };
        assert!(gate.read_only_refusal(&call).unwrap().contains("notes.txt"));
    }
}
