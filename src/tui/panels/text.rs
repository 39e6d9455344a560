//! A text in a box (`/mcp`, `/permissions`): scrollable; any other key
//! closes it.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::{Outcome, boxed};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;

pub(super) fn handle_key(scroll: &mut u16, key: KeyEvent, keys: &KeyMap) -> Outcome {
    if keys.is(Action::PanelDown, &key) {
        *scroll = scroll.saturating_add(1);
    } else if keys.is(Action::PanelUp, &key) {
        *scroll = scroll.saturating_sub(1);
    } else if keys.is(Action::PanelPageDown, &key) {
        *scroll = scroll.saturating_add(10);
    } else if keys.is(Action::PanelPageUp, &key) {
        *scroll = scroll.saturating_sub(10);
    } else {
        return Outcome::close();
    }
    Outcome::keep()
}

pub(super) fn render(
    title: &str,
    text: &str,
    scroll: u16,
    area: Rect,
    buf: &mut Buffer,
    s: &Styles,
) {
    let lines: Vec<Line> = text
        .lines()
        .skip(scroll as usize)
        .map(|l| Line::styled(l.to_string(), s.text))
        .collect();
    boxed(&format!(" {title} "), lines, area, buf, s);
}
