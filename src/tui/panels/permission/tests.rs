//! Hunk-by-hunk review of an edit in the dialog and in full screen.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::protocol::AgentEvent;
use crate::tui::model::Model;
use crate::tui::test_support::{agent, key, model};
use crate::tui::update::update;
use crate::tui::view::view;

/// Three changes far apart: three hunks.
fn three_hunks() -> (String, String) {
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 3\n", "line three\n")
        .replace("line 20\n", "line twenty\n")
        .replace("line 37\n", "line thirty-seven\n");
    (old, new)
}

fn request() -> PermissionRequest {
    let (old, new) = three_hunks();
    PermissionRequest {
        formatting: None,
        tool: "edit".into(),
        summary: "edit notes.txt".into(),
        reasons: vec!["writes a file".into()],
        preview: Some(Preview::Diff(crate::diff::FileDiff::new(
            "notes.txt".into(),
            old,
            new,
        ))),
        rules: vec!["Edit(notes.txt)".into()],
        sandbox: None,
    }
}

fn press(d: &mut PermissionDialog, code: KeyCode) -> Option<Decision> {
    d.key(KeyEvent::new(code, KeyModifiers::NONE), &KeyMap::default())
}

fn asked() -> Model {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::PermissionRequested {
            id: 1,
            request: request(),
        },
    );
    m
}

fn screen(m: &mut Model, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view(m, f)).unwrap();
    t.backend().to_string()
}

#[test]
fn the_dialog_with_one_hunk_rejected() {
    let mut m = asked();
    update(&mut m, key(KeyCode::Char('n')));
    update(&mut m, key(KeyCode::Char(' ')));
    insta::assert_snapshot!(screen(&mut m, 100, 40));
}

#[test]
fn allowing_with_a_rejected_hunk_sends_which_and_why() {
    let mut d = PermissionDialog::new(1, request());
    assert_eq!(d.review.as_ref().map(|r| r.accepted.len()), Some(3));
    assert_eq!(press(&mut d, KeyCode::Char('p')), None);
    assert_eq!(press(&mut d, KeyCode::Char(' ')), None);
    // "Always" stores a rule for the whole change only.
    assert_eq!(press(&mut d, KeyCode::Char('s')), None);
    assert_eq!(press(&mut d, KeyCode::Char('a')), None, "asks why first");
    for c in "too far".chars() {
        press(&mut d, KeyCode::Char(c));
    }
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        Some(Decision::AllowHunks {
            rejected: vec![2],
            reason: Some("too far".into())
        })
    );
}

#[test]
fn rejecting_every_hunk_is_a_denial() {
    let mut d = PermissionDialog::new(1, request());
    for _ in 0..3 {
        press(&mut d, KeyCode::Char(' '));
        press(&mut d, KeyCode::Char('n'));
    }
    assert_eq!(press(&mut d, KeyCode::Char('a')), None);
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        Some(Decision::Deny { reason: None })
    );
}

#[test]
fn the_full_screen_diff_reviews_hunks_too() {
    let mut m = asked();
    update(&mut m, key(KeyCode::Char('v')));
    let text = screen(&mut m, 100, 30);
    assert!(text.contains("▶ hunk 1/3 ✓ accepted"), "{text}");
    assert!(
        text.contains("line 1 "),
        "the whole file from its top: {text}"
    );
    update(&mut m, key(KeyCode::Char('n')));
    update(&mut m, key(KeyCode::Char(' ')));
    let text = screen(&mut m, 100, 30);
    assert!(
        text.contains("▶ hunk 2/3 ✗ rejected"),
        "scrolled to the focused hunk: {text}"
    );
    assert!(text.contains("2 of 3 hunks accepted"), "{text}");
    // Esc leaves the full screen and keeps the dialog and the review.
    update(&mut m, key(KeyCode::Esc));
    assert_eq!(m.modals.permissions.len(), 1);
    let text = screen(&mut m, 100, 40);
    assert!(text.contains("Allow once, 2 of 3 hunks accepted"), "{text}");
}

#[test]
fn always_on_a_compound_command_offers_every_rule_together() {
    let mut d = PermissionDialog::new(
        1,
        PermissionRequest {
            formatting: None,
            tool: "bash".into(),
            summary: "bash cargo test && touch SNEAKY".into(),
            reasons: vec!["`touch` changes files".into()],
            preview: Some(Preview::Command {
                command: "cargo test && touch SNEAKY".into(),
                cwd: ".".into(),
                commands: vec![
                    vec!["cargo".into(), "test".into()],
                    vec!["touch".into(), "SNEAKY".into()],
                ],
                redirects: vec![],
            }),
            rules: vec!["bash(cargo test*)".into(), "bash(touch*)".into()],
            sandbox: None,
        },
    );
    // No cycling through parts: the set is one choice.
    press(&mut d, KeyCode::Right);
    assert_eq!(d.rule, 0);
    assert_eq!(
        press(&mut d, KeyCode::Char('s')),
        Some(Decision::AllowAlwaysAll {
            rules: vec!["bash(cargo test*)".into(), "bash(touch*)".into()]
        })
    );
}

/// A command of many parts, each with its own rule, as a model may send.
fn many_parts(n: usize) -> PermissionRequest {
    let parts: Vec<String> = (0..n).map(|i| format!("touch f{i}")).collect();
    let command = parts.join("; ");
    PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: format!("bash {command}"),
        reasons: vec!["`touch` changes files".into()],
        preview: Some(Preview::Command {
            command: command.clone(),
            cwd: ".".into(),
            commands: parts
                .iter()
                .map(|p| p.split(' ').map(str::to_string).collect())
                .collect(),
            redirects: vec![],
        }),
        rules: (0..n).map(|i| format!("bash(touch f{i})")).collect(),
        sandbox: None,
    }
}

#[test]
fn more_rules_than_rows_neither_crash_nor_store_rules_never_shown() {
    for (w, h) in [(120, 40), (80, 24), (50, 15)] {
        let mut m = model();
        agent(
            &mut m,
            AgentEvent::PermissionRequested {
                id: 1,
                request: many_parts(60),
            },
        );
        let text = screen(&mut m, w, h);
        assert!(text.contains("Allow always"), "{w}x{h}:\n{text}");
    }
    let mut d = PermissionDialog::new(1, many_parts(60));
    assert!(d.always_label().contains("not offered"));
    assert_eq!(press(&mut d, KeyCode::Char('s')), None);
    assert_eq!(press(&mut d, KeyCode::Char('s')), None);

    // Rules listed whole are stored; on a screen too short to list them
    // all, "Always" stores nothing.
    let (area, styles, theme, keys) = (
        Rect::new(0, 0, 120, 40),
        Styles::default(),
        Theme::default(),
        KeyMap::default(),
    );
    let mut d = PermissionDialog::new(1, many_parts(6));
    d.render(area, &mut Buffer::empty(area), &styles, &theme, &keys, None);
    assert!(matches!(
        press(&mut d, KeyCode::Char('s')),
        Some(Decision::AllowAlwaysAll { rules }) if rules.len() == 6
    ));
    let small = Rect::new(0, 0, 50, 10);
    let mut d = PermissionDialog::new(1, many_parts(6));
    d.render(
        small,
        &mut Buffer::empty(small),
        &styles,
        &theme,
        &keys,
        None,
    );
    assert_eq!(press(&mut d, KeyCode::Char('s')), None);
}

#[test]
fn at_80_columns_the_hint_keeps_esc_and_the_keys_help() {
    // The hint was cut at the right edge ("… ←→ r…"): at 80 columns, and
    // at 120 in a review, "Esc deny" was lost, and no width ever said that
    // ? lists every key of the dialog.
    for w in [80, 120] {
        let mut m = asked();
        let shown = screen(&mut m, w, 30);
        let hint = shown
            .lines()
            .find(|l| l.contains("n/p hunk"))
            .unwrap_or_else(|| panic!("{shown}"));
        assert!(hint.contains("Esc deny"), "{hint}");
        assert!(hint.contains("? / F1 keys"), "{hint}");
        assert!(!hint.contains('…'), "{hint}");
    }
}

#[test]
fn in_full_screen_the_hint_says_v_goes_back() {
    // It said "v full screen" while already in full screen.
    let mut m = asked();
    update(&mut m, key(KeyCode::Char('v')));
    let shown = screen(&mut m, 100, 30);
    let hint = shown
        .lines()
        .find(|l| l.contains("n/p hunk"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(hint.contains("v back to the dialog"), "{hint}");
    assert!(!hint.contains("full screen"), "{hint}");
}

#[test]
fn an_edit_that_will_be_formatted_says_so_under_the_reasons() {
    let mut m = model();
    let mut r = request();
    r.formatting = Some("will be formatted by rustfmt after it is applied".into());
    agent(
        &mut m,
        AgentEvent::PermissionRequested { id: 1, request: r },
    );
    let s = screen(&mut m, 100, 40);
    let rows: Vec<&str> = s.lines().collect();
    let why = rows.iter().position(|l| l.contains("why: writes a file"));
    let line = rows
        .iter()
        .position(|l| l.contains("will be formatted by rustfmt after it is applied"));
    assert!(
        matches!((why, line), (Some(w), Some(f)) if f == w + 1),
        "{s}"
    );
    assert!(!screen(&mut asked(), 100, 40).contains("formatted"));
}
