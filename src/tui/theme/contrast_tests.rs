//! Every built-in theme, at every colour depth, on a light and on a dark
//! terminal: each glyph of a prompt, a permission dialog with its diff and
//! a command dialog must stand out from the cell behind it.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Cell;
use ratatui::style::Modifier;

use super::contrast::{MIN_RATIO, ratio, rgb_of};
use super::{ColorDepth, Theme, Themes};
use crate::diff::FileDiff;
use crate::protocol::{AgentEvent, PermissionRequest};
use crate::tools::Preview;
use crate::tui::model::Model;
use crate::tui::msg::{Msg, TerminalFacts};
use crate::tui::test_support::{agent, model, type_text};
use crate::tui::update::update;
use crate::tui::view::view;

/// A terminal's own colours: its background and default text.
struct Terminal16 {
    name: &'static str,
    bg: (u8, u8, u8),
    fg: (u8, u8, u8),
}

const TERMINALS: [Terminal16; 2] = [
    Terminal16 {
        name: "dark",
        bg: (0, 0, 0),
        fg: (229, 229, 229),
    },
    Terminal16 {
        name: "light",
        bg: (255, 255, 255),
        fg: (0, 0, 0),
    },
];

const DEPTHS: [ColorDepth; 3] = [
    ColorDepth::TrueColor,
    ColorDepth::Ansi256,
    ColorDepth::Ansi16,
];

fn asking(tool: &str, summary: &str, preview: Preview) -> PermissionRequest {
    PermissionRequest {
        formatting: None,
        tool: tool.into(),
        summary: summary.into(),
        reasons: vec!["changes the workspace".into()],
        preview: Some(preview),
        rules: vec![format!("{tool}(src/**)")],
        sandbox: None,
    }
}

fn edit() -> Preview {
    Preview::Diff(FileDiff {
        path: "src/lib.rs".into(),
        old: "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n// old note\n".into(),
        new: "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n// new note here\n".into(),
        added: 2,
        removed: 2,
    })
}

/// A model drawn with `theme` at `depth` on `term`.
fn themed(theme: &str, depth: ColorDepth, term: &Terminal16) -> Model {
    let mut m = model();
    m.themes = Themes::load(None, depth);
    m.theme_chosen = true;
    m.theme = Theme::load(theme, None).unwrap();
    update(
        &mut m,
        Msg::Terminal(TerminalFacts {
            background: Some(term.bg),
            ..TerminalFacts::default()
        }),
    );
    assert_eq!(m.theme.name, theme);
    m
}

/// The colours a cell shows as on `term`: `(text, background)`.
fn shown(cell: &Cell, term: &Terminal16) -> ((u8, u8, u8), (u8, u8, u8)) {
    let fg = rgb_of(cell.fg).unwrap_or(term.fg);
    let bg = rgb_of(cell.bg).unwrap_or(term.bg);
    if cell.modifier.contains(Modifier::REVERSED) {
        (bg, fg)
    } else {
        (fg, bg)
    }
}

/// Every glyph whose contrast is below the minimum, described.
fn illegible(m: &mut Model, term: &Terminal16, what: &str) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
    t.draw(|f| view(m, f)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut bad = Vec::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            if cell.symbol().trim().is_empty() {
                continue;
            }
            let (fg, bg) = shown(cell, term);
            let r = ratio(fg, bg);
            let pair = format!("{what}: {fg:?} on {bg:?} ({r:.2})");
            if r < MIN_RATIO && !bad.iter().any(|b: &String| b.starts_with(&pair)) {
                let row: String = (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect();
                bad.push(format!("{pair}, first in `{}`", row.trim()));
            }
        }
    }
    bad
}

#[test]
fn every_theme_is_legible_on_light_and_dark_terminals_at_every_depth() {
    let mut bad = Vec::new();
    for theme in Theme::builtin_names() {
        for depth in DEPTHS {
            for term in &TERMINALS {
                let what = format!("{theme} at {depth:?} on a {} terminal", term.name);
                let mut m = themed(theme, depth, term);
                type_text(&mut m, "fix the failing test in src/lib.rs");
                bad.extend(illegible(&mut m, term, &format!("{what}, prompt")));
                let request = asking("edit", "edit src/lib.rs", edit());
                agent(&mut m, AgentEvent::PermissionRequested { id: 1, request });
                bad.extend(illegible(&mut m, term, &format!("{what}, diff dialog")));

                let mut m = themed(theme, depth, term);
                let command = Preview::Command {
                    command: "cargo test --workspace && git status".into(),
                    cwd: "/work/project".into(),
                    commands: vec![
                        vec!["cargo".into(), "test".into(), "--workspace".into()],
                        vec!["git".into(), "status".into()],
                    ],
                    redirects: Vec::new(),
                };
                let request = asking("bash", "cargo test --workspace", command);
                agent(&mut m, AgentEvent::PermissionRequested { id: 1, request });
                bad.extend(illegible(&mut m, term, &format!("{what}, command dialog")));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} colour pairs below {MIN_RATIO}:1\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn a_dark_theme_on_a_light_terminal_paints_its_own_background() {
    let light = &TERMINALS[1];
    let m = themed("dark", ColorDepth::TrueColor, light);
    assert!(m.theme.bg.is_some(), "{:?}", m.theme.bg);
    let dark = &TERMINALS[0];
    let m = themed("dark", ColorDepth::TrueColor, dark);
    assert_eq!(m.theme.bg, None);
}

#[test]
fn with_no_theme_chosen_the_background_picks_one() {
    for (bg, want) in [
        (Some((250, 250, 245)), "light"),
        (Some((20, 22, 30)), "dark"),
        (None, "dark"),
    ] {
        let mut m = model();
        update(
            &mut m,
            Msg::Terminal(TerminalFacts {
                background: bg,
                ..TerminalFacts::default()
            }),
        );
        assert_eq!(m.theme.name, want, "{bg:?}");
    }
    let mut m = model();
    m.theme_chosen = true;
    update(
        &mut m,
        Msg::Terminal(TerminalFacts {
            background: Some((255, 255, 255)),
            ..TerminalFacts::default()
        }),
    );
    assert_eq!(m.theme.name, "dark");
}
