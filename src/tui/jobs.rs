//! The session's background jobs as the interface follows them: started
//! when a `bash` call's pane starts following one, ended by `JobFinished`,
//! counted in the status line, listed by `/jobs`.

use crate::tools::jobs::JobEnd;
use crate::tui::model::{Model, Overlay};
use crate::tui::panels::Panel;
use crate::tui::panels::jobs::{JobRow, JobView, JobsPanel, tail};
use crate::tui::widgets::cell::CellKind;
use crate::tui::widgets::tool_cell::ToolCell;

/// The call `call_id` just left a job running: follow it.
pub fn started(model: &mut Model, call_id: &str) {
    let Some(t) = tool(model, call_id) else {
        return;
    };
    let Some(job) = &t.job else {
        return;
    };
    if model
        .jobs
        .iter()
        .any(|j| j.call_id == call_id && !j.earlier)
    {
        return;
    }
    let row = JobRow {
        call_id: call_id.to_string(),
        job_id: job.id.clone(),
        command: t.command.clone().unwrap_or_else(|| t.summary.clone()),
        started: t.started,
        end: None,
        earlier: false,
    };
    model.jobs.push(row);
}

/// A job's end: the running one of that call first (an earlier
/// session's call may have had the same id), else the newest of that id.
pub fn ended(model: &mut Model, call_id: &str, end: JobEnd) {
    let jobs = &mut model.jobs;
    let at = (jobs
        .iter()
        .rposition(|j| j.call_id == call_id && j.running()))
    .or_else(|| jobs.iter().rposition(|j| j.call_id == call_id));
    if let Some(j) = at.and_then(|i| jobs.get_mut(i)) {
        j.end = Some(end);
    }
}

/// `/new` or a resume: the agent stops the session's jobs with it, so
/// their rows are no longer running (nor stoppable) and are marked as the
/// earlier session's; the end the agent reports later replaces the guess.
pub fn session_changed(model: &mut Model) {
    let now = model.now;
    for j in model.jobs.iter_mut().filter(|j| !j.earlier) {
        j.earlier = true;
        if j.end.is_none() {
            j.end = Some(JobEnd::Killed {
                ran: now.saturating_duration_since(j.started),
            });
        }
    }
}

/// How many jobs still run.
pub fn running(model: &Model) -> usize {
    model.jobs.iter().filter(|j| j.running()).count()
}

/// `/jobs`: the list, newest highlighted.
pub fn open(model: &mut Model) {
    let rows = views(model);
    model.open_panel(Panel::Jobs(Box::new(JobsPanel::new(rows))));
}

/// Brings an open `/jobs` panel up to date (clocks, ends, output).
pub fn refresh_panel(model: &mut Model) {
    if !model.jobs_panel_open() {
        return;
    }
    let rows = views(model);
    for o in &mut model.modals.overlays {
        if let Overlay::Panel(p) = o
            && let Panel::Jobs(panel) = &mut **p
        {
            panel.refresh(rows.clone());
        }
    }
}

fn views(model: &Model) -> Vec<JobView> {
    model
        .jobs
        .iter()
        .map(|j| JobView {
            job_id: j.job_id.clone(),
            command: j.command.clone(),
            state: j.state(model.now),
            running: j.running(),
            tail: tool(model, &j.call_id)
                .and_then(|t| t.job.as_ref())
                .map(|job| tail(&job.output))
                .unwrap_or_default(),
        })
        .collect()
}

fn tool<'a>(model: &'a Model, call_id: &str) -> Option<&'a ToolCell> {
    model
        .transcript
        .cells()
        .iter()
        .rev()
        .find_map(|c| match &c.kind {
            CellKind::Tool(t) if t.call_id == call_id => Some(&**t),
            _ => None,
        })
}

/// The line left on the normal screen when quitting stops jobs.
pub fn quit_notice(model: &Model) -> Option<String> {
    let ids: Vec<&str> = model
        .jobs
        .iter()
        .filter(|j| j.running())
        .map(|j| j.job_id.as_str())
        .collect();
    if ids.is_empty() {
        return None;
    }
    Some(format!(
        "cairn: quitting stopped {} background {} ({}).",
        ids.len(),
        crate::text::plural(ids.len(), "job", "jobs"),
        ids.join(", ")
    ))
}
