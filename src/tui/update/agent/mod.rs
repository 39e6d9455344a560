//! How each `AgentEvent` changes the model.

use std::time::Duration;

use crate::protocol::{AgentEvent, NoticeLevel, ToolStatus, TurnOutcome};
use crate::tui::cmd::Cmd;
use crate::tui::model::{Activity, Model, UsageInfo};
use crate::tui::panels::permission::PermissionDialog;
use crate::tui::widgets::cell::{AssistantText, CellKind, UserText};
use crate::tui::widgets::sources::SourcesCell;
use crate::tui::widgets::tool_cell::ToolCell;

pub fn agent_event(model: &mut Model, ev: AgentEvent) -> Vec<Cmd> {
    if ends_retry(&ev) {
        clear_retry(model);
    }
    let mut cmds = notification(model, &ev);
    if subagents::record(model, &ev) {
        return cmds;
    }
    match ev {
        AgentEvent::TurnStarted { prompt, .. } => turn_started(model, prompt),
        AgentEvent::ResponseStarted => response_started(model),
        AgentEvent::TextDelta(delta) => text_delta(model, delta),
        AgentEvent::ReasoningDelta(delta) => reasoning_delta(model, delta),
        AgentEvent::ResponseReset => response_reset(model),
        ev @ (AgentEvent::ToolCallStarted { .. }
        | AgentEvent::ToolCallProgress { .. }
        | AgentEvent::ToolCallWaiting { .. }
        | AgentEvent::ToolCallRunning { .. }
        | AgentEvent::ToolCallOutput { .. }
        | AgentEvent::ToolCallFinished { .. }
        | AgentEvent::JobOutput { .. }
        | AgentEvent::JobFinished { .. }
        | AgentEvent::PermissionRequested { .. }
        | AgentEvent::PermissionResolved { .. }
        | AgentEvent::InputRequested { .. }
        | AgentEvent::InputResolved { .. }) => tool_event(model, ev),
        AgentEvent::Usage {
            context_tokens,
            context_window,
            cost,
            ..
        } => {
            model.usage = UsageInfo {
                context_tokens,
                context_window,
                cost,
            };
        }
        AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay_ms,
            error,
        } => retrying(model, attempt, max_attempts, delay_ms, error),
        AgentEvent::Notice { level, text } => model.notice(level, text),
        AgentEvent::ServersChanged(health) => model.servers = Some(health),
        AgentEvent::LanguageServers(list) => model.language_servers = list,
        AgentEvent::LanguageServerReport { statuses, known } => {
            let text = crate::protocol::lsp_report(&statuses, &known);
            return super::session::text(model, "Language servers".into(), text);
        }
        AgentEvent::EditCheck {
            id,
            server,
            verdict,
            rejected,
        } => {
            if let Some(d) = model.modals.permissions.iter_mut().find(|d| d.id == id) {
                d.set_check(server, verdict, rejected);
            }
        }
        AgentEvent::Todos(todos) => model.todos = todos,
        AgentEvent::ModeChanged(mode) => model.mode = mode,
        AgentEvent::ModelChanged {
            provider,
            model: name,
        } => {
            // Said in the transcript too: the status line alone is easy to
            // miss, and the line shows when the switch happened.
            if model.model != name || model.provider != provider {
                model.notice(NoticeLevel::Info, format!("Model: {name} ({provider})."));
            }
            model.provider = provider;
            model.model = name;
        }
        AgentEvent::EffortChanged(effort) => model.effort = effort,
        AgentEvent::MessageAdded(_) | AgentEvent::PartialMessage(_) => {}
        AgentEvent::WebSearch(search) => {
            finish_streaming(model);
            let cell = SourcesCell::search(&search);
            model.transcript.push(CellKind::Sources(Box::new(cell)));
        }
        AgentEvent::Citations(sources) => {
            finish_streaming(model);
            let cell = SourcesCell::citations(&sources);
            model.transcript.push(CellKind::Sources(Box::new(cell)));
        }
        AgentEvent::Attached {
            mention,
            summary,
            text,
        } => {
            let a = crate::tui::widgets::attachment::Attachment {
                sigil: "@",
                mention,
                summary,
                text,
            };
            model.transcript.push(CellKind::Attachment(Box::new(a)));
        }
        AgentEvent::Hook {
            summary,
            command,
            output,
        } => {
            let a = crate::tui::widgets::attachment::Attachment {
                sigil: "",
                mention: crate::term_safe::escape(&summary),
                summary: crate::term_safe::escape(&crate::text::truncate_chars(&command, 60)),
                text: crate::term_safe::escape(&output),
            };
            model.transcript.push(CellKind::Attachment(Box::new(a)));
        }
        AgentEvent::TurnFinished { outcome, .. } => turn_finished(model, outcome),
        AgentEvent::PlanProposed { id, plan } => {
            let dialog = crate::tui::panels::plan::PlanDialog::new(id, plan);
            model.open_panel(crate::tui::panels::Panel::Plan(Box::new(dialog)));
            model.activity = Activity::WaitingForPermission;
        }
        other => cmds.extend(super::session::agent_event(model, other)),
    }
    cmds
}

/// A turn finished or a dialog started waiting while the terminal is not
/// focused: get the person's attention.
fn notification(model: &Model, ev: &AgentEvent) -> Vec<Cmd> {
    if model.focused || model.notify == crate::config::ui::Notify::Off {
        return Vec::new();
    }
    let text = match ev {
        AgentEvent::TurnFinished { outcome, .. } => match outcome {
            TurnOutcome::Completed => "cairn: the answer is ready",
            TurnOutcome::Cancelled => return Vec::new(),
            _ => "cairn: the turn stopped",
        },
        AgentEvent::PermissionRequested { .. } => "cairn: waiting for your approval",
        AgentEvent::PlanProposed { .. } => "cairn: a plan waits for your approval",
        AgentEvent::InputRequested { .. } => "cairn: a server asks for your input",
        _ => return Vec::new(),
    };
    vec![Cmd::Notify(text.into())]
}

/// A tool call's progress through its pane (announced, waiting for the
/// person, running with output as it comes, finished) and the dialogs it
/// opens.
fn tool_event(model: &mut Model, ev: AgentEvent) {
    let now = model.now;
    match ev {
        AgentEvent::ToolCallStarted {
            call_id,
            name,
            summary,
            input,
        } => tool_started(model, call_id, name, summary, &input),
        AgentEvent::ToolCallProgress { call_id, message } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.progress = Some(message);
            }
        }
        AgentEvent::ToolCallWaiting { call_id } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.wait_for_approval();
            }
        }
        AgentEvent::ToolCallRunning { call_id } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.start_running(now);
            }
            // The status line's clock is the run's too.
            settle_activity(model);
        }
        AgentEvent::ToolCallOutput { call_id, chunk } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.push_output(&chunk);
            }
        }
        AgentEvent::ToolCallFinished {
            call_id,
            status,
            output,
            display,
        } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.finish(status, output, display, now);
                t.follow_job();
            }
            crate::tui::jobs::started(model, &call_id);
            settle_activity(model);
        }
        AgentEvent::JobOutput { call_id, chunk } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.push_job_output(&chunk);
            }
        }
        AgentEvent::JobFinished { call_id, end } => {
            if let Some(t) = tool_mut(model, &call_id) {
                t.end_job(end);
            }
            crate::tui::jobs::ended(model, &call_id, end);
        }
        AgentEvent::PermissionRequested { id, request } => {
            let mut dialog = PermissionDialog::new(id, request);
            dialog.typed_over = super::type_ahead::typing_since(model);
            dialog.opened = super::type_ahead::fresh_since(model);
            model.modals.permissions.push_back(dialog);
            model.activity = Activity::WaitingForPermission;
        }
        AgentEvent::PermissionResolved { id } => {
            model.modals.permissions.retain(|d| d.id != id);
            model.modals.overlays.retain(|o| {
                !matches!(o, crate::tui::model::Overlay::Panel(p)
                    if matches!(&**p, crate::tui::panels::Panel::Plan(d) if d.id == id))
            });
            settle_activity(model);
        }
        AgentEvent::InputRequested { id, request } => model
            .modals
            .forms
            .push_back(crate::tui::panels::input_form::InputForm::new(id, request)),
        AgentEvent::InputResolved { id } => model.modals.forms.retain(|f| f.id != id),
        _ => {}
    }
}

/// Whether `ev` shows the request got through (or the turn ended): the
/// retry line goes.
fn ends_retry(ev: &AgentEvent) -> bool {
    matches!(
        ev,
        AgentEvent::TextDelta(_)
            | AgentEvent::ReasoningDelta(_)
            | AgentEvent::ResponseReset
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::MessageAdded(_)
            | AgentEvent::TurnFinished { .. }
    )
}

/// The retry line of this turn, if one is showing.
fn retry_cell(model: &Model) -> Option<usize> {
    let n = model.transcript.len();
    (n.saturating_sub(8)..n)
        .rev()
        .find(|&i| matches!(model.transcript.cells()[i].kind, CellKind::Retry(_)))
}

fn clear_retry(model: &mut Model) {
    if let Some(i) = retry_cell(model) {
        model.transcript.remove(i);
    }
}

fn turn_started(model: &mut Model, prompt: String) {
    let now = model.now;
    finish_streaming(model);
    match model.queued.iter().position(|q| *q == prompt) {
        Some(i) => {
            model.queued.remove(i);
        }
        None => {
            model.queued.pop_front();
        }
    }
    model.turn_running = true;
    model.response_start = None;
    // A prompt with a folded paste shows folded, as the box showed it.
    let folded = match model
        .folded_prompts
        .iter()
        .position(|(sent, _)| *sent == prompt)
    {
        Some(i) => Some(model.folded_prompts.remove(i).1),
        None => None,
    };
    model.transcript.push(CellKind::User(UserText {
        text: prompt,
        folded,
    }));
    model.activity = Activity::Thinking { since: now };
}

fn tool_started(
    model: &mut Model,
    call_id: String,
    name: String,
    summary: String,
    input: &serde_json::Value,
) {
    let now = model.now;
    finish_streaming(model);
    model.activity = Activity::RunningTool {
        name: name.clone(),
        since: now,
    };
    let cell = ToolCell::announced(call_id, name, summary, now).with_input(input);
    model.transcript.push(CellKind::Tool(Box::new(cell)));
}

fn retrying(model: &mut Model, attempt: u32, max_attempts: u32, delay_ms: u64, error: String) {
    let now = model.now;
    let text = format!(
        "retrying {attempt}/{max_attempts} in {}: {error}",
        seconds(delay_ms)
    );
    match retry_cell(model) {
        Some(i) => {
            if let Some(c) = model.transcript.get_mut(i) {
                c.kind = CellKind::Retry(text);
            }
        }
        None => {
            model.transcript.push(CellKind::Retry(text));
        }
    }
    model.activity = Activity::Retrying {
        until: now + Duration::from_millis(delay_ms),
        attempt,
        max: max_attempts,
    };
}

/// `3s`, `1.5s`, `0.2s`.
fn seconds(ms: u64) -> String {
    if ms >= 10_000 || ms.is_multiple_of(1000) {
        format!("{}s", (ms + 500) / 1000)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

fn response_started(model: &mut Model) {
    finish_streaming(model);
    model.response_start = Some(model.transcript.len());
    if !matches!(model.activity, Activity::Thinking { .. }) {
        model.activity = Activity::Thinking { since: model.now };
    }
}

fn text_delta(model: &mut Model, delta: String) {
    let now = model.now;
    let streaming_answer = model
        .transcript
        .cells()
        .last()
        .is_some_and(|c| matches!(&c.kind, CellKind::Assistant(a) if a.streaming));
    if streaming_answer {
        if let Some(c) = model.transcript.last_mut()
            && let CellKind::Assistant(a) = &mut c.kind
        {
            a.text.push_str(&delta);
        }
    } else {
        finish_streaming(model);
        model
            .transcript
            .push(CellKind::Assistant(AssistantText::streaming(delta)));
    }
    if !matches!(model.activity, Activity::Responding { .. }) {
        model.activity = Activity::Responding { since: now };
    }
}

fn reasoning_delta(model: &mut Model, delta: String) {
    let streaming = model.transcript.cells().last().is_some_and(|c| {
        matches!(
            &c.kind,
            CellKind::Reasoning {
                streaming: true,
                ..
            }
        )
    });
    if streaming {
        if let Some(c) = model.transcript.last_mut()
            && let CellKind::Reasoning { text, .. } = &mut c.kind
        {
            text.push_str(&delta);
        }
    } else {
        finish_streaming(model);
        model.transcript.push(CellKind::Reasoning {
            text: delta,
            streaming: true,
        });
    }
}

/// The stream restarted: the partial response goes.
fn response_reset(model: &mut Model) {
    let now = model.now;
    if let Some(start) = model.response_start {
        for i in (start..model.transcript.len()).rev() {
            let partial = matches!(
                model.transcript.cells()[i].kind,
                CellKind::Assistant(_) | CellKind::Reasoning { .. }
            );
            if partial {
                model.transcript.remove(i);
            }
        }
    }
    model.activity = Activity::Thinking { since: now };
}

fn turn_finished(model: &mut Model, outcome: TurnOutcome) {
    finish_streaming(model);
    model.turn_running = false;
    model.activity = Activity::Idle;
    model.response_start = None;
    match outcome {
        TurnOutcome::Completed => {}
        TurnOutcome::Cancelled => {
            cancel_running_tools(model);
            model.transcript.push(CellKind::Marker("cancelled".into()));
        }
        TurnOutcome::TurnLimit { limit } => model.notice(
            NoticeLevel::Warning,
            format!("stopped after {limit} steps (the turn limit); send a prompt to continue"),
        ),
        // One line of cause; the log keeps the rest.
        TurnOutcome::Failed { error } => {
            let line = error.lines().next().unwrap_or_default().trim().to_string();
            model.notice(NoticeLevel::Error, line)
        }
    }
}

/// Recomputes the status activity after a tool or a dialog finished.
pub fn settle_activity(model: &mut Model) {
    if !model.modals.permissions.is_empty() {
        model.activity = Activity::WaitingForPermission;
        return;
    }
    if !model.turn_running {
        model.activity = Activity::Idle;
        return;
    }
    let running = model
        .transcript
        .cells()
        .iter()
        .rev()
        .take(64)
        .find_map(|c| match &c.kind {
            CellKind::Tool(t) if t.is_running() => Some((t.name.clone(), t.started)),
            _ => None,
        });
    model.activity = match running {
        Some((name, since)) => Activity::RunningTool { name, since },
        None => Activity::Thinking { since: model.now },
    };
}

pub(super) fn tool_mut<'a>(model: &'a mut Model, call_id: &str) -> Option<&'a mut ToolCell> {
    let i = model
        .transcript
        .cells()
        .iter()
        .rposition(|c| matches!(&c.kind, CellKind::Tool(t) if t.call_id == call_id))?;
    match &mut model.transcript.get_mut(i)?.kind {
        CellKind::Tool(t) => Some(t),
        _ => None,
    }
}

/// Streaming ended for whatever streamed: render it as final markdown.
fn finish_streaming(model: &mut Model) {
    let n = model.transcript.len();
    for i in (n.saturating_sub(3)..n).rev() {
        if model.transcript.cells()[i].is_streaming()
            && let Some(c) = model.transcript.get_mut(i)
        {
            match &mut c.kind {
                CellKind::Assistant(a) => a.streaming = false,
                CellKind::Reasoning { streaming, .. } => *streaming = false,
                _ => {}
            }
        }
    }
}

fn cancel_running_tools(model: &mut Model) {
    let now = model.now;
    let n = model.transcript.len();
    for i in n.saturating_sub(64)..n {
        let running =
            matches!(&model.transcript.cells()[i].kind, CellKind::Tool(t) if t.is_running());
        if running
            && let Some(c) = model.transcript.get_mut(i)
            && let CellKind::Tool(t) = &mut c.kind
        {
            t.finish(ToolStatus::Cancelled, String::new(), None, now);
        }
    }
}

pub mod subagents;

#[cfg(test)]
mod tests;
