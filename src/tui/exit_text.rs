//! What stays on the normal screen after quitting, in the terminal's
//! scrollback: the last turn (`[ui] on_exit = "summary"`), every turn
//! (`"transcript"`) or nothing (`"none"`), as plain text wrapped to the
//! terminal, and a line naming the background jobs quitting stopped.
//! Everything a model or tool wrote is cleaned of control characters.

use crate::config::ui::OnExit;
use crate::tui::model::Model;
use crate::tui::widgets::cell::{Cell, CellKind};
use crate::tui::wrap::{clean, wrap_str};

/// The text to print after the alternate screen is left; empty for none.
pub fn after_exit(model: &Model, width: u16) -> String {
    let width = usize::from(width.max(20));
    let cells = model.transcript.cells();
    let shown: &[Cell] = match model.on_exit {
        OnExit::None => &[],
        OnExit::Transcript => cells,
        OnExit::Summary => last_turn(cells),
    };
    let mut out = Vec::new();
    for c in shown {
        let Some((mark, text)) = plain(c, model.on_exit) else {
            continue;
        };
        if !out.is_empty() {
            out.push(String::new());
        }
        out.extend(indented(mark, &text, width));
    }
    if let Some(line) = crate::tui::jobs::quit_notice(model) {
        if !out.is_empty() {
            out.push(String::new());
        }
        out.extend(wrap_str(&line, width));
    }
    if out.is_empty() {
        return String::new();
    }
    out.join("\n") + "\n"
}

/// From the last prompt on.
fn last_turn(cells: &[Cell]) -> &[Cell] {
    let from = cells
        .iter()
        .rposition(|c| matches!(c.kind, CellKind::User(_)))
        .unwrap_or(cells.len());
    &cells[from..]
}

/// A cell's mark and text, or `None` for what is not printed: the summary
/// keeps the prompt and the answers; the transcript adds tool calls,
/// notices and compactions, each as one line.
fn plain(c: &Cell, how: OnExit) -> Option<(&'static str, String)> {
    let whole = how == OnExit::Transcript;
    match &c.kind {
        CellKind::User(u) => Some(("›", u.shown().to_string())),
        CellKind::Assistant(a) if !a.text.trim().is_empty() => Some(("●", a.text.clone())),
        CellKind::Tool(t) if whole => Some(("·", first_line(&t.copy_text()))),
        CellKind::Notice { text, .. } if whole => Some(("!", text.clone())),
        CellKind::Compaction { text, .. } if whole => Some(("≡", text.clone())),
        CellKind::Marker(t) if whole => Some(("⊘", t.clone())),
        _ => None,
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// `text` wrapped to `width`, the mark before the first row and the rest
/// indented under it.
fn indented(mark: &str, text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.trim_end().split('\n') {
        for row in wrap_str(&clean(line.trim_end_matches('\r')), width - 2) {
            let lead = if out.is_empty() { mark } else { " " };
            out.push(format!("{lead} {row}").trim_end().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::model;
    use crate::tui::widgets::cell::AssistantText;

    fn answer(text: &str) -> CellKind {
        let mut a = AssistantText::default();
        a.text = text.into();
        CellKind::Assistant(a)
    }

    #[test]
    fn the_summary_is_the_last_prompt_and_its_answer_wrapped() {
        let mut m = model();
        m.transcript.push(CellKind::User("first question".into()));
        m.transcript.push(answer("first answer"));
        m.transcript
            .push(CellKind::User("second\x1b[31m question".into()));
        m.transcript.push(answer(&"word ".repeat(30)));
        let text = after_exit(&m, 40);
        assert!(!text.contains("first"), "{text}");
        assert!(text.starts_with("› second[31m question\n"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
        m.on_exit = OnExit::Transcript;
        assert!(after_exit(&m, 40).contains("● first answer"));
        m.on_exit = OnExit::None;
        assert_eq!(after_exit(&m, 40), "");
    }
}
