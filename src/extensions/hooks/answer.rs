//! What one event's hook runs say together, read as Claude Code reads
//! them: exit 2 blocks (stderr is the reason), another non-zero code is a
//! warning, exit 0 may print JSON (`continue`/`stopReason`,
//! `systemMessage`, `decision: "block"` + `reason`, `hookSpecificOutput`
//! with `permissionDecision`, `updatedInput`, `additionalContext`) or, for
//! `UserPromptSubmit` and `SessionStart`, plain text that becomes context.

use serde_json::Value;

use super::{Event, Hook, HookRun};

/// Ordered weakest first: deny wins over ask, ask over allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

/// A hook that blocked or added something, for one compact transcript line.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub command: String,
    /// What it did: "blocked", "added context", "denied", …
    pub did: String,
    /// What it said (the reason or the context).
    pub output: String,
}

#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The reason, when a hook blocked.
    pub blocked: Option<String>,
    /// The strongest decision a hook gave (deny over ask over allow), and why.
    pub permission: Option<(Permission, String)>,
    /// The input to use instead (Claude Code's fields).
    pub updated_input: Option<Value>,
    /// Text for the model.
    pub context: Vec<String>,
    /// Lines for the person (`systemMessage`, a failing hook).
    pub messages: Vec<String>,
    /// `continue: false`: the work stops, for this reason.
    pub stop: Option<String>,
    pub notes: Vec<Note>,
    /// Whether the run being read may allow: the person's own hooks may, a
    /// project's may not (its scripts are files the model can change, so
    /// its `allow` would answer the person's questions for the model).
    may_allow: bool,
}

impl Outcome {
    /// Reads the runs of `hooks` for `event`.
    pub fn of(event: Event, hooks: &[Hook], runs: &[HookRun]) -> Outcome {
        let mut out = Outcome::default();
        for run in runs {
            let hook = hooks.get(run.index);
            let command = hook.map(|h| h.command.clone()).unwrap_or_default();
            out.may_allow = hook.is_some_and(|h| h.scope == super::Scope::User);
            out.read_run(event, command, run);
        }
        out
    }

    fn note(&mut self, command: &str, did: &str, output: &str) {
        self.notes.push(Note {
            command: command.to_string(),
            did: did.to_string(),
            output: output.trim().to_string(),
        });
    }

    fn read_run(&mut self, event: Event, command: String, run: &HookRun) {
        let short = super::one_line(&crate::text::truncate_chars(&command, 60));
        if let Some(why) = &run.failure {
            self.messages
                .push(format!("{} hook `{short}` {why}", event.name()));
            return;
        }
        match run.code {
            Some(0) => self.read_stdout(event, &command, run.stdout.trim()),
            Some(2) => {
                let reason = match run.stderr.trim() {
                    "" => format!("blocked by the hook `{short}`"),
                    r => r.to_string(),
                };
                // Exit 2 blocks only what can be blocked; after a call it
                // tells the model, and elsewhere (a session starting or
                // ending, a notification, compaction) it is only said.
                match event {
                    Event::PostToolUse | Event::PostToolUseFailure => {
                        self.note(&command, "told the model after", &reason);
                        self.blocked = Some(join(self.blocked.take(), reason));
                    }
                    Event::SessionStart
                    | Event::SessionEnd
                    | Event::Notification
                    | Event::PreCompact => self.note(&command, "exited 2 on", &reason),
                    _ => {
                        self.note(&command, "blocked", &reason);
                        self.blocked = Some(join(self.blocked.take(), reason));
                    }
                }
            }
            code => {
                let code = code.map_or("a signal".to_string(), |c| format!("code {c}"));
                let first = run.stderr.trim().lines().next().unwrap_or("").to_string();
                let tail = if first.is_empty() {
                    String::new()
                } else {
                    format!(": {first}")
                };
                self.messages.push(format!(
                    "{} hook `{short}` failed ({code}){tail}",
                    event.name()
                ));
            }
        }
    }

    fn read_stdout(&mut self, event: Event, command: &str, stdout: &str) {
        if stdout.is_empty() {
            return;
        }
        let json = serde_json::from_str::<Value>(stdout)
            .ok()
            .filter(Value::is_object);
        let Some(json) = json else {
            if matches!(event, Event::UserPromptSubmit | Event::SessionStart) {
                self.note(command, "added context", stdout);
                self.context.push(stdout.to_string());
            }
            return;
        };
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        if json.get("continue").and_then(Value::as_bool) == Some(false) {
            let why = text(json.get("stopReason")).unwrap_or_else(|| "a hook stopped it".into());
            self.note(command, "stopped the work", &why);
            self.stop = Some(why);
        }
        if let Some(m) = text(json.get("systemMessage")) {
            self.messages.push(m);
        }
        let reason = text(json.get("reason")).unwrap_or_default();
        match json.get("decision").and_then(Value::as_str) {
            Some("block") => {
                let why = if reason.is_empty() {
                    format!("blocked by the hook `{command}`")
                } else {
                    reason.clone()
                };
                self.note(command, "blocked", &why);
                self.blocked = Some(join(self.blocked.take(), why));
            }
            Some("approve") => self.permit(command, Permission::Allow, reason),
            _ => {}
        }
        if let Some(specific) = json.get("hookSpecificOutput") {
            self.read_specific(command, specific);
        }
    }

    fn read_specific(&mut self, command: &str, specific: &Value) {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let reason = text(specific.get("permissionDecisionReason")).unwrap_or_default();
        let decision = specific.get("permissionDecision").and_then(Value::as_str);
        // `PermissionRequest` answers in `decision.behavior`.
        let nested = specific.get("decision");
        let behavior = nested
            .and_then(|d| d.get("behavior"))
            .and_then(Value::as_str);
        let message = text(nested.and_then(|d| d.get("message"))).unwrap_or_default();
        match decision.or(behavior) {
            Some("allow") => self.permit(command, Permission::Allow, reason),
            Some("ask") => self.permit(command, Permission::Ask, reason),
            Some("deny") => {
                let why = [reason, message].join(" ").trim().to_string();
                self.permit(command, Permission::Deny, why)
            }
            _ => {}
        }
        let updated = specific
            .get("updatedInput")
            .or_else(|| nested.and_then(|d| d.get("updatedInput")));
        if let Some(input) = updated.filter(|v| v.is_object()) {
            self.note(command, "changed the input", &input.to_string());
            self.updated_input = Some(input.clone());
        }
        if let Some(c) = text(specific.get("additionalContext")).filter(|c| !c.trim().is_empty()) {
            self.note(command, "added context", &c);
            self.context.push(c);
        }
    }

    fn permit(&mut self, command: &str, p: Permission, reason: String) {
        if p == Permission::Allow && !self.may_allow {
            self.note(
                command,
                "could not allow (a project's hook; the usual rules apply)",
                &reason,
            );
            return;
        }
        let did = match p {
            Permission::Allow => "allowed",
            Permission::Ask => "asked the person",
            Permission::Deny => "denied",
        };
        if p != Permission::Allow {
            self.note(command, did, &reason);
        }
        let stronger = self.permission.as_ref().is_none_or(|(q, _)| p > *q);
        if stronger {
            self.permission = Some((p, reason));
        }
    }
}

fn join(before: Option<String>, more: String) -> String {
    match before {
        Some(b) => format!("{b}\n{more}"),
        None => more,
    }
}
