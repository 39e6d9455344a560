//! What an `@path` attached to a prompt, shown under it as a chip
//! (`@src/main.rs · 120 lines`) that Enter expands to the text the model
//! was given. A hook that blocked or added context is shown the same way
//! (`PreToolUse hook blocked Bash · python3 guard.py`), expanding to what
//! it said.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::tui::styles::Styles;
use crate::tui::wrap::wrap_plain;

/// Lines of the attached text shown when the chip is expanded.
const SHOWN_LINES: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// `@` before a mention; nothing before a hook's line.
    pub sigil: &'static str,
    pub mention: String,
    pub summary: String,
    pub text: String,
}

impl Attachment {
    pub fn lines(&self, width: u16, expanded: bool, s: &Styles) -> Vec<Line<'static>> {
        let chip = s.accent.add_modifier(Modifier::REVERSED);
        let hint = if expanded {
            "Enter folds"
        } else {
            "Enter expands"
        };
        // A picture: its chip alone (after its `@path`, when it had one);
        // there is no text to expand.
        if self.text.is_empty() {
            let mut spans = Vec::new();
            if !self.mention.is_empty() {
                spans.push(Span::styled(format!(" @{} ", self.mention), chip));
                spans.push(Span::raw(" "));
            }
            spans.push(Span::styled(self.summary.clone(), s.accent));
            return vec![Line::from(spans)];
        }
        let mut out = vec![Line::from(vec![
            Span::styled(format!(" {}{} ", self.sigil, self.mention), chip),
            Span::styled(format!(" {} · {hint}", self.summary), s.dim),
        ])];
        if !expanded {
            return out;
        }
        let body: Vec<&str> = self.text.lines().collect();
        let shown = body.len().min(SHOWN_LINES);
        for line in &body[..shown] {
            out.extend(wrap_plain(line, width, s.dim));
        }
        if shown < body.len() {
            out.push(Line::from(Span::styled(
                format!(
                    "… {n} more {} (y copies all)",
                    crate::text::plural(body.len() - shown, "line", "lines"),
                    n = body.len() - shown
                ),
                s.dim,
            )));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chip_that_expands_to_the_attached_text() {
        let a = Attachment {
            sigil: "@",
            mention: "notes.md".into(),
            summary: "2 lines".into(),
            text: "<attached path=\"notes.md\">\nalpha\nbeta\n</attached>".into(),
        };
        let s = Styles::default();
        let folded: Vec<String> = a
            .lines(40, false, &s)
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(folded, [" @notes.md  2 lines · Enter expands"]);
        let open: String = a
            .lines(40, true, &s)
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(open.contains("alpha\nbeta"), "{open}");
    }
}
