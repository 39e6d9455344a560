//! Every colour a theme declares shows on screen somewhere, and each
//! built-in theme's key colours are pinned by a snapshot.

use std::collections::BTreeSet;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Style};
use serde_json::json;

use super::Theme;
use crate::config::Mode;
use crate::protocol::{AgentEvent, ToolStatus, TurnOutcome};
use crate::tools::ToolDisplay;
use crate::tui::model::Model;
use crate::tui::styles::Styles;
use crate::tui::test_support::*;
use crate::tui::update::update;
use crate::tui::widgets::cell::CellKind;

const ANSWER: &str = "# HEADING\n\nSee `INLINE` and [LINK](https://example.com).\n\n> QUOTE\n\n```rust\nfn code() {}\n```\n";

fn tool(m: &mut Model, id: &str, name: &str, status: ToolStatus, display: Option<ToolDisplay>) {
    agent(
        m,
        AgentEvent::ToolCallStarted {
            call_id: id.into(),
            name: name.into(),
            input: json!({}),
            summary: format!("{name} TOOL{id}"),
        },
    );
    agent(
        m,
        AgentEvent::ToolCallFinished {
            call_id: id.into(),
            status,
            output: "out".into(),
            display,
        },
    );
}

/// A session showing every kind of thing a theme colours.
fn scene(theme: Theme) -> Model {
    let mut m = model();
    m.styles = Styles::from_theme(&theme);
    m.theme = theme;
    m.mode = Mode::Auto;
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "PROMPT".into(),
        },
    );
    agent(
        &mut m,
        AgentEvent::ReasoningDelta("THINKING about it".into()),
    );
    agent(&mut m, AgentEvent::TextDelta(ANSWER.into()));
    // Two changes far apart: two hunks, each with its header.
    let middle: String = (0..20).map(|i| format!("line {i}\n")).collect();
    let diff = crate::diff::FileDiff::new(
        "src/lib.rs".into(),
        format!("fn add() {{\n    REMOVED - b\n}}\n{middle}end one\n"),
        format!("fn add() {{\n    ADDED + b\n}}\n{middle}end two\n"),
    );
    tool(
        &mut m,
        "1",
        "edit",
        ToolStatus::Done,
        Some(ToolDisplay::Diff(diff)),
    );
    tool(&mut m, "2", "bash", ToolStatus::Failed, None);
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    // The thought shown in full (its text has the reasoning style); the
    // diff folded (its hunks have headers).
    for i in 0..m.transcript.len() {
        if let Some(c) = m.transcript.get_mut(i)
            && matches!(c.kind, CellKind::Reasoning { .. })
        {
            c.expanded = true;
        }
    }
    m
}

fn draw(m: &mut Model) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(100, 60)).unwrap();
    t.draw(|f| crate::tui::view::view(m, f)).unwrap();
    t.backend().buffer().clone()
}

/// The main screen, then with the palette open (its highlighted row).
fn screens(theme: Theme) -> Vec<Buffer> {
    let mut m = scene(theme);
    let main = draw(&mut m);
    update(&mut m, ctrl('p'));
    vec![main, draw(&mut m)]
}

fn colours(buffers: &[Buffer]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for b in buffers {
        for c in &b.content {
            out.insert(format!("{:?}", c.fg));
            out.insert(format!("{:?}", c.bg));
        }
    }
    out
}

#[test]
fn every_colour_a_theme_declares_is_on_screen() {
    let mut theme = Theme::load("dark", None).unwrap();
    theme.fg = Some(Color::Rgb(1, 1, 1));
    theme.bg = Some(Color::Rgb(2, 2, 2));
    let mut declared = Vec::new();
    for (i, style) in theme.styles_mut().into_iter().enumerate() {
        // A role that names a background is drawn by it; the others by
        // their text colour. Backgrounds dark and text light, so every
        // glyph stays legible and keeps its own colour.
        let unique = if style.bg.is_some() && style.fg.is_none() {
            let c = Color::Rgb(10 + i as u8, 20, 30);
            style.bg = Some(c);
            c
        } else {
            let c = Color::Rgb(10 + i as u8, 200, 230);
            style.fg = Some(c);
            c
        };
        declared.push(unique);
    }
    let seen = colours(&screens(theme));
    let names = [
        "dim",
        "accent",
        "border",
        "border_focus",
        "user_prompt",
        "assistant",
        "reasoning",
        "tool_name",
        "success",
        "warning",
        "error",
        "selection_bg",
        "status_bg",
        "status_fg",
        "line_number",
        "code_bg",
        "inline_code",
        "heading",
        "link",
        "quote",
        "diff_add_fg",
        "diff_add_bg",
        "diff_del_fg",
        "diff_del_bg",
        "diff_add_word_bg",
        "diff_del_word_bg",
        "diff_hunk",
    ];
    let unused: Vec<&str> = declared
        .iter()
        .zip(names)
        .filter(|(c, _)| !seen.contains(&format!("{c:?}")))
        .map(|(_, n)| n)
        .collect();
    assert!(unused.is_empty(), "declared but never drawn: {unused:?}");
    assert!(seen.contains(&format!("{:?}", Color::Rgb(2, 2, 2))));
}

/// The style of the first cell showing `needle`.
fn style_of(buf: &Buffer, needle: &str) -> String {
    let w = buf.area.width as usize;
    for y in 0..buf.area.height {
        let row: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let text = row.concat();
        if let Some(at) = text.find(needle) {
            let col = text[..at].chars().count().min(w - 1) as u16;
            let c = &buf[(col, y)];
            return format!("fg {:?} bg {:?} {:?}", c.fg, c.bg, c.modifier);
        }
    }
    "not on screen".into()
}

#[test]
fn each_builtin_theme_colours_the_screen() {
    for name in Theme::builtin_names() {
        let theme = Theme::load(name, None).unwrap();
        let shots = screens(theme.clone());
        let (main, palette) = (&shots[0], &shots[1]);
        let bottom = main.area.height - 1;
        let status = &main[(main.area.width - 1, bottom)];
        let mut report = vec![
            format!(
                "background (empty cell): fg {:?} bg {:?}",
                main[(99, 30)].fg,
                main[(99, 30)].bg
            ),
            format!("status row end: fg {:?} bg {:?}", status.fg, status.bg),
        ];
        for probe in [
            "PROMPT",
            "THINKING",
            "HEADING",
            "INLINE",
            "LINK",
            "QUOTE",
            "edit TOOL1",
            "ADDED",
            "REMOVED",
            "auto",
        ] {
            report.push(format!("{probe}: {}", style_of(main, probe)));
        }
        report.push(format!("palette selection: {}", style_of(palette, "/new")));
        insta::assert_snapshot!(format!("theme_{name}"), report.join("\n"));
        let bg = theme.bg.unwrap_or(Color::Reset);
        assert_eq!(
            main[(99, 30)].bg,
            bg,
            "{name}: the background fills empty cells"
        );
        assert_ne!(
            status.bg,
            Style::default().bg.unwrap_or(Color::Reset),
            "{name}: status row has its own background"
        );
    }
}
