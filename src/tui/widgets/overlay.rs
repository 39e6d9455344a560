//! Drawing something over the screen (a dialog, a picker, help, the `/`
//! menu) so that nothing under it shows through: every row it covers is
//! cleared from edge to edge, and a wide character its edge would cut in
//! half becomes spaces.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthStr;

/// Marks a cell the overlay did not draw on (a private-use character no
/// widget writes).
const UNTOUCHED: &str = "\u{F8FF}";

/// Runs `draw` on a blank copy of the screen, then puts what it drew on
/// `buf`: the rows it touched are first cleared across `area` with `base`.
pub fn draw(buf: &mut Buffer, area: Rect, base: Style, draw: impl FnOnce(&mut Buffer)) {
    let mut scratch = Buffer::filled(buf.area, Cell::new(UNTOUCHED));
    draw(&mut scratch);
    let area = area.intersection(buf.area);
    for y in area.top()..area.bottom() {
        let touched = (area.left()..area.right()).any(|x| is_drawn(&scratch[(x, y)]));
        if !touched {
            continue;
        }
        for x in area.left()..area.right() {
            let cell = &scratch[(x, y)];
            let out = &mut buf[(x, y)];
            if is_drawn(cell) {
                *out = cell.clone();
                if out.symbol() == UNTOUCHED {
                    out.set_symbol(" ");
                }
                // A cell the overlay cleared keeps the theme's colours.
                crate::tui::styles::fill_reset(out, base);
            } else {
                out.reset();
                out.set_style(base);
            }
        }
        blank_cut_wide_chars(buf, area, y);
    }
}

fn is_drawn(cell: &Cell) -> bool {
    cell.symbol() != UNTOUCHED || cell.style() != Cell::new(UNTOUCHED).style()
}

/// A wide character whose second column holds something else (a border,
/// another glyph) or lies past the edge would be drawn half: spaces
/// instead.
fn blank_cut_wide_chars(buf: &mut Buffer, area: Rect, y: u16) {
    let mut x = area.left();
    while x < area.right() {
        let width = buf[(x, y)].symbol().width().max(1) as u16;
        if width > 1 {
            let covered = (1..width)
                .all(|k| x + k < area.right() && matches!(buf[(x + k, y)].symbol(), " " | ""));
            if !covered {
                buf[(x, y)].set_symbol(" ");
                x += 1;
                continue;
            }
        }
        x += width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::widgets::{Block, Borders, Widget};

    fn row(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect()
    }

    #[test]
    fn clears_the_rows_it_covers_and_never_halves_a_wide_char() {
        let area = Rect::new(0, 0, 12, 4);
        let mut buf = Buffer::empty(area);
        for y in 0..4 {
            buf.set_string(0, y, "漢字漢字漢字", Style::default());
        }
        draw(&mut buf, area, Style::default(), |b| {
            Block::default()
                .borders(Borders::ALL)
                .render(Rect::new(3, 1, 6, 2), b);
        });
        assert_eq!(row(&buf, 0), "漢 字 漢 字 漢 字 ");
        assert_eq!(row(&buf, 1), "   ┌────┐   ");
        assert_eq!(row(&buf, 2), "   └────┘   ");
        let mut wide = Buffer::empty(area);
        draw(&mut wide, area, Style::default(), |b| {
            b.set_string(0, 0, "ab漢", Style::default());
            b.set_string(3, 0, "│", Style::default());
        });
        assert!(row(&wide, 0).starts_with("ab │"), "{}", row(&wide, 0));
    }
}
