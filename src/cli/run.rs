//! `cairn run`: one prompt, no interface. Another reader of `AgentEvent`.
//!
//! Plain output prints each answer once its response is complete, so an
//! answer that restarts after a dropped connection is printed once; every
//! piece of model, tool or file text is escaped before it reaches the
//! terminal (see `term_safe`). JSON output streams every event.
//!
//! Exit codes: 0 the turn completed and the session is saved; 1 the turn
//! failed, was cancelled or hit the turn limit; 2 bad usage; 3 the turn
//! completed but the session could not be saved; 4 the answer could not be
//! written to standard output (a full disk, a closed pipe); 128 + the
//! signal's number when SIGINT, SIGTERM or SIGHUP cancelled it.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::agent::store_sink::{RETRY_EVERY, StoreSink};
use crate::cli::startup::{self, Overrides};
use crate::cli::stream_json::{ExitReason, RunInfo, StreamWriter};
use crate::protocol::{AgentCommand, AgentEvent, NoticeLevel, ToolStatus, TurnOutcome};
use crate::term_safe::escape;

/// The version of `cairn run --json`'s line format (docs/json-lines.md),
/// on every line; raised when a field changes meaning or disappears.
pub const JSON_SCHEMA: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Plain,
    /// `--json`: every event as a JSON line, in the format of cairn 0.x.
    Json,
    /// `--output-format stream-json`: the versioned schema of
    /// `docs/stream-json.md`, one line per event as it happens.
    StreamJson,
    /// `--output-format json`: that schema's final `result` object alone.
    JsonResult,
}

/// The exit code of a completed turn whose session could not be saved.
pub const EXIT_NOT_SAVED: i32 = 3;
/// The exit code of a turn whose answer could not be written to stdout.
pub const EXIT_NOT_WRITTEN: i32 = 4;
/// The first failure to write standard output: the answer was lost there,
/// so the run must not exit 0.
static STDOUT_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
/// How long the end of a run waits for another process's write lock.
const STORE_PATIENCE: Duration = Duration::from_secs(60);

/// Where a run's session goes.
pub struct Recording {
    pub sink: Option<Arc<StoreSink>>,
    /// Why the store could not be opened at all.
    pub error: Option<String>,
}

/// Sends the prompt, prints events until the turn ends, and returns the
/// process exit code (see the module docs).
pub async fn run(
    (prompt, images): (String, Vec<crate::conversation::ImageData>),
    output: Output,
    commands: mpsc::UnboundedSender<AgentCommand>,
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    recording: Recording,
    info: &RunInfo,
    notes: &[String],
) -> i32 {
    let mut printer = Printer::new(output, info);
    for note in notes {
        printer.warn(note);
    }
    if let Some(e) = &recording.error {
        printer.warn(&format!("this session will not be saved: {e}"));
    }
    let Ok(mut signals) = Signals::new() else {
        eprintln!("cairn: cannot listen for signals");
        return 1;
    };
    if commands
        .send(AgentCommand::Submit {
            text: prompt,
            images,
        })
        .is_err()
    {
        eprintln!("cairn: the agent stopped before it could start");
        return 1;
    }
    let mut stopped_by: Option<i32> = None;
    let outcome = loop {
        let due = printer.flush_due();
        let event = tokio::select! {
            ev = events.recv() => ev,
            // Streamed text held for joining is written once its window
            // has passed, also when nothing else comes.
            _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now).into()), if due.is_some() => {
                printer.flush_held();
                continue;
            }
            sig = signals.next() => {
                if stopped_by.is_some() {
                    // A second signal: stop waiting for the turn to wind down.
                    break None;
                }
                stopped_by = Some(sig);
                let _ = commands.send(AgentCommand::Cancel);
                continue;
            }
        };
        let Some(event) = event else {
            eprintln!("cairn: the agent stopped unexpectedly");
            break None;
        };
        if let AgentEvent::TurnFinished { outcome, .. } = event {
            break Some(outcome);
        }
        printer.event(&event);
    };
    let _ = commands.send(AgentCommand::Shutdown);
    let saved = save(&recording, &mut printer, &mut events).await;
    let code = match &outcome {
        Some(o) => printer.finish(o),
        None => 1,
    };
    let (code, reason) = match (stopped_by, code, saved) {
        (Some(sig), _, _) => (128 + sig, ExitReason::Signal(sig)),
        (None, 0, false) => (EXIT_NOT_SAVED, ExitReason::NotSaved),
        (None, code, _) => (code, ExitReason::from_outcome(outcome.as_ref())),
    };
    if let Some(stream) = &mut printer.stream {
        stream.result(&reason, code);
    }
    match stdout_error() {
        Some(why) => {
            eprintln!(
                "cairn: the answer could not be written to standard output ({why}); \
                 it is in the saved session (`cairn sessions`)"
            );
            if code == 0 { EXIT_NOT_WRITTEN } else { code }
        }
        None => code,
    }
}

fn stdout_error() -> Option<String> {
    STDOUT_ERROR.lock().ok().and_then(|e| e.clone())
}

/// Waits for the store to take every write, reporting as it goes (the
/// store writer speaks on the agent's channel); false, with a message, when
/// the session is not fully saved. A store another process keeps locked is
/// waited for up to [`STORE_PATIENCE`]; a disk or file that refuses writes
/// is tried once more.
async fn save(
    recording: &Recording,
    printer: &mut Printer,
    events: &mut mpsc::UnboundedReceiver<AgentEvent>,
) -> bool {
    let Some(sink) = recording.sink.clone() else {
        return recording.error.is_none();
    };
    let deadline = Instant::now() + STORE_PATIENCE;
    let status = loop {
        let s = sink.clone();
        let mut flush = tokio::task::spawn_blocking(move || s.flush_within(STORE_PATIENCE * 2));
        let status = loop {
            tokio::select! {
                r = &mut flush => break r.unwrap_or_default(),
                Some(ev) = events.recv() => printer.event(&ev),
            }
        };
        if status.unsaved == 0 || !status.busy || Instant::now() >= deadline {
            break status;
        }
        tokio::time::sleep(RETRY_EVERY).await;
    };
    while let Ok(ev) = events.try_recv() {
        printer.event(&ev);
    }
    if let Some(id) = &status.session {
        printer.session(id.as_str());
    }
    match (status.unsaved, status.error) {
        (0, _) => true,
        (n, why) => {
            eprintln!(
                "cairn: the session could not be saved ({n} writes lost): {}",
                escape(why.as_deref().unwrap_or("the store did not answer"))
            );
            false
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH connection) all
/// cancel the turn, so its tools' process groups are stopped and the
/// cancellation is recorded before cairn exits.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The number of the next signal received.
    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

struct Printer {
    output: Output,
    /// The text of the latest response, without restarted parts.
    answer: String,
    /// The current response's text, printed once the response is complete.
    pending: String,
    /// Where the current response began in `answer`.
    response_start: usize,
    /// Whether stdout's last byte was a newline, so tool lines start clean.
    at_line_start: bool,
    /// Summaries of calls that have not finished, by id.
    calls: std::collections::HashMap<String, String>,
    session_shown: Option<String>,
    store_failing: bool,
    /// The stream-json writer, for `StreamJson` and `JsonResult`.
    stream: Option<StreamWriter<std::io::Stdout>>,
}

fn out_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    if let Err(e) = written
        && let Ok(mut first) = STDOUT_ERROR.lock()
    {
        first.get_or_insert_with(|| e.to_string());
    }
}

impl Printer {
    fn new(output: Output, info: &RunInfo) -> Self {
        let stream = match output {
            Output::StreamJson => Some(StreamWriter::new(std::io::stdout(), true, info)),
            Output::JsonResult => Some(StreamWriter::new(std::io::stdout(), false, info)),
            Output::Plain | Output::Json => None,
        };
        Printer {
            stream,
            output,
            answer: String::new(),
            pending: String::new(),
            response_start: 0,
            at_line_start: true,
            calls: Default::default(),
            session_shown: None,
            store_failing: false,
        }
    }

    fn json_line(&self, v: serde_json::Value) {
        let v = super::stream_json::versioned(v, JSON_SCHEMA);
        out_line(&format!("{v}\n"));
    }

    fn warn(&mut self, text: &str) {
        if let Some(stream) = &mut self.stream {
            return stream.warn(text);
        }
        match self.output {
            Output::Json => {
                self.json_line(json!({"type": "notice", "level": "warning", "text": text}))
            }
            _ => eprintln!("cairn: {}", escape(text)),
        }
    }

    /// Says the session's id, once: on stderr, or as a `session` event.
    fn session(&mut self, id: &str) {
        if self.session_shown.as_deref() == Some(id) {
            return;
        }
        self.session_shown = Some(id.to_string());
        match self.output {
            Output::Json => self.json_line(json!({"type": "session", "id": id})),
            Output::Plain => eprintln!("cairn: session {id}"),
            Output::StreamJson | Output::JsonResult => {
                if let Some(stream) = &mut self.stream {
                    stream.session(id);
                }
            }
        }
    }

    fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta(t) => {
                self.answer.push_str(t);
                self.pending.push_str(t);
            }
            AgentEvent::ResponseStarted => {
                self.flush_text();
                // The answer is the last response's text: what the model
                // said before a tool call was narration, not the answer.
                self.answer.clear();
                self.response_start = 0;
            }
            AgentEvent::ResponseReset => {
                self.answer.truncate(self.response_start);
                self.pending.clear();
            }
            AgentEvent::ToolCallStarted { .. } | AgentEvent::MessageAdded(_) => self.flush_text(),
            AgentEvent::SessionRecorded { id } => return self.session(id.as_str()),
            AgentEvent::StoreFailed { error, unsaved } => {
                if !self.store_failing {
                    self.warn(&format!(
                        "not saved: {error} ({unsaved} writes waiting; they are kept and tried again)"
                    ));
                }
                self.store_failing = true;
                return;
            }
            AgentEvent::StoreRecovered => {
                self.store_failing = false;
                return self.warn("the session is saved again");
            }
            _ => {}
        }
        match (&mut self.stream, self.output) {
            (Some(stream), _) => stream.event(event),
            (None, Output::Json) => self.event_json(event),
            (None, _) => self.event_plain(event),
        }
    }

    /// When stream-json text held for joining must be written.
    fn flush_due(&self) -> Option<Instant> {
        self.stream.as_ref().and_then(StreamWriter::flush_due)
    }

    fn flush_held(&mut self) {
        if let Some(stream) = &mut self.stream {
            stream.flush_held();
        }
    }

    /// Prints the current response's text (plain output).
    fn flush_text(&mut self) {
        if self.output != Output::Plain || self.pending.is_empty() {
            self.pending.clear();
            return;
        }
        let text = std::mem::take(&mut self.pending);
        out_line(&escape(&text));
        self.at_line_start = text.ends_with('\n');
    }

    fn new_line(&mut self) {
        if !self.at_line_start {
            out_line("\n");
            self.at_line_start = true;
        }
    }

    fn event_plain(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ResponseStarted => self.new_line(),
            AgentEvent::ResponseReset => {
                eprintln!("[the answer restarted after a dropped connection]");
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
                self.new_line();
                let summary = escape(&self.calls.remove(call_id).unwrap_or_default());
                let mark = match status {
                    ToolStatus::Done => "✓",
                    ToolStatus::Failed => "✗",
                    ToolStatus::Denied => "denied",
                    ToolStatus::Blocked => "blocked",
                    ToolStatus::Cancelled => "cancelled",
                };
                let output = crate::ansi::strip(output);
                let first = output.lines().next().unwrap_or("");
                if *status == ToolStatus::Done {
                    eprintln!("→ {summary} {mark}");
                } else {
                    eprintln!(
                        "→ {summary} {mark} {}",
                        escape(&crate::text::truncate_chars(first, 160))
                    );
                }
            }
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                error,
            } => eprintln!(
                "[{}; retrying in {:.1}s ({attempt}/{max_attempts})]",
                escape(error),
                *delay_ms as f64 / 1000.0
            ),
            AgentEvent::Notice { level, text } => {
                let tag = match level {
                    NoticeLevel::Info => "note",
                    NoticeLevel::Warning => "warning",
                    NoticeLevel::Error => "error",
                };
                eprintln!("[{tag}] {}", escape(text));
            }
            AgentEvent::Hook {
                summary, command, ..
            } => eprintln!("[hook] {} ({})", escape(summary), escape(command)),
            AgentEvent::SubagentStarted {
                agent, description, ..
            } => {
                self.new_line();
                eprintln!("⇢ sub-agent {}: {}", escape(agent), escape(description));
            }
            AgentEvent::SubagentFinished { summary, .. } => {
                self.new_line();
                eprintln!("⇠ {}", escape(summary));
            }
            AgentEvent::PlanProposed { plan, .. } => {
                self.new_line();
                out_line(&format!("\n{}\n", escape(plan)));
            }
            AgentEvent::WebSearch(search) => {
                self.new_line();
                eprintln!("⌕ web search \"{}\"", escape(&search.query_line()));
                if let Some(why) = &search.error {
                    eprintln!("  failed: {}", escape(why));
                }
                eprint!("{}", numbered_sources(&search.sources));
            }
            AgentEvent::Citations(sources) => {
                self.flush_text();
                self.new_line();
                eprintln!("Sources:");
                eprint!("{}", numbered_sources(sources));
            }
            _ => {}
        }
    }

    fn event_json(&mut self, event: &AgentEvent) {
        if let Some(v) = Self::json_of(event) {
            self.json_line(v);
        }
    }

    /// An event as a `--json` line; `None` for those it leaves out.
    fn json_of(event: &AgentEvent) -> Option<serde_json::Value> {
        Some(match event {
            AgentEvent::TextDelta(t) => json!({"type": "text", "text": t}),
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
            } => {
                json!({"type": "tool_result", "id": call_id, "status": status, "output": crate::ansi::strip(output)})
            }
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
            AgentEvent::SubagentStarted {
                call_id,
                agent,
                description,
                prompt,
            } => {
                json!({"type": "subagent_start", "id": call_id, "agent": agent, "description": description, "prompt": prompt})
            }
            AgentEvent::SubagentFinished {
                call_id,
                agent,
                outcome,
                summary,
                usage,
                cost,
            } => {
                json!({"type": "subagent_end", "id": call_id, "agent": agent, "outcome": outcome,
                "summary": summary, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens, "cost": cost})
            }
            AgentEvent::Subagent { call_id, event } => match Self::json_of(event) {
                Some(inner) => json!({"type": "subagent", "id": call_id, "event": inner}),
                None => return None,
            },
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                summary,
                ..
            } => {
                json!({"type": "compacted", "before_tokens": before_tokens, "after_tokens": after_tokens, "summary": summary})
            }
            other => return super::stream_json::shared_line(other),
        })
    }

    fn finish(&mut self, outcome: &TurnOutcome) -> i32 {
        self.flush_text();
        let code = if matches!(outcome, TurnOutcome::Completed) {
            0
        } else {
            1
        };
        match self.output {
            Output::StreamJson | Output::JsonResult => {}
            Output::Json => {
                self.json_line(json!({"type": "final", "outcome": outcome, "text": self.answer}))
            }
            Output::Plain => {
                self.new_line();
                match outcome {
                    TurnOutcome::Completed => {}
                    TurnOutcome::Cancelled => eprintln!("cairn: cancelled"),
                    TurnOutcome::TurnLimit { limit } => eprintln!(
                        "cairn: stopped after {limit} model calls in one turn (--max-turns, or max_turns in the config)"
                    ),
                    TurnOutcome::Failed { error } => eprintln!("cairn: {}", escape(error)),
                }
            }
        }
        code
    }
}

/// Sources as numbered lines for a terminal: provider text, escaped and
/// kept to one line each.
fn numbered_sources(sources: &[crate::conversation::Source]) -> String {
    let one_line = |t: &str| escape(t).split_whitespace().collect::<Vec<_>>().join(" ");
    (crate::conversation::Source::numbered(sources, one_line).iter())
        .map(|line| format!("  {line}\n"))
        .collect()
}

/// `cairn run PROMPT`: starts the agent without the interface (continuing
/// a stored session when `resume` says so), prints its events, and returns
/// the exit code.
pub async fn main(
    overrides: &Overrides,
    prompt: crate::cli::run_input::Prompt,
    output: Output,
    resume: crate::cli::resume::Resume,
) -> anyhow::Result<u8> {
    let crate::cli::run_input::Prompt {
        text: prompt,
        notes,
        images,
    } = prompt;
    let s = startup::prepare(overrides).await?;
    if let Some(note) = s.trust_note() {
        eprintln!("{note}");
    }
    let Some(provider) = s.provider.clone() else {
        eprintln!("{}", startup::setup_help());
        return Ok(1);
    };
    let load = crate::cli::resume::prepare(&resume, &s.root)?;
    let running = startup::start_agent(&s, &provider, false)?;
    for problem in &running.hooks.problems {
        eprintln!("cairn: a hook was not loaded: {}", escape(problem));
    }
    for problem in &running.rule_problems {
        eprintln!("cairn: {}", escape(problem));
    }
    if let Some(command) = &load {
        let _ = running.commands.send(command.clone());
    }
    // `/mcp__SERVER__PROMPT args` sends that MCP prompt's text.
    let prompt = match crate::cli::mcp::expand_prompt(&running.mcp, prompt).await {
        Ok(prompt) => prompt,
        Err(why) => {
            eprintln!("cairn: {}", escape(&why));
            running.mcp.shutdown().await;
            return Ok(1);
        }
    };
    let recording = Recording {
        sink: running.sink.clone(),
        error: running.store_error.clone(),
    };
    let session_id = match &load {
        Some(AgentCommand::LoadHistory { session_id, .. }) => {
            session_id.as_ref().map(|id| id.as_str().to_string())
        }
        _ => None,
    };
    let info = RunInfo {
        provider: provider.settings.name.clone(),
        model: provider.model.clone(),
        mode: s.mode.as_str().to_string(),
        sandbox: s.sandbox.label(),
        cwd: s.cwd.display().to_string(),
        session_id,
    };
    let code = run(
        (prompt, images),
        output,
        running.commands,
        running.events,
        recording,
        &info,
        &notes,
    )
    .await;
    // The agent's last act stops its language servers, once no tool can
    // ask them anything; they stop here too if it did not wind down.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), running.task).await;
    running.lsp.shutdown().await;
    // Stdio servers (and whatever they started) end with cairn.
    running.mcp.shutdown().await;
    Ok(code.clamp(0, 255) as u8)
}
