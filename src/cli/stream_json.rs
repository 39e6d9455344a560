//! `cairn run --output-format stream-json` (one JSON object per line, as
//! things happen) and `--output-format json` (the same run's final `result`
//! object alone). The schema is documented field by field in
//! `docs/stream-json.md`; [`SCHEMA`] is its version, raised whenever a
//! field changes meaning or goes away (new fields and new event types do not
//! raise it, so readers must ignore what they do not know).

use std::io::Write;

use serde_json::{Value, json};

use crate::conversation::Usage;
use crate::protocol::{AgentEvent, ToolStatus, TurnOutcome};

/// The version of the stream-json schema.
pub const SCHEMA: u32 = 1;

/// How long streamed text waits to be joined with what follows it into
/// one `text_delta` (or `reasoning_delta`) line: providers send a few
/// characters at a time, and a line each would be mostly framing. Short
/// enough that a reader still sees the answer grow as it happens.
pub const JOIN_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);

/// Streamed text held for the next line.
#[derive(Default)]
struct Held {
    reasoning: bool,
    text: String,
    since: Option<std::time::Instant>,
}

/// What the run started with, for the `init` line.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub provider: String,
    pub model: String,
    pub mode: String,
    /// The sandbox commands run in ("read-only, network off").
    pub sandbox: String,
    pub cwd: String,
    /// The stored session continued, when one is.
    pub session_id: Option<String>,
}

/// Why a run ended, as the `result` line names it.
#[derive(Debug, Clone, PartialEq)]
pub enum ExitReason {
    Completed,
    Cancelled,
    TurnLimit(u32),
    Failed(String),
    /// A signal (SIGINT, SIGTERM, SIGHUP) cancelled the turn.
    Signal(i32),
    /// The turn completed but the session could not be saved.
    NotSaved,
    /// The agent stopped without finishing the turn.
    AgentStopped,
}

impl ExitReason {
    pub fn from_outcome(outcome: Option<&TurnOutcome>) -> ExitReason {
        match outcome {
            Some(TurnOutcome::Completed) => ExitReason::Completed,
            Some(TurnOutcome::Cancelled) => ExitReason::Cancelled,
            Some(TurnOutcome::TurnLimit { limit }) => ExitReason::TurnLimit(*limit),
            Some(TurnOutcome::Failed { error }) => ExitReason::Failed(error.clone()),
            None => ExitReason::AgentStopped,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            ExitReason::Completed => "completed",
            ExitReason::Cancelled => "cancelled",
            ExitReason::TurnLimit(_) => "turn_limit",
            ExitReason::Failed(_) => "failed",
            ExitReason::Signal(_) => "signal",
            ExitReason::NotSaved => "not_saved",
            ExitReason::AgentStopped => "agent_stopped",
        }
    }
}

/// Writes stream-json lines (when `streaming`) and keeps what the final
/// `result` object reports.
pub struct StreamWriter<W: Write> {
    out: W,
    streaming: bool,
    started: std::time::Instant,
    /// The answer across responses, without parts a restart dropped.
    answer: String,
    response_start: usize,
    usage: Usage,
    cost: Option<f64>,
    model_calls: u32,
    session_id: Option<String>,
    /// Calls the gate refused or the run could not ask about.
    denials: Vec<Value>,
    /// Tool names by call id, for the denials.
    calls: std::collections::HashMap<String, (String, Value)>,
    /// Streamed text not yet written (see [`JOIN_WINDOW`]).
    held: Held,
}

impl<W: Write> StreamWriter<W> {
    pub fn new(out: W, streaming: bool, info: &RunInfo) -> Self {
        let mut w = StreamWriter {
            out,
            streaming,
            started: std::time::Instant::now(),
            answer: String::new(),
            response_start: 0,
            usage: Usage::default(),
            cost: None,
            model_calls: 0,
            session_id: info.session_id.clone(),
            denials: Vec::new(),
            calls: Default::default(),
            held: Held::default(),
        };
        w.line(json!({
            "type": "init", "schema": SCHEMA, "cairn": env!("CARGO_PKG_VERSION"),
            "provider": info.provider, "model": info.model, "mode": info.mode,
            "sandbox": info.sandbox, "cwd": info.cwd, "session_id": info.session_id,
        }));
        w
    }

    fn line(&mut self, v: Value) {
        let v = versioned(v, SCHEMA);
        if self.streaming {
            // One write and a flush per event, so a reader sees each line as
            // it happens and never half of one.
            let _ = self.out.write_all(format!("{v}\n").as_bytes());
            let _ = self.out.flush();
        }
    }

    /// When held text must be written, if any is held.
    pub fn flush_due(&self) -> Option<std::time::Instant> {
        self.held.since.map(|t| t + JOIN_WINDOW)
    }

    /// Writes the held text as one line.
    pub fn flush_held(&mut self) {
        let held = std::mem::take(&mut self.held);
        if held.text.is_empty() {
            return;
        }
        let kind = if held.reasoning {
            "reasoning_delta"
        } else {
            "text_delta"
        };
        self.line(json!({"type": kind, "text": held.text}));
    }

    /// Holds streamed text; written when the window passes, another kind
    /// of event comes, or much is held.
    fn hold(&mut self, reasoning: bool, text: &str) {
        if self.held.reasoning != reasoning {
            self.flush_held();
        }
        self.held.reasoning = reasoning;
        self.held.text.push_str(text);
        let now = std::time::Instant::now();
        let since = *self.held.since.get_or_insert(now);
        if now.duration_since(since) >= JOIN_WINDOW || self.held.text.len() >= 16 * 1024 {
            self.flush_held();
        }
    }

    pub fn warn(&mut self, text: &str) {
        self.flush_held();
        self.line(json!({"type": "notice", "level": "warning", "text": text}));
    }

    pub fn session(&mut self, id: &str) {
        if self.session_id.as_deref() != Some(id) {
            self.flush_held();
            self.session_id = Some(id.to_string());
            self.line(json!({"type": "session", "session_id": id}));
        }
    }

    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta(t) => {
                self.answer.push_str(t);
                return self.hold(false, t);
            }
            AgentEvent::ReasoningDelta(t) => return self.hold(true, t),
            _ => self.flush_held(),
        }
        if let Some(v) = self.line_for(event) {
            self.line(v);
        }
    }

    fn line_for(&mut self, event: &AgentEvent) -> Option<Value> {
        // (Events both JSON outputs write alike: `shared_line`.)
        Some(match event {
            AgentEvent::ResponseStarted => {
                // Responses of one turn read as paragraphs.
                if !self.answer.is_empty() && !self.answer.ends_with("\n\n") {
                    self.answer.push_str(if self.answer.ends_with('\n') {
                        "\n"
                    } else {
                        "\n\n"
                    });
                }
                self.response_start = self.answer.len();
                self.model_calls += 1;
                json!({"type": "response_start"})
            }
            AgentEvent::ResponseReset => {
                self.answer.truncate(self.response_start);
                json!({"type": "response_reset"})
            }
            AgentEvent::Attached {
                mention, summary, ..
            } => json!({"type": "attached", "mention": mention, "summary": summary}),
            AgentEvent::ToolCallStarted {
                call_id,
                name,
                input,
                summary,
            } => {
                self.calls
                    .insert(call_id.clone(), (name.clone(), input.clone()));
                json!({"type": "tool_call", "id": call_id, "name": name, "input": input, "summary": summary})
            }
            AgentEvent::ToolCallWaiting { call_id } => {
                json!({"type": "tool_status", "id": call_id, "status": "waiting"})
            }
            AgentEvent::ToolCallRunning { call_id } => {
                json!({"type": "tool_status", "id": call_id, "status": "running"})
            }
            AgentEvent::ToolCallProgress { call_id, message } => {
                json!({"type": "tool_progress", "id": call_id, "message": message})
            }
            AgentEvent::ToolCallOutput { call_id, chunk } => {
                json!({"type": "tool_output", "id": call_id, "chunk": crate::ansi::strip(chunk)})
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                output,
                ..
            } => return Some(self.tool_result(call_id, *status, output)),
            AgentEvent::JobOutput { call_id, chunk } => {
                json!({"type": "job_output", "id": call_id, "chunk": crate::ansi::strip(chunk)})
            }
            AgentEvent::Usage {
                usage,
                context_tokens,
                context_window,
                cost,
            } => {
                self.usage.add(usage);
                self.cost = *cost;
                json!({"type": "usage", "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens, "cache_read_tokens": usage.cache_read_tokens,
                    "cache_write_tokens": usage.cache_write_tokens, "context_tokens": context_tokens,
                    "context_window": context_window, "cost_usd": cost})
            }
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                ..
            } => {
                json!({"type": "compacted", "before_tokens": before_tokens, "after_tokens": after_tokens})
            }
            AgentEvent::TurnStarted { turn, .. } => json!({"type": "turn_start", "turn": turn}),
            AgentEvent::SubagentStarted {
                call_id,
                agent,
                description,
                ..
            } => {
                json!({"type": "subagent_start", "id": call_id, "agent": agent, "description": description})
            }
            AgentEvent::SubagentFinished {
                call_id,
                agent,
                outcome,
                summary,
                usage,
                ..
            } => {
                self.usage.add(usage);
                json!({"type": "subagent_end", "id": call_id, "agent": agent, "outcome": outcome,
                    "summary": summary, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens})
            }
            other => return shared_line(other),
        })
    }

    fn tool_result(&mut self, call_id: &str, status: ToolStatus, output: &str) -> Value {
        let output = crate::ansi::strip(output);
        let (tool, input) = self.calls.remove(call_id).unwrap_or_default();
        if matches!(status, ToolStatus::Denied | ToolStatus::Blocked) {
            let denial = json!({"type": "permission_denied", "id": call_id, "tool": tool,
                "input": input, "status": status, "reason": output});
            self.denials.push(denial.clone());
            self.line(denial);
        }
        json!({"type": "tool_result", "id": call_id, "status": status,
            "is_error": status != ToolStatus::Done, "output": output})
    }

    /// The last object: always written, also in `json` output where it is
    /// the only one.
    pub fn result(&mut self, reason: &ExitReason, exit_code: i32) {
        self.flush_held();
        let error = match reason {
            ExitReason::Failed(e) => Some(e.clone()),
            ExitReason::TurnLimit(n) => Some(format!("stopped after {n} model calls in one turn")),
            ExitReason::Signal(s) => Some(format!("stopped by signal {s}")),
            ExitReason::NotSaved => Some("the session could not be saved".to_string()),
            ExitReason::AgentStopped => Some("the agent stopped unexpectedly".to_string()),
            ExitReason::Completed | ExitReason::Cancelled => None,
        };
        let v = json!({
            "type": "result", "schema": SCHEMA, "exit_reason": reason.name(),
            "exit_code": exit_code, "is_error": exit_code != 0, "error": error,
            "text": self.answer, "session_id": self.session_id, "cost_usd": self.cost,
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens,
                "cache_read_tokens": self.usage.cache_read_tokens, "cache_write_tokens": self.usage.cache_write_tokens},
            "model_calls": self.model_calls,
            "duration_ms": self.started.elapsed().as_millis() as u64,
            "permission_denials": self.denials,
        });
        self.streaming = true;
        self.line(v);
    }
}

/// The events `--json` and stream-json write the same way.
/// `v` with `"schema": schema` added, so each line says which schema it
/// follows whatever line a reader starts at (`tail -f`, a cut log).
pub(super) fn versioned(mut v: Value, schema: u32) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.entry("schema").or_insert(schema.into());
    }
    v
}

pub(super) fn shared_line(event: &AgentEvent) -> Option<Value> {
    Some(match event {
        AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay_ms,
            error,
        } => {
            json!({"type": "retry", "attempt": attempt, "max_attempts": max_attempts, "delay_ms": delay_ms, "error": error})
        }
        AgentEvent::Notice { level, text } => {
            json!({"type": "notice", "level": level, "text": text})
        }
        AgentEvent::Todos(t) => json!({"type": "todos", "todos": t}),
        AgentEvent::Hook {
            summary,
            command,
            output,
        } => json!({"type": "hook", "summary": summary, "command": command, "output": output}),
        AgentEvent::PlanProposed { plan, .. } => json!({"type": "plan", "plan": plan}),
        AgentEvent::WebSearch(search) => json!({"type": "web_search", "id": search.id,
            "queries": search.queries, "sources": search.sources, "error": search.error,
            "provider_format": search.format}),
        AgentEvent::Citations(sources) => json!({"type": "citations", "sources": sources}),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(buf: &[u8]) -> Vec<Value> {
        String::from_utf8_lossy(buf)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_restarted_response_is_dropped_from_the_result_text() {
        let mut buf = Vec::new();
        let mut w = StreamWriter::new(&mut buf, true, &RunInfo::default());
        w.event(&AgentEvent::ResponseStarted);
        w.event(&AgentEvent::TextDelta("half".into()));
        w.event(&AgentEvent::ResponseReset);
        w.event(&AgentEvent::TextDelta("whole".into()));
        w.result(&ExitReason::Completed, 0);
        let l = lines(&buf);
        assert_eq!(l[0]["type"], "init");
        assert_eq!(l[0]["schema"], SCHEMA);
        assert!(l.iter().all(|line| line["schema"] == SCHEMA), "{l:?}");
        let last = l.last().unwrap();
        assert_eq!(last["text"], "whole");
        assert_eq!(last["exit_reason"], "completed");
        assert_eq!(last["model_calls"], 1);
    }

    #[test]
    fn streamed_text_is_joined_within_the_window_and_kinds_stay_apart() {
        let mut buf = Vec::new();
        let mut w = StreamWriter::new(&mut buf, true, &RunInfo::default());
        w.event(&AgentEvent::ResponseStarted);
        w.event(&AgentEvent::ReasoningDelta("think".into()));
        for piece in ["An ", "answer ", "in ", "pieces."] {
            w.event(&AgentEvent::TextDelta(piece.into()));
        }
        assert!(w.flush_due().is_some(), "text is held");
        std::thread::sleep(JOIN_WINDOW);
        w.event(&AgentEvent::TextDelta(" Later.".into()));
        w.event(&AgentEvent::TextDelta(" Held".into()));
        w.result(&ExitReason::Completed, 0);
        let l = lines(&buf);
        let kinds: Vec<(&str, &str)> = (l.iter())
            .filter(|v| v["type"].as_str().unwrap().ends_with("_delta"))
            .map(|v| (v["type"].as_str().unwrap(), v["text"].as_str().unwrap()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("reasoning_delta", "think"),
                ("text_delta", "An answer in pieces. Later."),
                ("text_delta", " Held"),
            ]
        );
        assert_eq!(
            l.last().unwrap()["text"],
            "An answer in pieces. Later. Held"
        );
    }

    #[test]
    fn a_denied_call_is_a_denial_line_and_listed_in_the_result() {
        let mut buf = Vec::new();
        let mut w = StreamWriter::new(&mut buf, false, &RunInfo::default());
        w.event(&AgentEvent::ToolCallStarted {
            call_id: "c1".into(),
            name: "bash".into(),
            input: json!({"command": "rm x"}),
            summary: "rm x".into(),
        });
        w.event(&AgentEvent::ToolCallFinished {
            call_id: "c1".into(),
            status: ToolStatus::Denied,
            output: "needs approval".into(),
            display: None,
        });
        w.result(&ExitReason::Failed("boom".into()), 1);
        // Not streaming: the result is the only line.
        let l = lines(&buf);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0]["permission_denials"][0]["tool"], "bash");
        assert_eq!(l[0]["error"], "boom");
        assert_eq!(l[0]["is_error"], true);
    }
}
