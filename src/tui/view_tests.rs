//! Screens as a person sees them, snapshotted with ratatui's TestBackend.

use std::time::Duration;

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::protocol::PermissionRequest;
use crate::protocol::{AgentEvent, NoticeLevel, ToolStatus, TurnOutcome};
use crate::tools::{Preview, ToolDisplay};
use crate::tui::model::Model;
use crate::tui::test_support::*;
use crate::tui::update::update;
use crate::tui::view::view;

fn draw(m: &mut Model, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view(m, f)).unwrap();
    t
}

fn screen(m: &mut Model, w: u16, h: u16) -> String {
    draw(m, w, h).backend().to_string()
}

const ANSWER: &str = "The fix is small:\n\n```rust\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n```\n\nRun `cargo test` after.\n";

fn tool(m: &mut Model, id: &str, name: &str, summary: &str) {
    agent(
        m,
        AgentEvent::ToolCallStarted {
            call_id: id.into(),
            name: name.into(),
            input: json!({}),
            summary: summary.into(),
        },
    );
    agent(m, AgentEvent::ToolCallRunning { call_id: id.into() });
}

fn finish(m: &mut Model, id: &str, status: ToolStatus, output: &str, display: Option<ToolDisplay>) {
    agent(
        m,
        AgentEvent::ToolCallFinished {
            call_id: id.into(),
            status,
            output: output.into(),
            display,
        },
    );
}

fn edit_request() -> PermissionRequest {
    PermissionRequest {
        formatting: None,
        tool: "edit".into(),
        summary: "edit src/lib.rs".into(),
        reasons: vec!["writes a file".into()],
        preview: Some(Preview::Diff(crate::diff::FileDiff {
            path: "src/lib.rs".into(),
            old: "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n".into(),
            new: "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n".into(),
            added: 1,
            removed: 1,
        })),
        rules: vec!["Edit(src/lib.rs)".into(), "Edit(src/**)".into()],
        sandbox: None,
    }
}

#[test]
fn empty_session() {
    let mut m = model();
    insta::assert_snapshot!(screen(&mut m, 80, 12));
}

#[test]
fn first_run_help_fills_the_empty_transcript() {
    let mut m = model();
    m.first_run_help =
        Some("No provider is configured.\nSet ANTHROPIC_API_KEY or run `cairn config`.".into());
    let s = screen(&mut m, 60, 10);
    assert!(s.contains("No provider is configured."), "{s}");
}

#[test]
fn streamed_markdown_answer_with_code() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "fix add".into(),
        },
    );
    agent(&mut m, AgentEvent::ResponseStarted);
    let (a, b) = ANSWER.split_at(40);
    agent(&mut m, AgentEvent::TextDelta(a.into()));
    m.now += Duration::from_secs(4);
    insta::assert_snapshot!("streaming", screen(&mut m, 60, 16));
    agent(&mut m, AgentEvent::TextDelta(b.into()));
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    insta::assert_snapshot!("finished", screen(&mut m, 60, 16));
}

#[test]
fn tool_cells_in_each_status() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "do things".into(),
        },
    );
    let diff = ToolDisplay::Diff(crate::diff::FileDiff {
        path: "src/lib.rs".into(),
        old: "a\nb\nc\n".into(),
        new: "a\nB\nc\nd\n".into(),
        added: 2,
        removed: 1,
    });
    tool(&mut m, "1", "edit", "src/lib.rs");
    tool(&mut m, "2", "bash", "cargo test");
    tool(&mut m, "3", "grep", "\"fn main\" src/");
    tool(&mut m, "4", "bash", "rm -rf target");
    tool(&mut m, "5", "bash", "curl x | sh");
    tool(&mut m, "6", "bash", "sleep 100");
    tool(&mut m, "7", "bash", "cargo build");
    m.now += Duration::from_millis(2300);
    finish(&mut m, "1", ToolStatus::Done, "edited", Some(diff));
    let out: String = (1..=9).map(|i| format!("test t{i} ... ok\n")).collect();
    finish(&mut m, "2", ToolStatus::Done, &out, None);
    finish(&mut m, "3", ToolStatus::Failed, "regex parse error", None);
    finish(&mut m, "4", ToolStatus::Denied, "denied by the user", None);
    finish(
        &mut m,
        "5",
        ToolStatus::Blocked,
        "blocked: pipes a download into a shell",
        None,
    );
    finish(&mut m, "6", ToolStatus::Cancelled, "", None);
    agent(
        &mut m,
        AgentEvent::ToolCallProgress {
            call_id: "7".into(),
            message: "Compiling cairn".into(),
        },
    );
    insta::assert_snapshot!(screen(&mut m, 72, 40));
}

#[test]
fn permission_dialog_with_an_edit_diff() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::PermissionRequested {
            id: 1,
            request: edit_request(),
        },
    );
    agent(
        &mut m,
        AgentEvent::PermissionRequested {
            id: 2,
            request: edit_request(),
        },
    );
    insta::assert_snapshot!("unified", screen(&mut m, 100, 24));
    update(&mut m, key(KeyCode::Char('t')));
    update(&mut m, key(KeyCode::Right));
    insta::assert_snapshot!("side_by_side", screen(&mut m, 100, 24));
}

#[test]
fn permission_dialog_with_a_bash_command() {
    let mut m = model();
    let request = PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: "cargo test && echo done > log.txt".into(),
        reasons: vec!["`echo` writes log.txt".into()],
        preview: Some(Preview::Command {
            command: "cargo test && echo done > log.txt".into(),
            cwd: "/work/project".into(),
            commands: vec![
                vec!["cargo".into(), "test".into()],
                vec!["echo".into(), "done".into()],
            ],
            redirects: vec!["> log.txt".into()],
        }),
        rules: vec!["Bash(cargo test:*)".into()],
        sandbox: None,
    };
    agent(&mut m, AgentEvent::PermissionRequested { id: 1, request });
    update(&mut m, key(KeyCode::Char('d')));
    type_text(&mut m, "not now");
    insta::assert_snapshot!(screen(&mut m, 80, 22));
}

#[test]
fn bash_dialog_shows_what_runs_above_blank_lines() {
    let mut m = model();
    let command = format!("echo hello{}rm -rf build", "\n".repeat(60));
    let request = PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: "echo hello".into(),
        reasons: vec!["`rm` is not on the read-only list".into()],
        preview: Some(Preview::Command {
            command,
            cwd: "/work/project".into(),
            commands: vec![
                vec!["echo".into(), "hello".into()],
                vec!["rm".into(), "-rf".into(), "build".into()],
            ],
            redirects: vec![],
        }),
        rules: vec![],
        sandbox: None,
    };
    agent(&mut m, AgentEvent::PermissionRequested { id: 1, request });
    let shown = screen(&mut m, 80, 22);
    assert!(shown.contains("▸ rm -rf build"), "{shown}");
    assert!(shown.contains("⋯ 59 blank lines ⋯"), "{shown}");
}

#[test]
fn help_overlay() {
    let mut m = model();
    update(&mut m, key(KeyCode::F(1)));
    insta::assert_snapshot!(screen(&mut m, 80, 40));
}

#[test]
fn small_terminal_degrades() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "a fairly long prompt that wraps".into(),
        },
    );
    agent(&mut m, AgentEvent::TextDelta(ANSWER.into()));
    agent(
        &mut m,
        AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: "context is 80% full".into(),
        },
    );
    insta::assert_snapshot!("small_transcript", screen(&mut m, 40, 12));
    agent(
        &mut m,
        AgentEvent::PermissionRequested {
            id: 1,
            request: edit_request(),
        },
    );
    insta::assert_snapshot!("small_dialog", screen(&mut m, 40, 12));
    update(&mut m, key(KeyCode::F(1)));
    screen(&mut m, 40, 12);
    for (w, h) in [(1, 1), (10, 3), (20, 5), (3, 40)] {
        screen(&mut m, w, h);
    }
}

#[test]
fn scrolled_up_shows_new_output_indicator_and_end_follows() {
    let mut m = model();
    for i in 0..30 {
        agent(
            &mut m,
            AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: format!("line {i}"),
            },
        );
    }
    screen(&mut m, 60, 12);
    update(&mut m, key(KeyCode::PageUp));
    let s = screen(&mut m, 60, 12);
    assert!(!s.contains("line 29"), "{s}");
    agent(
        &mut m,
        AgentEvent::Notice {
            level: NoticeLevel::Info,
            text: "fresh".into(),
        },
    );
    let s = screen(&mut m, 60, 12);
    assert!(s.contains("new output (End)"), "{s}");
    // The marker has its row to itself: no line of text under it.
    let marker = s.lines().find(|l| l.contains("new output")).unwrap();
    assert!(!marker.contains("line"), "{s}");
    update(&mut m, key(KeyCode::End));
    let s = screen(&mut m, 60, 12);
    assert!(s.contains("fresh") && !s.contains("new output"), "{s}");
    update(&mut m, key(KeyCode::Home));
    let s = screen(&mut m, 60, 12);
    assert!(s.contains("line 0"), "{s}");
}

#[test]
fn diff_lines_keep_their_colours() {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::PermissionRequested {
            id: 1,
            request: edit_request(),
        },
    );
    let t = draw(&mut m, 100, 24);
    let buf = t.backend().buffer();
    let added_row = (0..24).find(|y| {
        let row: String = (0..100)
            .map(|x| buf[(x, *y)].symbol().to_string())
            .collect();
        row.contains("a + b")
    });
    let y = added_row.expect("the added line is on screen");
    let x = (0..100).find(|x| buf[(*x, y)].symbol() == "+").unwrap_or(0);
    let cell = &buf[(x + 2, y)];
    assert_ne!(
        cell.bg,
        m.theme.base().bg.unwrap_or(ratatui::style::Color::Reset),
        "added lines have their own background"
    );
}

#[test]
fn only_visible_cells_are_laid_out() {
    let mut m = model();
    for i in 0..5_000 {
        agent(
            &mut m,
            AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: format!("notice {i}"),
            },
        );
    }
    let s = screen(&mut m, 60, 12);
    assert!(s.contains("notice 4999"), "{s}");
    let laid_out = m
        .transcript
        .cells()
        .iter()
        .filter(|c| !c.cached().is_empty())
        .count();
    assert!(
        laid_out < 20,
        "{laid_out} cells were laid out for a 12-row screen"
    );
    update(&mut m, key(KeyCode::Home));
    let s = screen(&mut m, 60, 12);
    assert!(s.contains("notice 0"), "{s}");
    let laid_out = m
        .transcript
        .cells()
        .iter()
        .filter(|c| !c.cached().is_empty())
        .count();
    assert!(
        laid_out < 40,
        "{laid_out} cells were laid out after jumping to the top"
    );
}

#[test]
fn resize_reflows_and_keeps_the_scroll_position() {
    let mut m = model();
    let long = "word ".repeat(30);
    for i in 0..40 {
        agent(
            &mut m,
            AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: format!("{i}: {long}"),
            },
        );
    }
    screen(&mut m, 100, 20);
    update(&mut m, key(KeyCode::Home));
    let wide = screen(&mut m, 100, 20);
    assert!(wide.contains("0: word"), "{wide}");
    update(
        &mut m,
        crate::tui::msg::Msg::Resize {
            width: 40,
            height: 20,
        },
    );
    let narrow = screen(&mut m, 40, 20);
    assert!(
        narrow.contains("0: word"),
        "the top stays at the same cell: {narrow}"
    );
    let rows_of_first = narrow
        .lines()
        .take_while(|l| !l.contains("1: word"))
        .count();
    assert!(
        rows_of_first > 3,
        "the cell re-wrapped to the narrow width: {narrow}"
    );
}

#[test]
fn spinner_ticks_do_not_count_as_new_output() {
    let mut m = model();
    for i in 0..30 {
        agent(
            &mut m,
            AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: format!("n{i}"),
            },
        );
    }
    tool(&mut m, "t", "bash", "sleep 5");
    screen(&mut m, 60, 12);
    update(&mut m, key(KeyCode::PageUp));
    screen(&mut m, 60, 12);
    let later = m.now + Duration::from_millis(300);
    update(&mut m, crate::tui::msg::Msg::Tick(later));
    let s = screen(&mut m, 60, 12);
    assert!(!s.contains("new output"), "{s}");
}
