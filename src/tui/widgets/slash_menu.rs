//! The `/` menu over the prompt: the commands (or an argument's values)
//! matching what was typed, the highlighted one first to take with Tab.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::text::fit;
use crate::tui::commands::complete::Suggestions;
use crate::tui::styles::Styles;

/// The most suggestions shown at once.
pub const MAX_ROWS: u16 = 8;

/// Draws `menu` in the rows just above `prompt`, within `room`.
pub fn render(
    menu: &Suggestions,
    selected: usize,
    prompt: Rect,
    room: Rect,
    buf: &mut Buffer,
    s: &Styles,
) {
    let rows = (menu.items.len() as u16)
        .min(MAX_ROWS)
        .min(prompt.y.saturating_sub(room.y));
    if rows == 0 {
        return;
    }
    let selected = selected.min(menu.items.len() - 1);
    let first = (selected + 1).saturating_sub(rows as usize);
    let label_width = menu
        .items
        .iter()
        .map(|i| unicode_width::UnicodeWidthStr::width(i.label.as_str()))
        .max()
        .unwrap_or(0)
        .min(40);
    let width = prompt.width as usize;
    for (i, item) in menu
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
    {
        let y = prompt.y - rows + (i - first) as u16;
        let style = if i == selected {
            s.focused_choice
        } else {
            s.text
        };
        let label = fit(&item.label, label_width);
        let pad = label_width.saturating_sub(unicode_width::UnicodeWidthStr::width(label.as_str()));
        let detail = fit(&item.detail, width.saturating_sub(label_width + 6));
        let line = Line::from(vec![
            Span::styled(format!("  {label}{}  ", " ".repeat(pad)), style),
            Span::styled(detail, s.dim),
        ]);
        buf.set_line(prompt.x, y, &line, prompt.width);
    }
}
