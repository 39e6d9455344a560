//! Drawing the set-up: the providers to choose from, then the key and base
//! URL, with what the last check said.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::{CHOICES, Field, Setup, Step};
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;

impl Setup {
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let s = Styles::from_theme(theme);
        let lines = match self.step {
            Step::Choose => self.choose_lines(&s),
            Step::Details => self.detail_lines(&s),
        };
        let w = area.width.saturating_sub(4).clamp(20, 100);
        let h = (lines.len() as u16 + 2).min(area.height);
        let rect = Rect {
            x: area.x + area.width.saturating_sub(w) / 2,
            y: area.y + area.height.saturating_sub(h) / 3,
            width: w.min(area.width),
            height: h,
        };
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(s.accent)
            .title(Span::styled(" Set up a model provider ", s.accent));
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block)
            .render(rect, buf);
    }

    fn choose_lines(&self, s: &Styles) -> Vec<Line<'static>> {
        let mut lines = vec![
            Line::styled("cairn needs a model to talk to. Choose one:", s.text),
            Line::raw(""),
        ];
        for (i, c) in CHOICES.iter().enumerate() {
            let (mark, style) = if i == self.selected {
                ("▌ ", s.selection)
            } else {
                ("  ", s.text)
            };
            lines.push(Line::styled(format!("{mark}{}", c.label), style));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            "↑↓ choose · Enter next · Esc quit (an environment variable such as \
             ANTHROPIC_API_KEY works too)",
            s.dim,
        ));
        lines
    }

    fn detail_lines(&self, s: &Styles) -> Vec<Line<'static>> {
        let c = self.choice();
        let mut lines = vec![Line::styled(c.label.to_string(), s.accent), Line::raw("")];
        let field = |label: &str, value: String, on: bool| {
            let style = if on { s.focused_choice } else { s.text };
            Line::from(vec![
                Span::styled(format!("{label:<10}"), s.dim),
                Span::styled(value, style),
                Span::styled(if on { "▏" } else { "" }, s.dim),
            ])
        };
        let key_label = if c.local {
            "API key (optional)"
        } else {
            "API key"
        };
        lines.push(Line::styled(key_label.to_string(), s.dim));
        lines.push(field("", masked(&self.key), self.field == Field::Key));
        lines.push(Line::styled(
            "  paste it (stored 0600 in cairn's data directory), or type $NAME to read it \
             from that environment variable",
            s.dim,
        ));
        lines.push(Line::raw(""));
        lines.push(Line::styled("Base URL".to_string(), s.dim));
        lines.push(field("", self.url.clone(), self.field == Field::Url));
        lines.push(Line::raw(""));
        if self.checking {
            lines.push(Line::styled(
                "Checking with the provider's models list…",
                s.accent,
            ));
        } else if let Some(e) = &self.error {
            lines.push(Line::styled(format!("✗ {e}"), s.error));
        }
        lines.push(Line::styled(
            "Enter check and start · Tab next field · Ctrl+U clear · Esc back",
            s.dim,
        ));
        lines
    }
}

/// A pasted key shown without giving it away; a `$VARIABLE` as typed.
fn masked(key: &str) -> String {
    if key.starts_with('$') || key.is_empty() {
        return key.to_string();
    }
    let n = key.chars().count();
    let head: String = key.chars().take(3.min(n / 4)).collect();
    format!(
        "{head}{} ({n} characters)",
        "•".repeat((n - head.chars().count()).min(20))
    )
}
