//! Turning cell updates into the fewest bytes: cursor moves only where the
//! next cell is not where the cursor already is, and one SGR sequence that
//! carries only what changed since the last cell written.

use std::io::Write;

use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

/// The terminal's pen and cursor as the bytes written so far leave them.
/// Between frames the pen is always the default one.
pub struct Encoder {
    pub bytes: Vec<u8>,
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
    /// Where the cursor is, when that is known for sure.
    at: Option<(u16, u16)>,
    width: u16,
}

impl Encoder {
    pub fn new(bytes: Vec<u8>, width: u16, at: Option<(u16, u16)>) -> Encoder {
        Encoder {
            bytes,
            fg: Color::Reset,
            bg: Color::Reset,
            underline: Color::Reset,
            modifier: Modifier::empty(),
            at,
            width,
        }
    }

    pub fn cursor(&self) -> Option<(u16, u16)> {
        self.at
    }

    /// The cursor's place is no longer known (after a scroll region was set
    /// or reset, which homes the cursor on some terminals and not others).
    pub fn forget_cursor(&mut self) {
        self.at = None;
    }

    /// The bytes written so far put the cursor at `(x, y)`.
    pub fn cursor_known_at(&mut self, x: u16, y: u16) {
        self.at = Some((x, y));
    }

    pub fn raw(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// Back to the default pen, so erased or scrolled-in rows are blank in
    /// the default colours.
    pub fn reset_pen(&mut self) {
        if self.fg != Color::Reset
            || self.bg != Color::Reset
            || self.underline != Color::Reset
            || !self.modifier.is_empty()
        {
            self.raw("\x1b[0m");
            self.fg = Color::Reset;
            self.bg = Color::Reset;
            self.underline = Color::Reset;
            self.modifier = Modifier::empty();
        }
    }

    pub fn move_to(&mut self, x: u16, y: u16) {
        match self.at {
            Some(at) if at == (x, y) => {}
            Some((cx, cy)) if cy == y && x > cx => {
                let n = x - cx;
                if n == 1 {
                    self.raw("\x1b[C");
                } else {
                    let _ = write!(self.bytes, "\x1b[{n}C");
                }
            }
            _ if x == 0 => {
                let _ = write!(self.bytes, "\x1b[{}H", y + 1);
            }
            _ => {
                let _ = write!(self.bytes, "\x1b[{};{}H", y + 1, x + 1);
            }
        }
        self.at = Some((x, y));
    }

    /// Writes one cell at its place.
    pub fn cell(&mut self, x: u16, y: u16, cell: &Cell) {
        self.move_to(x, y);
        self.pen(cell);
        let symbol = cell.symbol();
        // Nothing a model wrote may move the cursor or change modes.
        let safe = !symbol.chars().any(char::is_control);
        let symbol = if safe { symbol } else { " " };
        self.bytes.extend_from_slice(symbol.as_bytes());
        let single = symbol.chars().nth(1).is_none();
        let width = symbol.width() as u16;
        // A terminal may measure a cluster or a wide character differently:
        // after one, the next cell is reached with an absolute move. At the
        // last column the cursor waits to wrap; the same.
        self.at = match (single && width == 1, x.saturating_add(1)) {
            (true, next) if next < self.width => Some((next, y)),
            _ => None,
        };
    }

    /// The pen `cell` needs. A blank shows only its background (and the
    /// few attributes visible on a blank), so for it the rest of the pen is
    /// left as it is rather than changed for nothing.
    fn target(&self, cell: &Cell) -> (Color, Color, Color, Modifier) {
        if is_blank(cell) {
            (
                self.fg,
                cell.bg,
                self.underline,
                self.modifier - VISIBLE_ON_BLANK,
            )
        } else {
            (cell.fg, cell.bg, underline_color(cell), cell.modifier)
        }
    }

    /// Blanks `n` cells from `(x, y)` in the pen of `blank` (a cell with
    /// the default background): to the end of the row when `to_end`. The
    /// cursor stays where it is.
    pub fn erase(&mut self, x: u16, y: u16, n: u16, blank: &Cell, to_end: bool) {
        self.move_to(x, y);
        self.pen(blank);
        if to_end {
            self.raw("\x1b[K");
        } else {
            let _ = write!(self.bytes, "\x1b[{n}X");
        }
    }

    /// Whether `cell` is drawn right with the pen as it is.
    pub fn pen_matches(&self, cell: &Cell) -> bool {
        self.target(cell) == (self.fg, self.bg, self.underline, self.modifier)
    }

    /// Sets the pen for `cell` in one SGR sequence, naming only what changed.
    fn pen(&mut self, cell: &Cell) {
        if self.pen_matches(cell) {
            return;
        }
        let (fg, bg, underline, modifier) = self.target(cell);
        let mut params: Vec<String> = Vec::new();
        let removed = self.modifier - modifier;
        let mut added = modifier - self.modifier;
        if removed.intersects(Modifier::BOLD | Modifier::DIM) {
            params.push("22".into());
            added |= modifier & (Modifier::BOLD | Modifier::DIM);
        }
        if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
            params.push("25".into());
            added |= modifier & (Modifier::SLOW_BLINK | Modifier::RAPID_BLINK);
        }
        for (m, off) in [
            (Modifier::ITALIC, "23"),
            (Modifier::UNDERLINED, "24"),
            (Modifier::REVERSED, "27"),
            (Modifier::HIDDEN, "28"),
            (Modifier::CROSSED_OUT, "29"),
        ] {
            if removed.contains(m) {
                params.push(off.into());
            }
        }
        for (m, on) in [
            (Modifier::BOLD, "1"),
            (Modifier::DIM, "2"),
            (Modifier::ITALIC, "3"),
            (Modifier::UNDERLINED, "4"),
            (Modifier::SLOW_BLINK, "5"),
            (Modifier::RAPID_BLINK, "6"),
            (Modifier::REVERSED, "7"),
            (Modifier::HIDDEN, "8"),
            (Modifier::CROSSED_OUT, "9"),
        ] {
            if added.contains(m) {
                params.push(on.into());
            }
        }
        if fg != self.fg {
            params.push(color_param(fg, Layer::Fg));
        }
        if bg != self.bg {
            params.push(color_param(bg, Layer::Bg));
        }
        if underline != self.underline {
            params.push(color_param(underline, Layer::Underline));
        }
        let _ = write!(self.bytes, "\x1b[{}m", params.join(";"));
        self.fg = fg;
        self.bg = bg;
        self.underline = underline;
        self.modifier = modifier;
    }
}

/// Attributes a terminal shows on a blank cell.
pub const VISIBLE_ON_BLANK: Modifier = Modifier::UNDERLINED
    .union(Modifier::REVERSED)
    .union(Modifier::CROSSED_OUT)
    .union(Modifier::SLOW_BLINK)
    .union(Modifier::RAPID_BLINK);

/// A space whose look is its background alone.
pub fn is_blank(cell: &Cell) -> bool {
    cell.symbol() == " " && !cell.modifier.intersects(VISIBLE_ON_BLANK)
}

fn underline_color(cell: &Cell) -> Color {
    cell.underline_color
}

#[derive(Clone, Copy)]
enum Layer {
    Fg,
    Bg,
    Underline,
}

/// The SGR parameters for a colour, as crossterm names them.
fn color_param(color: Color, layer: Layer) -> String {
    let (base, bright, extended, reset) = match layer {
        Layer::Fg => (30, 90, 38, 39),
        Layer::Bg => (40, 100, 48, 49),
        Layer::Underline => (0, 0, 58, 59),
    };
    let named = |n: u8| -> Option<u16> {
        // The underline colour has no short names: use the 256-colour form.
        match layer {
            Layer::Underline => None,
            _ if n < 8 => Some(base + u16::from(n)),
            _ => Some(bright + u16::from(n - 8)),
        }
    };
    let index = match color {
        Color::Reset => return reset.to_string(),
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Indexed(i) => return format!("{extended};5;{i}"),
        Color::Rgb(r, g, b) => return format!("{extended};2;{r};{g};{b}"),
    };
    match named(index) {
        Some(code) => code.to_string(),
        None => format!("{extended};5;{index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    fn styled(symbol: &'static str, style: Style) -> Cell {
        let mut c = Cell::new(symbol);
        c.set_style(style);
        c
    }

    #[test]
    fn contiguous_cells_need_one_move_and_one_pen() {
        let mut e = Encoder::new(Vec::new(), 80, None);
        let red = Style::default().fg(Color::Red);
        e.cell(3, 1, &styled("a", red));
        e.cell(4, 1, &styled("b", red));
        e.cell(7, 1, &styled("c", red));
        e.cell(0, 2, &Cell::new("d"));
        assert_eq!(
            String::from_utf8(e.bytes).unwrap(),
            "\x1b[2;4H\x1b[31mab\x1b[2Cc\x1b[3H\x1b[39md"
        );
    }

    #[test]
    fn dropping_bold_keeps_dim_and_names_only_changes() {
        let mut e = Encoder::new(Vec::new(), 80, Some((0, 0)));
        let both = Style::default().add_modifier(Modifier::BOLD | Modifier::DIM);
        e.cell(0, 0, &styled("a", both));
        e.cell(
            1,
            0,
            &styled("b", Style::default().add_modifier(Modifier::DIM)),
        );
        e.cell(2, 0, &styled("c", Style::default().bg(Color::Rgb(1, 2, 3))));
        assert_eq!(
            String::from_utf8(e.bytes).unwrap(),
            "\x1b[1;2ma\x1b[22;2mb\x1b[22;48;2;1;2;3mc"
        );
    }

    #[test]
    fn wide_characters_and_the_last_column_forget_the_cursor() {
        let mut e = Encoder::new(Vec::new(), 4, None);
        e.cell(0, 0, &Cell::new("字"));
        assert_eq!(e.cursor(), None);
        e.cell(3, 0, &Cell::new("x"));
        assert_eq!(e.cursor(), None);
        e.cell(1, 1, &Cell::new("\x1b"));
        assert!(String::from_utf8(e.bytes).unwrap().ends_with("\x1b[2;2H "));
    }
}
