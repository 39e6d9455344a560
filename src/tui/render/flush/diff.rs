//! Which cells to write, row by row, so the terminal ends up showing the
//! wanted frame.
//!
//! Like ratatui's own diff, a cell equal to what is shown is not written.
//! Unlike it, wide characters are followed through what the terminal does
//! to them: writing over either half of a wide character blanks the other
//! half with the current pen, so every column a replaced wide character
//! covered is written again. And short gaps between changed cells are
//! filled with the wanted text when that is cheaper than a cursor move.

use ratatui::buffer::{Buffer, Cell, CellDiffOption, CellWidth};

use ratatui::style::Color;

use super::encode::{Encoder, is_blank};

/// A gap this wide or narrower costs fewer bytes written than jumped.
const FILL_GAP: u16 = 3;
/// Blank runs to the end of a row this long are erased (`CSI K`), and
/// runs this long elsewhere (`CSI n X`), instead of written as spaces.
const ERASE_TO_END: u16 = 4;
const ERASE_CHARS: u16 = 10;

/// How many cells from `(x, y)` on are blanks with the default
/// background, which an erase leaves exactly as wanted on any terminal.
fn erasable_run(want: &Buffer, x: u16, y: u16) -> u16 {
    (x..want.area.width)
        .take_while(|&p| {
            let c = &want[(p, y)];
            !is_skip(c) && is_blank(c) && c.bg == Color::Reset
        })
        .count() as u16
}

fn width(cell: &Cell) -> u16 {
    cell.cell_width()
}

#[allow(deprecated)]
fn is_skip(cell: &Cell) -> bool {
    cell.skip || cell.diff_option == CellDiffOption::Skip
}

/// Writes into `e` every cell of `want` that `shown` does not already show.
/// Both buffers have the same area.
pub fn write_changes(e: &mut Encoder, shown: &Buffer, want: &Buffer) {
    let area = want.area;
    for y in 0..area.height {
        // Columns before this one must be written whatever `shown` says.
        let mut forced_until = 0u16;
        let mut x = 0u16;
        while x < area.width {
            let cell = &want[(x, y)];
            let span = width(cell).max(1);
            let equal = cell == &shown[(x, y)];
            if is_skip(cell) || (equal && x >= forced_until) {
                x += span;
                continue;
            }
            let erased = erasable_run(want, x, y);
            let to_end = x + erased == area.width;
            let span = if (to_end && erased >= ERASE_TO_END) || erased >= ERASE_CHARS {
                erased
            } else {
                span
            };
            // Everything a shown wide character under these cells covers
            // gets blanked by the terminal: rewrite it.
            for p in x..(x + span).min(area.width) {
                let under = width(&shown[(p, y)]);
                if under > 1 {
                    forced_until = forced_until.max(p + under);
                }
            }
            if span == erased && erased > 1 {
                e.erase(x, y, erased, cell, to_end);
            } else {
                fill_gap(e, want, x, y);
                e.cell(x, y, cell);
            }
            x += span;
        }
    }
}

/// Writes the wanted cells between the cursor and `(x, y)` instead of
/// moving over them, when they are few, narrow and in the current pen.
fn fill_gap(e: &mut Encoder, want: &Buffer, x: u16, y: u16) {
    let Some((cx, cy)) = e.cursor() else { return };
    if cy != y || cx >= x || x - cx > FILL_GAP {
        return;
    }
    let plain = (cx..x).all(|p| {
        let c = &want[(p, y)];
        !is_skip(c) && width(c) == 1 && c.symbol().len() == 1 && e.pen_matches(c)
    });
    if plain {
        for p in cx..x {
            e.cell(p, y, &want[(p, y)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::{Modifier, Style};

    fn written(shown: &Buffer, want: &Buffer) -> String {
        let mut e = Encoder::new(Vec::new(), want.area.width, None);
        write_changes(&mut e, shown, want);
        String::from_utf8(e.bytes).unwrap()
    }

    #[test]
    fn replacing_a_wide_character_rewrites_both_its_columns() {
        let area = Rect::new(0, 0, 6, 1);
        let mut shown = Buffer::empty(area);
        let dim = Style::default().add_modifier(Modifier::DIM);
        shown.set_string(0, 0, "ab字", dim);
        let mut want = Buffer::empty(area);
        want.set_string(0, 0, "abc", dim);
        assert_eq!(written(&shown, &want), "\x1b[1;3H\x1b[2mc ");
    }

    #[test]
    fn a_short_gap_is_written_through_and_a_long_one_jumped() {
        let area = Rect::new(0, 0, 20, 1);
        let mut shown = Buffer::empty(area);
        shown.set_string(0, 0, "one two three", Style::default());
        let mut want = Buffer::empty(area);
        want.set_string(0, 0, "One Two three    X", Style::default());
        assert_eq!(written(&shown, &want), "\x1b[1HOne T\x1b[12CX");
    }
}
