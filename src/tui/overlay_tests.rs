//! Every overlay over a transcript of wide characters (CJK, emoji, a flag):
//! the rows an overlay covers are cleared from edge to edge, and no wide
//! character is left cut in half at its edges.

use crossterm::event::KeyCode;

use crate::protocol::PermissionRequest;
use crate::protocol::{AgentEvent, TurnOutcome};
use crate::tools::input::{FieldKind, InputField, InputRequest};
use crate::tools::restore::{FileAction, UndoPlan};
use crate::tui::model::Model;
use crate::tui::msg::Msg;
use crate::tui::test_support::*;
use crate::tui::update::update;

const WIDE: &str = "write a slow🇵essay 漢字かな交じり文 😀🎉 全角の文字が続く行 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字 😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀 終わり";

fn wide_transcript() -> Model {
    let mut m = model();
    for turn in 1..=3 {
        agent(
            &mut m,
            AgentEvent::TurnStarted {
                turn,
                prompt: WIDE.into(),
            },
        );
        agent(&mut m, AgentEvent::TextDelta(format!("{WIDE}\n\n{WIDE}")));
        agent(
            &mut m,
            AgentEvent::TurnFinished {
                turn,
                outcome: TurnOutcome::Completed,
            },
        );
    }
    m
}

/// No row that shows an overlay's side border also shows the transcript.
fn assert_rows_cleared(screen: &str) {
    for line in screen.lines() {
        let bordered = line.trim_start().starts_with(['│', '┌', '└', '╭', '╰']);
        if bordered {
            let outside = line.trim_start().trim_end_matches([' ', '"']);
            let left = &line[..line.len() - line.trim_start().len()];
            assert!(left.trim_matches(['"', ' ']).is_empty(), "{screen}");
            assert!(!outside.is_empty());
        }
    }
    assert!(!screen.contains('\u{F8FF}'), "{screen}");
}

fn check(name: &str, m: &mut Model) {
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = draw_text(m, w, h);
        assert_rows_cleared(&screen);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn palette_and_pickers() {
    let mut m = wide_transcript();
    update(&mut m, ctrl('p'));
    check("palette", &mut m);
    let mut m = wide_transcript();
    type_text(&mut m, "/theme");
    update(&mut m, key(KeyCode::Enter));
    check("theme_picker", &mut m);
}

#[test]
fn slash_menu() {
    let mut m = wide_transcript();
    type_text(&mut m, "/m");
    check("slash_menu", &mut m);
}

#[test]
fn help() {
    let mut m = wide_transcript();
    update(&mut m, key(KeyCode::F(1)));
    check("help", &mut m);
}

#[test]
fn permission_dialog() {
    let mut m = wide_transcript();
    let request = PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: "echo 漢字 😀".into(),
        reasons: vec!["writes".into()],
        preview: None,
        rules: vec![],
        sandbox: None,
    };
    agent(&mut m, AgentEvent::PermissionRequested { id: 1, request });
    check("permission", &mut m);
}

#[test]
fn input_form() {
    let mut m = wide_transcript();
    let request = InputRequest {
        source: "MCP server `demo`".into(),
        message: "Which name?".into(),
        fields: vec![InputField {
            name: "name".into(),
            label: "name".into(),
            description: String::new(),
            kind: FieldKind::Text,
            required: true,
            default: None,
        }],
        url: None,
    };
    agent(&mut m, AgentEvent::InputRequested { id: 1, request });
    check("input_form", &mut m);
}

#[test]
fn text_panel_and_confirmation() {
    let mut m = wide_transcript();
    update(
        &mut m,
        Msg::Text {
            title: "MCP servers".into(),
            text: "demo: running, 3 tools".into(),
        },
    );
    check("text_panel", &mut m);
    let mut m = wide_transcript();
    agent(
        &mut m,
        AgentEvent::UndoPlanned(UndoPlan {
            turn: 3,
            files: vec![("src/漢字.rs".into(), FileAction::Restore)],
            unrestorable: vec![],
        }),
    );
    check("confirm_undo", &mut m);
}

#[test]
fn session_browser() {
    let mut m = wide_transcript();
    update(&mut m, ctrl('s'));
    check("sessions", &mut m);
}

#[test]
fn question_mark_in_a_dialog_shows_its_keys_and_help_searches() {
    let mut m = wide_transcript();
    type_text(&mut m, "/mode");
    update(&mut m, key(KeyCode::Enter));
    type_text(&mut m, "?");
    let screen = draw_text(&mut m, 100, 30);
    assert!(screen.contains("Keys — Pickers"), "{screen}");
    assert!(
        screen.contains("pickers") || screen.contains("choose"),
        "{screen}"
    );
    assert!(!screen.contains("Session browser"), "{screen}");
    update(&mut m, key(KeyCode::Esc));
    assert!(
        draw_text(&mut m, 100, 30).contains("Permission mode"),
        "closing help goes back to the picker"
    );

    let mut m = wide_transcript();
    update(&mut m, key(KeyCode::F(1)));
    type_text(&mut m, "/rename");
    let screen = draw_text(&mut m, 100, 30);
    assert!(screen.contains("search: rename"), "{screen}");
    assert!(screen.contains("/rename <title>"), "{screen}");
    assert!(!screen.contains("Permission dialog"), "{screen}");
    check("help_search", &mut m);
}
