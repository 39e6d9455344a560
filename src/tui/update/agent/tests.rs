//! Retry notices, final errors and compaction markers through `update`.

use crate::protocol::{AgentEvent, TurnOutcome};
use crate::tui::test_support::*;
use crate::tui::widgets::cell::CellKind;

fn retry(attempt: u32, error: &str) -> AgentEvent {
    AgentEvent::Retrying {
        attempt,
        max_attempts: 5,
        delay_ms: 3000,
        error: error.into(),
    }
}

fn texts(m: &crate::tui::model::Model) -> Vec<String> {
    m.transcript.cells().iter().map(|c| c.copy_text()).collect()
}

#[test]
fn a_retry_is_one_line_that_updates_in_place_and_goes_on_success() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "go".into(),
        },
    );
    agent(&mut m, AgentEvent::TextDelta("Hello".into()));
    agent(&mut m, retry(2, "server error 529"));
    agent(&mut m, retry(3, "server error 529"));
    let retries: Vec<_> = texts(&m)
        .into_iter()
        .filter(|t| t.starts_with("retrying"))
        .collect();
    assert_eq!(retries, vec!["retrying 3/5 in 3s: server error 529"]);
    // The retry got through: the line goes and the answer continues in
    // the same cell.
    agent(&mut m, AgentEvent::TextDelta(", world".into()));
    assert_eq!(texts(&m), vec!["go", "Hello, world"]);
}

#[test]
fn a_final_error_keeps_one_line() {
    let mut m = model();
    agent(&mut m, retry(2, "server error 500"));
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Failed {
                error: "the provider had a server error (500): boom\n<html>…</html>".into(),
            },
        },
    );
    assert_eq!(
        texts(&m),
        vec!["the provider had a server error (500): boom"]
    );
}

#[test]
fn compaction_has_its_own_marker_with_the_summary_and_updates_the_figure() {
    let mut m = model();
    m.usage.context_tokens = 150_000;
    agent(
        &mut m,
        AgentEvent::Compacted {
            before_tokens: 150_000,
            after_tokens: 12_000,
            summary: Some("We fixed the parser.".into()),
            from_turn: 3,
        },
    );
    let cell = &m.transcript.cells()[0];
    assert!(matches!(cell.kind, CellKind::Compaction { .. }));
    assert_eq!(cell.copy_text(), "We fixed the parser.");
    assert_eq!(m.usage.context_tokens, 12_000);
    let screen = |m: &mut crate::tui::model::Model| {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 12)).unwrap();
        t.draw(|f| crate::tui::view::view(m, f)).unwrap();
        t.backend().to_string()
    };
    let folded = screen(&mut m);
    assert!(folded.contains("≡ context compacted"), "{folded}");
    assert!(folded.contains("Enter shows the summary"), "{folded}");
    assert!(!folded.contains("We fixed the parser."), "{folded}");
    assert!(
        folded.contains("context 12.0k"),
        "labelled figure:\n{folded}"
    );
    // Tab focuses the transcript, Enter opens the marker.
    crate::tui::update::update(&mut m, key(crossterm::event::KeyCode::Tab));
    crate::tui::update::update(&mut m, key(crossterm::event::KeyCode::Enter));
    let open = screen(&mut m);
    assert!(open.contains("We fixed the parser."), "{open}");
}

#[test]
fn an_unfocused_terminal_is_notified_when_a_turn_ends_or_a_dialog_waits() {
    use crate::tui::cmd::Cmd;
    use crate::tui::msg::Msg;
    let finished = || AgentEvent::TurnFinished {
        turn: 1,
        outcome: TurnOutcome::Completed,
    };
    let mut m = model();
    assert!(agent(&mut m, finished()).is_empty(), "focused: nothing");
    crate::tui::update::update(&mut m, Msg::Focus(false));
    assert_eq!(
        agent(&mut m, finished()),
        vec![Cmd::Notify("cairn: the answer is ready".into())]
    );
    m.notify = crate::config::ui::Notify::Off;
    assert!(agent(&mut m, finished()).is_empty(), "notify = off");
    m.notify = crate::config::ui::Notify::Bell;
    crate::tui::update::update(&mut m, Msg::Focus(true));
    assert!(agent(&mut m, finished()).is_empty(), "focus is back");
}
