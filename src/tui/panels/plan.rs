//! The plan the model proposes at the end of plan mode: rendered as
//! markdown, scrollable, with three answers — approve and continue in
//! smart mode, approve and continue in auto mode, or keep planning with a
//! note for the model.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::{Outcome, PanelAction};
use crate::permission::Mode;
use crate::protocol::{AgentCommand, Decision};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;

const CHOICES: [&str; 3] = [
    "Approve, and continue in smart mode (writes ask)",
    "Approve, and continue in auto mode",
    "Keep planning: tell the model what to change",
];

#[derive(Debug, Clone, PartialEq)]
pub struct PlanDialog {
    /// The request's id, for the answer.
    pub id: u64,
    pub plan: String,
    pub scroll: usize,
    pub choice: usize,
    /// The note being typed for "keep planning".
    pub note: Option<String>,
}

impl PlanDialog {
    pub fn new(id: u64, plan: String) -> PlanDialog {
        PlanDialog {
            id,
            plan,
            scroll: 0,
            choice: 0,
            note: None,
        }
    }

    fn reply(&self, decision: Decision) -> Outcome {
        Outcome::close_with(PanelAction::Agent(AgentCommand::PermissionReply {
            id: self.id,
            decision,
        }))
    }

    fn choose(&mut self, choice: usize) -> Outcome {
        match choice {
            0 => self.reply(Decision::ApprovePlan { mode: Mode::Smart }),
            1 => self.reply(Decision::ApprovePlan { mode: Mode::Auto }),
            _ => {
                self.choice = 2;
                self.note = Some(String::new());
                Outcome::keep()
            }
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Outcome {
        if let Some(note) = &mut self.note {
            match key.code {
                KeyCode::Enter => {
                    let reason = Some(note.trim().to_string()).filter(|n| !n.is_empty());
                    return self.reply(Decision::Deny { reason });
                }
                KeyCode::Esc => self.note = None,
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Char(c) => note.push(c),
                _ => {}
            }
            return Outcome::keep();
        }
        match key.code {
            KeyCode::Char(c @ '1'..='3') => return self.choose(c as usize - '1' as usize),
            KeyCode::Down | KeyCode::Tab => self.choice = (self.choice + 1) % CHOICES.len(),
            KeyCode::Up | KeyCode::BackTab => {
                self.choice = (self.choice + CHOICES.len() - 1) % CHOICES.len()
            }
            _ if keys.is(Action::PanelPageDown, &key) => self.scroll += 10,
            _ if keys.is(Action::PanelPageUp, &key) => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Enter => return self.choose(self.choice),
            KeyCode::Esc => return self.reply(Decision::Deny { reason: None }),
            _ => {}
        }
        Outcome::keep()
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, s: &Styles, theme: &Theme) {
        let width = area.width.saturating_sub(4).clamp(20, 110);
        let height = area.height.saturating_sub(2).max(8);
        let popup = Rect {
            x: area.x + area.width.saturating_sub(width) / 2,
            y: area.y + 1.min(area.height),
            width: width.min(area.width),
            height: height.min(area.height),
        };
        Clear.render(popup, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(s.border_focus)
            .title(" Plan ready: approve it? ");
        let inner = block.inner(popup);
        block.render(popup, buf);
        let foot = self.footer(s);
        let plan_rows = inner.height.saturating_sub(foot.len() as u16 + 1) as usize;
        let plan = crate::tui::markdown::render(&self.plan, inner.width.saturating_sub(1), theme);
        let max_scroll = plan.len().saturating_sub(plan_rows);
        self.scroll = self.scroll.min(max_scroll);
        let mut lines: Vec<Line> = plan.into_iter().skip(self.scroll).take(plan_rows).collect();
        while lines.len() < plan_rows {
            lines.push(Line::raw(""));
        }
        let more = if max_scroll > 0 {
            format!(
                "── lines {}–{} of {} (PgUp/PgDn) ──",
                self.scroll + 1,
                (self.scroll + plan_rows).min(max_scroll + plan_rows),
                max_scroll + plan_rows
            )
        } else {
            String::new()
        };
        lines.push(Line::styled(more, s.dim));
        lines.extend(foot);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    fn footer(&self, s: &Styles) -> Vec<Line<'static>> {
        let mut lines: Vec<Line<'static>> = CHOICES
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let style = if i == self.choice {
                    s.focused_choice
                } else {
                    s.text
                };
                let mark = if i == self.choice { "›" } else { " " };
                Line::from(vec![Span::styled(
                    format!("{mark} {} {text}", i + 1),
                    style,
                )])
            })
            .collect();
        match &self.note {
            Some(note) => {
                lines.push(Line::from(vec![
                    Span::styled("  note: ", s.accent),
                    Span::styled(format!("{note}▏"), s.text),
                ]));
                lines.push(Line::styled(
                    "Enter: send the note and keep planning    Esc: back",
                    s.dim,
                ));
            }
            None => lines.push(Line::styled(
                "1/2/3 or ↑↓ Enter: choose    PgUp/PgDn: scroll    Esc: keep planning",
                s.dim,
            )),
        }
        lines
    }
}
