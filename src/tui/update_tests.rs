//! The main flows through `update`, without a terminal.

use std::time::Duration;

use crossterm::event::KeyCode;
use serde_json::json;

use crate::permission::Mode;
use crate::protocol::{AgentCommand, AgentEvent, ToolStatus, TurnOutcome};
use crate::protocol::{Decision, PermissionRequest};
use crate::tools::Preview;
use crate::tui::cmd::Cmd;
use crate::tui::model::{Activity, Focus, Overlay};
use crate::tui::msg::Msg;
use crate::tui::test_support::*;
use crate::tui::update::update;
use crate::tui::widgets::cell::CellKind;
use crate::tui::widgets::tool_cell::CallState;

fn submit(text: &str) -> Cmd {
    Cmd::Send(AgentCommand::Submit {
        text: text.into(),
        images: Vec::new(),
    })
}

fn turn(m: &mut crate::tui::model::Model, prompt: &str) {
    agent(
        m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: prompt.into(),
        },
    );
}

fn request(rules: &[&str]) -> PermissionRequest {
    PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: "cargo test".into(),
        reasons: vec!["`cargo` may change files".into()],
        preview: Some(Preview::Command {
            command: "cargo test".into(),
            cwd: "/work/project".into(),
            commands: vec![vec!["cargo".into(), "test".into()]],
            redirects: vec![],
        }),
        rules: rules.iter().map(|r| r.to_string()).collect(),
        sandbox: None,
    }
}

fn ask(m: &mut crate::tui::model::Model, id: u64, rules: &[&str]) {
    agent(
        m,
        AgentEvent::PermissionRequested {
            id,
            request: request(rules),
        },
    );
}

fn reply(cmds: &[Cmd]) -> Option<(u64, Decision)> {
    cmds.iter().find_map(|c| match c {
        Cmd::Send(AgentCommand::PermissionReply { id, decision }) => Some((*id, decision.clone())),
        _ => None,
    })
}

#[test]
fn enter_submits_the_prompt_and_records_history() {
    let mut m = model();
    type_text(&mut m, "fix the bug");
    let cmds = update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        cmds,
        vec![
            submit("fix the bug"),
            Cmd::AppendHistory("fix the bug".into())
        ]
    );
    assert!(m.input.is_empty());
    assert!(
        update(&mut m, key(KeyCode::Enter)).is_empty(),
        "an empty prompt is not sent"
    );
}

#[test]
fn shift_enter_and_ctrl_j_insert_newlines() {
    let mut m = model();
    type_text(&mut m, "a");
    update(&mut m, shift(KeyCode::Enter));
    type_text(&mut m, "b");
    update(&mut m, ctrl('j'));
    type_text(&mut m, "c");
    assert_eq!(m.input.text(), "a\nb\nc");
}

#[test]
fn streaming_text_grows_one_cell_and_ends_with_the_turn() {
    let mut m = model();
    turn(&mut m, "hello");
    agent(&mut m, AgentEvent::ResponseStarted);
    agent(&mut m, AgentEvent::ReasoningDelta("let me think".into()));
    agent(&mut m, AgentEvent::TextDelta("Hel".into()));
    agent(&mut m, AgentEvent::TextDelta("lo **there**".into()));
    let cells = m.transcript.cells();
    assert_eq!(cells.len(), 3);
    assert!(matches!(&cells[0].kind, CellKind::User(p) if p.text == "hello"));
    assert!(matches!(
        &cells[1].kind,
        CellKind::Reasoning {
            streaming: false,
            ..
        }
    ));
    match &cells[2].kind {
        CellKind::Assistant(a) => {
            assert_eq!(a.text, "Hello **there**");
            assert!(a.streaming);
        }
        other => panic!("expected an answer, got {other:?}"),
    }
    assert!(matches!(m.activity, Activity::Responding { .. }));
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    assert!(!m.transcript.cells()[2].is_streaming());
    assert_eq!(m.activity, Activity::Idle);
    assert!(!m.turn_running);
}

#[test]
fn response_reset_drops_the_partial_answer() {
    let mut m = model();
    turn(&mut m, "q");
    agent(&mut m, AgentEvent::ResponseStarted);
    agent(&mut m, AgentEvent::TextDelta("partial".into()));
    agent(&mut m, AgentEvent::ResponseReset);
    agent(&mut m, AgentEvent::ResponseStarted);
    agent(&mut m, AgentEvent::TextDelta("whole".into()));
    let texts: Vec<String> = m.transcript.cells().iter().map(|c| c.copy_text()).collect();
    assert_eq!(texts, vec!["q".to_string(), "whole".to_string()]);
}

#[test]
fn tool_calls_go_from_running_to_finished() {
    let mut m = model();
    turn(&mut m, "run tests");
    agent(
        &mut m,
        AgentEvent::ToolCallStarted {
            call_id: "c1".into(),
            name: "bash".into(),
            input: json!({"command": "cargo test"}),
            summary: "cargo test".into(),
        },
    );
    assert!(matches!(&m.activity, Activity::RunningTool { name, .. } if name == "bash"));
    // The clock starts when the call runs, not when it was announced.
    m.now += Duration::from_secs(5);
    agent(
        &mut m,
        AgentEvent::ToolCallRunning {
            call_id: "c1".into(),
        },
    );
    agent(
        &mut m,
        AgentEvent::ToolCallProgress {
            call_id: "c1".into(),
            message: "compiling".into(),
        },
    );
    m.now += Duration::from_secs(3);
    agent(
        &mut m,
        AgentEvent::ToolCallFinished {
            call_id: "c1".into(),
            status: ToolStatus::Failed,
            output: "1 failed".into(),
            display: None,
        },
    );
    let CellKind::Tool(t) = &m.transcript.cells()[1].kind else {
        panic!("no tool cell")
    };
    assert_eq!(t.state, CallState::Finished(ToolStatus::Failed));
    assert_eq!(t.elapsed, Some(Duration::from_secs(3)));
    assert_eq!(t.output, "1 failed");
    assert!(t.progress.is_none());
    assert!(matches!(m.activity, Activity::Thinking { .. }));
}

#[test]
fn dialog_allow_once_and_always_with_the_chosen_rule() {
    let mut m = model();
    ask(&mut m, 7, &["Bash(cargo test:*)", "Bash(cargo:*)"]);
    assert_eq!(m.activity, Activity::WaitingForPermission);
    type_text(&mut m, "x");
    assert!(m.input.is_empty(), "keys go to the dialog, not the prompt");
    let cmds = update(&mut m, key(KeyCode::Char('a')));
    assert_eq!(reply(&cmds), Some((7, Decision::AllowOnce)));
    assert!(m.modals.permissions.is_empty());

    // A file's rules are alternatives (the file, its directory).
    let mut alternatives = request(&["edit(src/lib.rs)", "edit(src/**)"]);
    alternatives.tool = "edit".into();
    alternatives.preview = None;
    agent(
        &mut m,
        AgentEvent::PermissionRequested {
            id: 8,
            request: alternatives,
        },
    );
    update(&mut m, key(KeyCode::Right));
    let cmds = update(&mut m, key(KeyCode::Char('s')));
    assert_eq!(
        reply(&cmds),
        Some((
            8,
            Decision::AllowAlways {
                rule: "edit(src/**)".into()
            }
        ))
    );

    ask(&mut m, 9, &["Bash(cargo test:*)"]);
    let cmds = update(&mut m, key(KeyCode::Char('s')));
    assert_eq!(
        reply(&cmds),
        Some((
            9,
            Decision::AllowAlways {
                rule: "Bash(cargo test:*)".into()
            }
        ))
    );
}

#[test]
fn dialog_arrows_and_enter_choose() {
    let mut m = model();
    ask(&mut m, 1, &["Bash(cargo test:*)"]);
    update(&mut m, key(KeyCode::Down));
    let cmds = update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        reply(&cmds),
        Some((
            1,
            Decision::AllowAlways {
                rule: "Bash(cargo test:*)".into()
            }
        ))
    );
    // Without rules, "always" is skipped.
    ask(&mut m, 2, &[]);
    update(&mut m, key(KeyCode::Down));
    assert!(update(&mut m, key(KeyCode::Char('s'))).is_empty());
    update(&mut m, key(KeyCode::Enter));
    let cmds = update(&mut m, key(KeyCode::Enter));
    assert_eq!(reply(&cmds), Some((2, Decision::Deny { reason: None })));
}

#[test]
fn dialog_deny_with_reason_and_escape() {
    let mut m = model();
    ask(&mut m, 3, &[]);
    update(&mut m, key(KeyCode::Char('d')));
    type_text(&mut m, "use nextest");
    update(&mut m, Msg::Paste(" instead".into()));
    let cmds = update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        reply(&cmds),
        Some((
            3,
            Decision::Deny {
                reason: Some("use nextest instead".into())
            }
        ))
    );
    ask(&mut m, 4, &[]);
    let cmds = update(&mut m, key(KeyCode::Esc));
    assert_eq!(reply(&cmds), Some((4, Decision::Deny { reason: None })));
}

#[test]
fn requests_queue_and_resolve() {
    let mut m = model();
    ask(&mut m, 1, &[]);
    ask(&mut m, 2, &[]);
    ask(&mut m, 3, &[]);
    assert_eq!(m.modals.permissions.len(), 3);
    agent(&mut m, AgentEvent::PermissionResolved { id: 2 });
    let cmds = update(&mut m, key(KeyCode::Char('a')));
    assert_eq!(reply(&cmds), Some((1, Decision::AllowOnce)));
    assert_eq!(m.modals.permissions.front().map(|d| d.id), Some(3));
}

#[test]
fn escape_cancels_a_running_turn() {
    let mut m = model();
    assert!(update(&mut m, key(KeyCode::Esc)).is_empty());
    turn(&mut m, "go");
    assert_eq!(
        update(&mut m, key(KeyCode::Esc)),
        vec![Cmd::Send(AgentCommand::Cancel)]
    );
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Cancelled,
        },
    );
    assert!(matches!(&m.transcript.cells()[1].kind, CellKind::Marker(t) if t == "cancelled"));
}

#[test]
fn ctrl_c_stops_a_turn_without_arming_quit() {
    let mut m = model();
    turn(&mut m, "go");
    assert_eq!(
        update(&mut m, ctrl('c')),
        vec![Cmd::Send(AgentCommand::Cancel)]
    );
    m.now += Duration::from_millis(300);
    assert_eq!(
        update(&mut m, ctrl('c')),
        vec![Cmd::Send(AgentCommand::Cancel)],
        "a reflexive double press during a turn does not quit"
    );
}

#[test]
fn ctrl_c_on_an_empty_idle_prompt_arms_then_quits() {
    let mut m = model();
    assert!(update(&mut m, ctrl('c')).is_empty(), "the first press arms");
    assert!(
        m.flash
            .as_ref()
            .is_some_and(|f| f.0.contains("again to quit"))
    );
    m.now += Duration::from_millis(500);
    assert_eq!(update(&mut m, ctrl('c')), vec![Cmd::Quit]);

    let mut m = model();
    update(&mut m, ctrl('c'));
    m.now += Duration::from_secs(3);
    assert!(update(&mut m, ctrl('c')).is_empty(), "too late: arms again");
}

#[test]
fn ctrl_c_clears_a_multi_line_prompt_without_arming_and_undo_restores_it() {
    let mut m = model();
    type_text(&mut m, "first line");
    update(&mut m, ctrl('j'));
    type_text(&mut m, "second");
    assert!(update(&mut m, ctrl('c')).is_empty());
    assert!(m.input.is_empty(), "Ctrl+C clears the prompt");
    assert!(m.last_interrupt.is_none(), "clearing does not arm quit");
    update(&mut m, ctrl('_'));
    assert_eq!(m.input.text(), "first line\nsecond");
}

#[test]
fn readline_keys_edit_the_prompt() {
    let mut m = model();
    type_text(&mut m, "one two three");
    update(&mut m, ctrl('w'));
    assert_eq!(m.input.text(), "one two ");
    update(&mut m, key(KeyCode::Left));
    update(&mut m, key(KeyCode::Left));
    update(&mut m, ctrl('k'));
    assert_eq!(m.input.text(), "one tw");
    update(&mut m, ctrl('u'));
    assert!(m.input.is_empty());
    update(&mut m, ctrl('_'));
    assert_eq!(m.input.text(), "one tw");
}

#[test]
fn prompts_sent_during_a_turn_show_as_queued() {
    let mut m = model();
    turn(&mut m, "first");
    type_text(&mut m, "second");
    let cmds = update(&mut m, key(KeyCode::Enter));
    assert_eq!(cmds[0], submit("second"));
    assert_eq!(m.queued, vec!["second".to_string()]);
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    assert_eq!(m.queued.len(), 1, "queued until its turn starts");
    turn(&mut m, "second");
    assert!(m.queued.is_empty());
}

#[test]
fn large_paste_is_sent_whole() {
    let mut m = model();
    let big: String = (0..240).map(|i| format!("row {i}\n")).collect();
    update(&mut m, Msg::Paste(big.clone()));
    assert_eq!(m.input.shown_text(), "[pasted 240 lines]");
    let cmds = update(&mut m, key(KeyCode::Enter));
    assert_eq!(cmds[0], submit(&big));
}

#[test]
fn up_and_down_recall_prompts() {
    let mut m = model();
    for p in ["one", "two"] {
        type_text(&mut m, p);
        update(&mut m, key(KeyCode::Enter));
    }
    update(&mut m, key(KeyCode::Up));
    assert_eq!(m.input.text(), "two");
    update(&mut m, key(KeyCode::Up));
    assert_eq!(m.input.text(), "one");
    update(&mut m, key(KeyCode::Down));
    update(&mut m, key(KeyCode::Down));
    assert_eq!(m.input.text(), "");
}

#[test]
fn shift_tab_cycles_the_mode_and_events_update_status() {
    let mut m = model();
    let cmds = update(&mut m, shift(KeyCode::BackTab));
    assert_eq!(
        cmds,
        vec![Cmd::Send(AgentCommand::SetMode(Mode::AlwaysAsk))]
    );
    agent(&mut m, AgentEvent::ModeChanged(Mode::Auto));
    assert_eq!(m.mode, Mode::Auto);
    agent(
        &mut m,
        AgentEvent::Usage {
            usage: Default::default(),
            context_tokens: 50_000,
            context_window: 200_000,
            cost: Some(0.12),
        },
    );
    assert_eq!(m.usage.context_tokens, 50_000);
    agent(
        &mut m,
        AgentEvent::ModelChanged {
            provider: "openai".into(),
            model: "gpt".into(),
        },
    );
    assert_eq!((m.provider.as_str(), m.model.as_str()), ("openai", "gpt"));
}

#[test]
fn transcript_focus_selects_expands_and_copies() {
    let mut m = model();
    turn(&mut m, "show code");
    agent(
        &mut m,
        AgentEvent::TextDelta(
            "Here:\n\n```rust\nfn main() {}\n```\n\nand\n\n```sh\nls\n```\n".into(),
        ),
    );
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.focus, Focus::Transcript);
    assert_eq!(m.transcript.selected, Some(1));
    update(&mut m, key(KeyCode::Char('k')));
    assert_eq!(m.transcript.selected, Some(0));
    let cmds = update(&mut m, key(KeyCode::Char('y')));
    assert_eq!(cmds, vec![Cmd::CopyToClipboard("show code".into())]);
    update(&mut m, key(KeyCode::Char('j')));
    let first = update(&mut m, key(KeyCode::Char('c')));
    let second = update(&mut m, key(KeyCode::Char('c')));
    assert_eq!(first, vec![Cmd::CopyToClipboard("fn main() {}\n".into())]);
    assert_eq!(second, vec![Cmd::CopyToClipboard("ls\n".into())]);
    // Only a system clipboard is known to take a copy; OSC 52 alone is
    // reported as sent.
    update(&mut m, Msg::Copied { system: false });
    let flash = m.flash.clone().unwrap().0;
    assert!(
        flash.starts_with("code block") && flash.ends_with("sent to the terminal (OSC 52)"),
        "{flash}"
    );
    update(&mut m, key(KeyCode::Char('c')));
    update(&mut m, Msg::Copied { system: true });
    assert!(m.flash.clone().unwrap().0.starts_with("copied code block"));
    update(&mut m, key(KeyCode::Enter));
    assert!(m.transcript.cells()[1].expanded);
    update(&mut m, key(KeyCode::Tab));
    assert_eq!(m.focus, Focus::Prompt);
    assert_eq!(m.transcript.selected, None);
}

#[test]
fn help_opens_on_question_mark_and_closes() {
    let mut m = model();
    update(&mut m, key(KeyCode::Char('?')));
    assert_eq!(m.modals.overlays, vec![Overlay::Help(Default::default())]);
    update(&mut m, key(KeyCode::Esc));
    assert!(m.modals.overlays.is_empty());
    type_text(&mut m, "why?");
    assert!(
        m.modals.overlays.is_empty(),
        "? in text is just a character"
    );
    update(&mut m, key(KeyCode::F(1)));
    assert_eq!(m.modals.overlays.len(), 1);
}

#[test]
fn f2_toggles_mouse_capture() {
    let mut m = model();
    assert_eq!(
        update(&mut m, key(KeyCode::F(2))),
        vec![Cmd::SetMouseCapture(false)]
    );
    assert!(!m.mouse_captured);
}

#[test]
fn code_drawn_before_highlighting_loaded_is_drawn_again_once_it_is() {
    let mut m = model();
    turn(&mut m, "go");
    agent(
        &mut m,
        AgentEvent::TextDelta("```rust\nfn main() {}\n```\n\n".into()),
    );
    let cell = m.transcript.len() - 1;
    let before = m.transcript.cells()[cell].revision();
    // As if the transcript was drawn while the data was still loading.
    m.highlight_seen = false;
    assert!(m.needs_tick(), "a tick notices the data arrived");
    update(&mut m, Msg::Tick(std::time::Instant::now()));
    assert!(m.highlight_seen);
    assert_ne!(m.transcript.cells()[cell].revision(), before, "re-rendered");
    update(&mut m, Msg::Tick(std::time::Instant::now()));
    let after = m.transcript.cells()[cell].revision();
    update(&mut m, Msg::Tick(std::time::Instant::now()));
    assert_eq!(m.transcript.cells()[cell].revision(), after, "only once");
}

#[test]
fn the_clock_runs_only_while_something_moves() {
    let mut m = model();
    assert!(!m.needs_tick(), "idle: no periodic redraw");
    turn(&mut m, "go");
    assert!(m.needs_tick());
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    assert!(!m.needs_tick());
}

#[test]
fn retrying_counts_down_in_the_status_line() {
    let mut m = model();
    turn(&mut m, "go");
    agent(
        &mut m,
        AgentEvent::Retrying {
            attempt: 2,
            max_attempts: 5,
            delay_ms: 3000,
            error: "HTTP 429".into(),
        },
    );
    let t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 8));
    let mut t = t.unwrap();
    t.draw(|f| crate::tui::view::view(&mut m, f)).unwrap();
    let s = t.backend().to_string();
    assert!(s.contains("retrying in 3s (2/5)"), "{s}");
    assert!(s.contains("HTTP 429"), "{s}");
    let later = m.now + Duration::from_millis(1500);
    update(&mut m, Msg::Tick(later));
    t.draw(|f| crate::tui::view::view(&mut m, f)).unwrap();
    assert!(t.backend().to_string().contains("retrying in 2s (2/5)"));
}

#[test]
fn failed_and_limited_turns_leave_a_notice() {
    let mut m = model();
    turn(&mut m, "go");
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Failed {
                error: "HTTP 401: bad key".into(),
            },
        },
    );
    assert!(
        matches!(&m.transcript.cells()[1].kind, CellKind::Notice { text, .. } if text.contains("bad key"))
    );
}

#[test]
fn config_keys_override_the_table_and_bad_entries_are_reported() {
    let mut keys = crate::tui::KeyConfig::new();
    keys.insert("open_editor".into(), "f4".into());
    keys.insert("frobnicate".into(), "x".into());
    let mut m = crate::tui::build_model(crate::tui::TuiOptions {
        commands: Default::default(),
        dialog_pause: std::time::Duration::ZERO,
        provider: "p".into(),
        model: "m".into(),
        theme: "no-such-theme".into(),
        keys,
        ..Default::default()
    });
    type_text(&mut m, "hi");
    assert_eq!(
        update(&mut m, key(KeyCode::F(4))),
        vec![Cmd::OpenEditor("hi".into())]
    );
    assert!(update(&mut m, ctrl('g')).is_empty());
    let notices: Vec<String> = m.transcript.cells().iter().map(|c| c.copy_text()).collect();
    assert!(
        notices.iter().any(|n| n.contains("frobnicate")),
        "{notices:?}"
    );
    assert!(
        notices.iter().any(|n| n.contains("no-such-theme")),
        "{notices:?}"
    );
}
