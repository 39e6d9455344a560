//! `cairn run`: one prompt, no interface. Another reader of `AgentEvent`.

use std::io::Write;

use serde_json::json;
use tokio::sync::mpsc;

use crate::agent::{AgentCommand, AgentEvent, NoticeLevel, ToolStatus, TurnOutcome};
use crate::cli::startup::{self, Overrides};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Plain,
    Json,
}

/// Sends the prompt, prints events until the turn ends, and returns the
/// process exit code: 0 when the turn completed, 1 otherwise.
pub async fn run(
    prompt: String,
    output: Output,
    commands: mpsc::UnboundedSender<AgentCommand>,
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
) -> i32 {
    if commands
        .send(AgentCommand::Submit {
            text: prompt,
            images: vec![],
        })
        .is_err()
    {
        eprintln!("cairn: the agent stopped before it could start");
        return 1;
    }
    let mut printer = Printer::new(output);
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            ev = events.recv() => ev,
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                interrupted = true;
                let _ = commands.send(AgentCommand::Cancel);
                continue;
            }
        };
        let Some(event) = event else {
            eprintln!("cairn: the agent stopped unexpectedly");
            return 1;
        };
        if let AgentEvent::TurnFinished { outcome, .. } = &event {
            let code = printer.finish(outcome);
            let _ = commands.send(AgentCommand::Shutdown);
            return code;
        }
        printer.event(&event);
    }
}

struct Printer {
    output: Output,
    answer: String,
    /// Whether stdout's last byte was a newline, so tool lines start clean.
    at_line_start: bool,
    /// Summaries of calls that have not finished, by id.
    calls: std::collections::HashMap<String, String>,
}

impl Printer {
    fn new(output: Output) -> Self {
        Printer {
            output,
            answer: String::new(),
            at_line_start: true,
            calls: Default::default(),
        }
    }

    fn json_line(&self, v: serde_json::Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    }

    fn event(&mut self, event: &AgentEvent) {
        match self.output {
            Output::Json => self.event_json(event),
            Output::Plain => self.event_plain(event),
        }
    }

    fn event_plain(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta(t) => {
                self.answer.push_str(t);
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(t.as_bytes());
                let _ = out.flush();
                if !t.is_empty() {
                    self.at_line_start = t.ends_with('\n');
                }
            }
            AgentEvent::ResponseStarted if !self.at_line_start => {
                println!();
                self.at_line_start = true;
            }
            AgentEvent::ResponseReset => {
                eprintln!("\n[the answer restarted after a dropped connection]");
            }
            AgentEvent::ToolCallStarted {
                call_id, summary, ..
            } => {
                self.calls.insert(call_id.clone(), summary.clone());
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                output,
                ..
            } => {
                if !self.at_line_start {
                    println!();
                    self.at_line_start = true;
                }
                let summary = self.calls.remove(call_id).unwrap_or_default();
                let mark = match status {
                    ToolStatus::Done => "✓",
                    ToolStatus::Failed => "✗",
                    ToolStatus::Denied => "denied",
                    ToolStatus::Blocked => "blocked",
                    ToolStatus::Cancelled => "cancelled",
                };
                let first = output.lines().next().unwrap_or("");
                if *status == ToolStatus::Done {
                    eprintln!("→ {summary} {mark}");
                } else {
                    eprintln!(
                        "→ {summary} {mark} {}",
                        crate::text::truncate_chars(first, 160)
                    );
                }
            }
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                error,
            } => eprintln!(
                "[{error}; retrying in {:.1}s ({attempt}/{max_attempts})]",
                *delay_ms as f64 / 1000.0
            ),
            AgentEvent::Notice { level, text } => {
                let tag = match level {
                    NoticeLevel::Info => "note",
                    NoticeLevel::Warning => "warning",
                    NoticeLevel::Error => "error",
                };
                eprintln!("[{tag}] {text}");
            }
            _ => {}
        }
    }

    fn event_json(&mut self, event: &AgentEvent) {
        let v = match event {
            AgentEvent::TextDelta(t) => {
                self.answer.push_str(t);
                json!({"type": "text", "text": t})
            }
            AgentEvent::ReasoningDelta(t) => json!({"type": "reasoning", "text": t}),
            AgentEvent::ResponseReset => json!({"type": "reset"}),
            AgentEvent::ToolCallStarted {
                call_id,
                name,
                input,
                summary,
            } => {
                json!({"type": "tool_call", "id": call_id, "name": name, "input": input, "summary": summary})
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                output,
                ..
            } => json!({"type": "tool_result", "id": call_id, "status": status, "output": output}),
            AgentEvent::Usage {
                usage,
                context_tokens,
                context_window,
                cost,
            } => {
                json!({"type": "usage", "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
                "context_tokens": context_tokens, "context_window": context_window, "cost": cost})
            }
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
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                summary,
            } => {
                json!({"type": "compacted", "before_tokens": before_tokens, "after_tokens": after_tokens, "summary": summary})
            }
            _ => return,
        };
        self.json_line(v);
    }

    fn finish(&mut self, outcome: &TurnOutcome) -> i32 {
        let code = if matches!(outcome, TurnOutcome::Completed) {
            0
        } else {
            1
        };
        match self.output {
            Output::Json => {
                self.json_line(json!({"type": "final", "outcome": outcome, "text": self.answer}))
            }
            Output::Plain => {
                if !self.at_line_start {
                    println!();
                }
                match outcome {
                    TurnOutcome::Completed => {}
                    TurnOutcome::Cancelled => eprintln!("cairn: cancelled"),
                    TurnOutcome::TurnLimit { limit } => eprintln!(
                        "cairn: stopped after {limit} model calls in one turn (max_turns in the config)"
                    ),
                    TurnOutcome::Failed { error } => eprintln!("cairn: {error}"),
                }
            }
        }
        code
    }
}

/// `cairn run PROMPT`: starts the agent without the interface, prints its
/// events, and returns the exit code.
pub async fn main(overrides: &Overrides, prompt: String, output: Output) -> anyhow::Result<u8> {
    let s = startup::prepare(overrides).await?;
    if let Some(note) = s.trust_note() {
        eprintln!("{note}");
    }
    let Some(provider) = s.provider.clone() else {
        eprintln!("{}", startup::setup_help());
        return Ok(1);
    };
    let running = startup::start_agent(&s, &provider, false)?;
    if let Some(e) = &running.store_error {
        eprintln!("cairn: this session will not be saved: {e}");
    }
    let code = run(prompt, output, running.commands, running.events).await;
    if let Some(sink) = &running.sink {
        sink.flush();
    }
    Ok(code as u8)
}
