//! "Trust this project's settings?": everything the project's config file
//! would add, in full, and one answer. Shown at start, before anything the
//! project names has run.

use crossterm::event::KeyEvent;

use crate::tui::keys::{Action, KeyMap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::config::project::{Held, printable};
use crate::tui::theme::Theme;
use crate::tui::wrap::{wrap_plain, wrap_prefixed};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Trust,
    DontTrust,
    /// Ctrl+C: leave cairn without starting anything.
    Quit,
}

#[derive(Debug, Clone)]
pub struct TrustDialog {
    pub config_path: String,
    pub held: Vec<Held>,
    /// The highlighted answer; Enter takes it. Starts on "don't trust".
    pub trust_selected: bool,
    pub scroll: usize,
    /// A key came while the person was still typing, and was not taken as
    /// an answer.
    pub typed_ahead: bool,
    /// The person trusted an earlier form of the project: say why it is
    /// asked again.
    pub asked_again: bool,
}

impl TrustDialog {
    /// The question about the project whose config file is `config_path`;
    /// where there is none (only `.claude/` hooks, skills or agents wait),
    /// the text names the project instead of a file that is not there.
    pub fn new(config_path: &std::path::Path, held: Vec<Held>) -> Self {
        let exists = std::fs::symlink_metadata(config_path).is_ok();
        let project = (config_path.parent())
            .and_then(std::path::Path::parent)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let shown = match exists {
            true => config_path.display().to_string(),
            false => format!("The project at {project}"),
        };
        TrustDialog {
            config_path: printable(&shown),
            held,
            trust_selected: false,
            scroll: 0,
            typed_ahead: false,
            asked_again: false,
        }
    }

    pub fn key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<Answer> {
        let is = |a| keys.is(a, &key);
        if is(Action::TrustQuit) {
            return Some(Answer::Quit);
        }
        if is(Action::TrustYes) {
            return Some(Answer::Trust);
        }
        if is(Action::TrustNo) {
            return Some(Answer::DontTrust);
        }
        if is(Action::TrustChoose) {
            return Some(if self.trust_selected {
                Answer::Trust
            } else {
                Answer::DontTrust
            });
        }
        if is(Action::TrustSwitch) {
            self.trust_selected = !self.trust_selected;
        } else if is(Action::PanelDown) {
            self.scroll += 1;
        } else if is(Action::PanelUp) {
            self.scroll = self.scroll.saturating_sub(1);
        } else if is(Action::DiffPageDown) {
            self.scroll += 10;
        } else if is(Action::PanelPageUp) {
            self.scroll = self.scroll.saturating_sub(10);
        }
        None
    }

    fn body(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = wrap_plain(
            &format!(
                "{} asks for more than a repository gets on its own. Until you trust it, cairn \
                 applies only what makes it stricter (deny rules, a stricter mode, disabled servers).",
                self.config_path
            ),
            width,
            theme.base(),
        );
        if self.asked_again {
            lines.push(Line::default());
            lines.extend(wrap_plain(
                "You trusted this project before. Something it adds has changed since: its \
                 settings, a hook, agent or script file they run, or — for a server that runs \
                 outside the sandbox — files of the workspace a cairn session changed or is \
                 changing now.",
                width,
                theme.warning,
            ));
        }
        if self.typed_ahead {
            lines.push(Line::default());
            lines.extend(wrap_plain(
                "Keys typed while this question appeared are not taken as an answer. \
                 Read it, then answer.",
                width,
                theme.warning,
            ));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            format!("If trusted, it {}:", plural(self.held.len())),
            theme.heading,
        )));
        for h in &self.held {
            lines.extend(wrap_prefixed(
                &printable(&h.what),
                width,
                Span::styled("• ", theme.warning),
                Span::raw("  "),
                theme.base(),
            ));
            lines.push(Line::from(Span::styled(
                format!("  ({})", printable(&h.key)),
                theme.dim,
            )));
        }
        lines
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let w = area.width.saturating_sub(4).clamp(20, 110);
        // Tall enough for everything when it fits, the whole screen when not.
        let wanted = self.body(w.saturating_sub(4), theme).len() as u16 + 4;
        let h = wanted.min(area.height.saturating_sub(2)).max(8);
        let rect = Rect {
            x: area.x + (area.width.saturating_sub(w)) / 2,
            y: area.y + (area.height.saturating_sub(h)) / 2,
            width: w.min(area.width),
            height: h.min(area.height),
        };
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focus)
            .title(Span::styled(
                " Trust this project's settings? ",
                theme.accent,
            ));
        let inner = block.inner(rect);
        block.render(rect, buf);
        if inner.height < 3 || inner.width < 4 {
            return;
        }
        let text_w = inner.width.saturating_sub(2);
        let body = self.body(text_w, theme);
        let rows = usize::from(inner.height.saturating_sub(2));
        self.scroll = self.scroll.min(body.len().saturating_sub(rows));
        for (i, line) in body.iter().skip(self.scroll).take(rows).enumerate() {
            buf.set_line(inner.x + 1, inner.y + i as u16, line, text_w);
        }
        let below = body.len().saturating_sub(self.scroll + rows);
        let footer_y = inner.y + inner.height - 1;
        let selected = theme.selection_bg.add_modifier(Modifier::BOLD);
        let (t, n) = if self.trust_selected {
            (selected, theme.base())
        } else {
            (theme.base(), selected)
        };
        let spans = vec![
            Span::styled(" t  Trust ", t),
            Span::raw("   "),
            Span::styled(" n  Don't trust ", n),
            Span::styled("   Esc: don't trust · Ctrl+C: quit", theme.dim),
        ];
        buf.set_line(inner.x + 1, footer_y, &Line::from(spans), text_w);
        if below > 0 || self.scroll > 0 {
            // On the row above the answers, so no width hides it.
            let text = if below > 0 {
                format!(
                    "↓ {below} more {} below (↑↓ PgUp PgDn to read them all)",
                    crate::text::plural(below, "line", "lines")
                )
            } else {
                "↑ the end; more above (↑ PgUp)".to_string()
            };
            let more = Line::from(Span::styled(text, theme.warning));
            buf.set_line(inner.x + 1, footer_y - 1, &more, text_w);
        }
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "would add this".to_string()
    } else {
        format!("would add these {n} things")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEvent;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn dialog(n: usize) -> TrustDialog {
        let held = (0..n)
            .map(|i| Held {
                key: format!("mcp.s{i}"),
                what: format!("runs MCP server `s{i}`: sh -c 'touch marker{i}'"),
            })
            .collect();
        TrustDialog::new(std::path::Path::new("/p/.cairn/config.toml"), held)
    }

    fn screen(d: &mut TrustDialog, w: u16, h: u16) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        d.render(buf.area, &mut buf, &Theme::default());
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn shows_each_command_line_and_says_when_more_is_below() {
        let mut d = dialog(12);
        let s = screen(&mut d, 80, 20);
        assert!(s.contains("sh -c 'touch marker0'"), "{s}");
        assert!(s.contains("more lines below"), "{s}");
        for _ in 0..40 {
            d.key(KeyEvent::from(KeyCode::Down), &KeyMap::default());
        }
        let s = screen(&mut d, 80, 20);
        assert!(s.contains("sh -c 'touch marker11'"), "{s}");
        assert!(!s.contains("more lines below"), "{s}");
    }

    #[test]
    fn enter_defaults_to_dont_trust_and_keys_answer() {
        let mut d = dialog(1);
        assert_eq!(
            d.key(KeyEvent::from(KeyCode::Enter), &KeyMap::default()),
            Some(Answer::DontTrust)
        );
        d.key(KeyEvent::from(KeyCode::Tab), &KeyMap::default());
        assert_eq!(
            d.key(KeyEvent::from(KeyCode::Enter), &KeyMap::default()),
            Some(Answer::Trust)
        );
        assert_eq!(
            d.key(KeyEvent::from(KeyCode::Char('t')), &KeyMap::default()),
            Some(Answer::Trust)
        );
        assert_eq!(
            d.key(KeyEvent::from(KeyCode::Esc), &KeyMap::default()),
            Some(Answer::DontTrust)
        );
        assert_eq!(
            d.key(
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                &KeyMap::default()
            ),
            Some(Answer::Quit)
        );
    }
}
