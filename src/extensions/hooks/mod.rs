//! Hooks with Claude Code's contract, so the scripts people already have
//! run unchanged: a command per event, JSON on stdin, an answer in the exit
//! code (0 fine, 2 blocks, other a warning) or as JSON on stdout.
//!
//! - `sources` — where hooks come from: `[hooks]` of cairn's user and
//!   project config, Claude Code's `settings.json` files; what a project's
//!   hooks need trusted, and the fingerprint of their scripts.
//! - `names` — cairn's tools under the names and input fields Claude
//!   Code's hooks expect (`bash` is `Bash {command}`, `view` is
//!   `Read {file_path}`), and back for `updatedInput`.
//! - `run` — one event's hooks run in parallel, each with its timeout,
//!   inside the sandbox (the person's own too, unless their config opts
//!   out); cancelled with the turn.
//! - `answer` — what the runs say together (blocked, allowed, context).
//! - `transcript` — the JSONL transcript `transcript_path` points at.
//!
//! The agent calls [`Hooks`] at each event; the interface's `/hooks` reads
//! [`Hooks::describe`].

mod answer;
pub mod names;
pub mod prompt;
mod run;
mod sources;
mod transcript;

pub use answer::{Note, Outcome, Permission};
pub use run::HookRun;
pub use sources::{Files, discover, project_held};

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use regex::Regex;

use super::commands::Scope;

/// The events a hook may be registered for, named as Claude Code names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    SessionStart,
    SessionEnd,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    PermissionRequest,
    Notification,
    Stop,
    SubagentStop,
    PreCompact,
}

impl Event {
    pub const ALL: [Event; 11] = [
        Event::SessionStart,
        Event::SessionEnd,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::PermissionRequest,
        Event::Notification,
        Event::Stop,
        Event::SubagentStop,
        Event::PreCompact,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::SessionEnd => "SessionEnd",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::PermissionRequest => "PermissionRequest",
            Event::Notification => "Notification",
            Event::Stop => "Stop",
            Event::SubagentStop => "SubagentStop",
            Event::PreCompact => "PreCompact",
        }
    }

    pub fn parse(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the model reads what a blocking hook says (else the person).
    pub fn model_sees(self) -> bool {
        matches!(
            self,
            Event::PreToolUse
                | Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::PermissionRequest
                | Event::Stop
                | Event::SubagentStop
        )
    }
}

/// A hook's `matcher`, as Claude Code writes it: empty or `*` for all, a
/// name or names joined by `|` compared whole, otherwise a regular
/// expression that must match the whole name (`mcp__github__.*`).
#[derive(Debug, Clone)]
pub struct Matcher {
    pub text: String,
    regex: Option<Regex>,
}

impl Matcher {
    pub fn parse(text: &str) -> Result<Matcher, String> {
        let text = text.trim().to_string();
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|' || c == '-');
        let regex = if text.is_empty() || text == "*" || plain {
            None
        } else {
            let re = Regex::new(&format!("^(?:{text})$"))
                .map_err(|e| format!("the matcher `{text}` is not a valid pattern: {e}"))?;
            Some(re)
        };
        Ok(Matcher { text, regex })
    }

    /// Whether it matches any of `names` (a tool's Claude and cairn names,
    /// or an event's subject such as `startup` or `auto`).
    pub fn matches(&self, names: &[&str]) -> bool {
        if self.text.is_empty() || self.text == "*" {
            return true;
        }
        match &self.regex {
            Some(re) => names.iter().any(|n| re.is_match(n)),
            None => self
                .text
                .split('|')
                .any(|m| names.iter().any(|n| *n == m.trim())),
        }
    }
}

/// What a hook is: a command, or a prompt a model judges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Kind {
    #[default]
    Command,
    /// `"type": "prompt"`: `command` holds the prompt's text; `model` the
    /// model the hook names (the session's when `None`).
    Prompt { model: Option<String> },
}

/// One hook.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: Event,
    pub matcher: Matcher,
    pub kind: Kind,
    /// The command, or a prompt hook's text.
    pub command: String,
    pub timeout: Duration,
    /// The file it was read from.
    pub source: PathBuf,
    /// A project's hook runs in the sandbox; the person's too, unless
    /// their config says `[sandbox] user_hooks = false`.
    pub scope: Scope,
}

/// How long a hook may run unless it says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How a hook's last run went, for `/hooks`.
#[derive(Debug, Clone, Default)]
struct LastRun {
    code: Option<i32>,
    failure: Option<String>,
    duration: Duration,
}

/// The hooks of a session and what they need to run.
pub struct Hooks {
    hooks: Vec<Hook>,
    /// Sentences about hooks that could not be read.
    pub problems: Vec<String>,
    /// A project's hooks were left out (the project is not trusted).
    pub project_left_out: usize,
    workspace: PathBuf,
    sandbox: crate::sandbox::Sandbox,
    last: Mutex<Vec<Option<LastRun>>>,
    transcript: transcript::Transcript,
    /// How prompt hooks reach a model (the agent sets it).
    asker: Mutex<Option<prompt::Asker>>,
}

impl Hooks {
    /// The hooks found in `files`; a project's only when `trusted`.
    pub fn load(
        files: &Files,
        trusted: bool,
        sandbox: crate::sandbox::Sandbox,
        transcripts: Option<PathBuf>,
    ) -> Hooks {
        let (all, problems) = discover(files);
        let (hooks, left): (Vec<Hook>, Vec<Hook>) = all
            .into_iter()
            .partition(|h| trusted || h.scope == Scope::User);
        // No hooks, no transcript file for them.
        let transcripts = transcripts.filter(|_| !hooks.is_empty());
        Hooks {
            last: Mutex::new(vec![None; hooks.len()]),
            hooks,
            problems,
            project_left_out: left.len(),
            workspace: files.workspace.clone(),
            sandbox,
            transcript: transcript::Transcript::new(transcripts),
            asker: Mutex::new(None),
        }
    }

    /// How prompt hooks ask a model: the session's provider.
    pub fn set_asker(&self, asker: prompt::Asker) {
        *crate::sync::lock(&self.asker) = Some(asker);
    }

    pub(super) fn asker(&self) -> Option<prompt::Asker> {
        crate::sync::lock(&self.asker).clone()
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    pub fn hooks(&self) -> &[Hook] {
        &self.hooks
    }

    /// Whether any hook would run for `event` with these subjects.
    pub fn wants(&self, event: Event, subjects: &[&str]) -> bool {
        self.hooks
            .iter()
            .any(|h| h.event == event && h.matcher.matches(subjects))
    }

    /// The id hooks see as `session_id`.
    pub fn session_id(&self) -> String {
        self.transcript.session_id()
    }

    /// The JSONL transcript hooks see as `transcript_path`.
    pub fn transcript_path(&self) -> Option<PathBuf> {
        self.transcript.path()
    }

    /// Keeps the transcript current: a message was added.
    pub fn message_added(&self, message: &crate::conversation::Message) {
        if !self.hooks.is_empty() {
            self.transcript.append(message, &self.workspace);
        }
    }

    /// A new session (or a resumed one): a new id and transcript.
    pub fn restart_session(&self) {
        self.transcript.restart();
    }

    fn record(&self, runs: &[HookRun]) {
        let mut last = crate::sync::lock(&self.last);
        for r in runs {
            if let Some(slot) = last.get_mut(r.index) {
                *slot = Some(LastRun {
                    code: r.code,
                    failure: r.failure.clone(),
                    duration: r.duration,
                });
            }
        }
    }

    /// Every hook, where it came from, how it runs and how it last ended.
    pub fn describe(&self) -> String {
        if self.hooks.is_empty() && self.project_left_out == 0 && self.problems.is_empty() {
            return "No hooks are configured. Add them as [hooks] in cairn's config, or in .claude/settings.json as for Claude Code.".into();
        }
        let last = crate::sync::lock(&self.last).clone();
        let mut out = String::new();
        for (i, h) in self.hooks.iter().enumerate() {
            let matcher = match h.matcher.text.as_str() {
                "" => String::new(),
                m => format!(" [{m}]"),
            };
            let how = match (&h.kind, h.scope) {
                (Kind::Prompt { model }, scope) => {
                    let whose = if scope == Scope::Project {
                        "project"
                    } else {
                        "yours"
                    };
                    match model {
                        Some(m) => format!("{whose}, a prompt {m} judges"),
                        None => format!("{whose}, a prompt the session's model judges"),
                    }
                }
                (_, scope) => match scope {
                    Scope::Project => "project, in the sandbox",
                    Scope::User if self.confines_user_hooks() => "yours, in the sandbox",
                    Scope::User => "yours, runs as you ([sandbox] user_hooks = false)",
                }
                .to_string(),
            };
            let ran = match last.get(i).cloned().flatten() {
                None => "not run yet".to_string(),
                Some(r) => {
                    let end = match (&r.failure, r.code) {
                        (Some(f), _) => f.clone(),
                        (None, Some(2)) if h.kind != Kind::Command => "said no".into(),
                        (None, Some(_)) if h.kind != Kind::Command => "said ok".into(),
                        (None, Some(c)) => format!("exit {c}"),
                        (None, None) => "ended by a signal".into(),
                    };
                    format!("last: {end} in {} ms", r.duration.as_millis())
                }
            };
            out.push_str(&format!(
                "{}{matcher}: {}\n    {} ({how}) · timeout {} s · {ran}\n",
                h.event.name(),
                one_line(&h.command),
                h.source.display(),
                h.timeout.as_secs(),
            ));
        }
        if self.project_left_out > 0 {
            out.push_str(&format!(
                "{} project hook(s) not run: the project is not trusted.\n",
                self.project_left_out
            ));
        }
        for p in &self.problems {
            out.push_str(&format!("Not loaded: {p}\n"));
        }
        out
    }
}

/// A command on one line, for lists.
fn one_line(s: &str) -> String {
    s.lines().map(str::trim).collect::<Vec<_>>().join(" ⏎ ")
}

#[cfg(test)]
mod tests;
