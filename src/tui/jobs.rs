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
    if model.jobs.iter().any(|j| j.call_id == call_id) {
        return;
    }
    let row = JobRow {
        call_id: call_id.to_string(),
        job_id: job.id.clone(),
        command: t.command.clone().unwrap_or_else(|| t.summary.clone()),
        started: t.started,
        end: None,
    };
    model.jobs.push(row);
}

pub fn ended(model: &mut Model, call_id: &str, end: JobEnd) {
    if let Some(j) = model.jobs.iter_mut().find(|j| j.call_id == call_id) {
        j.end = Some(end);
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
