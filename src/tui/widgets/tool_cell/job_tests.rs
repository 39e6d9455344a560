//! A background job in the pane of the call that started it: its lines as
//! they come, also after the turn, its clock, its end; a poll's pane.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{LIVE_MAX_BYTES, ToolCell};
use crate::protocol::{AgentEvent, ToolStatus, TurnOutcome};
use crate::tools::ToolDisplay;
use crate::tools::jobs::JobEnd;
use crate::tui::model::Model;
use crate::tui::styles::Styles;
use crate::tui::test_support::*;
use crate::tui::theme::Theme;

const LOOP: &str = "for i in 1 2 3 4; do echo tick$i; sleep 0.5; done";

/// A turn whose `bash` call "1" left `job-1` running, and that ended.
fn job_started(m: &mut Model) {
    agent(
        m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "start it".into(),
        },
    );
    agent(
        m,
        AgentEvent::ToolCallStarted {
            call_id: "1".into(),
            name: "bash".into(),
            input: json!({"command": LOOP, "run_in_background": true}),
            summary: format!("bash {LOOP}"),
        },
    );
    agent(
        m,
        AgentEvent::ToolCallRunning {
            call_id: "1".into(),
        },
    );
    agent(
        m,
        AgentEvent::ToolCallFinished {
            call_id: "1".into(),
            status: ToolStatus::Done,
            output: "Started in the background as job-1. Read its output with job_output.".into(),
            display: Some(ToolDisplay::Job {
                job_id: "job-1".into(),
            }),
        },
    );
    agent(
        m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
}

fn job_output(m: &mut Model, chunk: &str) {
    agent(
        m,
        AgentEvent::JobOutput {
            call_id: "1".into(),
            chunk: chunk.into(),
        },
    );
}

fn job_finished(m: &mut Model, end: JobEnd) {
    agent(
        m,
        AgentEvent::JobFinished {
            call_id: "1".into(),
            end,
        },
    );
}

#[test]
fn a_job_streams_into_its_pane_after_the_turn_and_then_shows_its_exit() {
    let mut m = model();
    job_started(&mut m);
    assert!(m.needs_tick(), "the job's clock ticks with no turn running");
    for i in 1..=8 {
        job_output(&mut m, &format!("tick {i}\n"));
    }
    m.now += Duration::from_secs(3);
    let text = draw_text(&mut m, 100, 24);
    assert!(text.contains("background job-1 · running 3s"), "{text}");
    assert!(text.contains("tick 8") && text.contains("tick 4"), "{text}");
    assert!(!text.contains("tick 3"), "only the last five lines: {text}");
    assert!(text.contains("3 more lines"), "{text}");
    assert!(!text.contains("Started in the background"), "{text}");
    job_finished(
        &mut m,
        JobEnd::Exited {
            code: 0,
            ran: Duration::from_millis(2500),
        },
    );
    // Nothing comes after the end.
    job_output(&mut m, "late\n");
    m.now += Duration::from_secs(10);
    let text = draw_text(&mut m, 100, 24);
    assert!(text.contains("✓ $ for i in"), "{text}");
    assert!(text.contains("background job-1 · exit 0 · 2s"), "{text}");
    assert!(text.contains("tick 8") && !text.contains("late"), "{text}");
    assert!(!m.needs_tick(), "nothing moves once the job ended");
}

#[test]
fn a_failed_or_killed_job_says_so() {
    let mut m = model();
    job_started(&mut m);
    job_finished(
        &mut m,
        JobEnd::Exited {
            code: 2,
            ran: Duration::from_secs(1),
        },
    );
    let text = draw_text(&mut m, 100, 24);
    assert!(text.contains("✗ $ for i in"), "{text}");
    assert!(text.contains("background job-1 · exit 2 · 1s"), "{text}");

    let mut m = model();
    job_started(&mut m);
    job_finished(
        &mut m,
        JobEnd::Killed {
            ran: Duration::from_secs(5),
        },
    );
    let text = draw_text(&mut m, 100, 24);
    assert!(text.contains("⊘ $ for i in"), "{text}");
    assert!(text.contains("background job-1 · killed · 5s"), "{text}");
}

#[test]
fn a_job_pane_keeps_a_bounded_tail_and_shows_it_all_expanded() {
    let now = Instant::now();
    let mut cell = ToolCell::new("1".into(), "bash".into(), "bash x".into(), now);
    cell.finish(
        ToolStatus::Done,
        "Started".into(),
        Some(ToolDisplay::Job {
            job_id: "job-1".into(),
        }),
        now,
    );
    cell.follow_job();
    for i in 0..40_000 {
        cell.push_job_output(&format!("line {i:05} of the job\n"));
    }
    let kept = &cell.job.as_ref().unwrap().output;
    assert!(kept.len() <= LIVE_MAX_BYTES, "{}", kept.len());
    assert!(kept.starts_with("line ") && kept.ends_with("line 39999 of the job\n"));
    let (styles, theme) = (Styles::default(), Theme::default());
    let folded = cell.lines(80, false, &styles, &theme, now);
    assert_eq!(folded.len(), 1 + 1 + 5, "header, more line, five lines");
    let all = cell.lines(80, true, &styles, &theme, now);
    assert_eq!(all.len(), 1 + kept.lines().count());
}

#[test]
fn a_stored_job_call_is_not_shown_as_running() {
    let now = Instant::now();
    let mut cell = ToolCell::new("1".into(), "bash".into(), "bash x".into(), now);
    let display = Some(ToolDisplay::Job {
        job_id: "job-1".into(),
    });
    cell.finish(ToolStatus::Done, "Started".into(), display, now);
    assert!(!cell.is_ticking());
    cell.push_job_output("x\n");
    assert!(cell.job.is_none());
}

#[test]
fn a_poll_shows_its_status_above_the_tail_of_what_it_returned() {
    let mut m = model();
    job_started(&mut m);
    agent(
        &mut m,
        AgentEvent::ToolCallStarted {
            call_id: "p".into(),
            name: "job_output".into(),
            input: json!({"job_id": "job-1"}),
            summary: "job_output job-1".into(),
        },
    );
    agent(
        &mut m,
        AgentEvent::ToolCallRunning {
            call_id: "p".into(),
        },
    );
    let body: String = (1..=8).map(|i| format!("polled {i}\n")).collect();
    agent(
        &mut m,
        AgentEvent::ToolCallFinished {
            call_id: "p".into(),
            status: ToolStatus::Done,
            output: format!("job-1 ({LOOP}): still running\n{body}"),
            display: None,
        },
    );
    let text = draw_text(&mut m, 100, 30);
    assert!(text.contains("job_output job-1"), "{text}");
    assert!(text.contains("job-1 (for i in 1 2 3 4;"), "{text}");
    assert!(
        text.contains("polled 8") && text.contains("polled 4"),
        "{text}"
    );
    assert!(!text.contains("polled 3"), "{text}");
}
