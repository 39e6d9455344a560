//! How readable one colour is on another: WCAG relative luminance and
//! contrast ratio, and whether a background counts as light.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use super::{ANSI16, index_to_rgb};

/// The least contrast a glyph keeps with the cell behind it: what WCAG
/// asks of large text and of the parts of an interface a person must see.
pub const MIN_RATIO: f64 = 3.0;

/// Relative luminance (0 black … 1 white) of an sRGB colour.
pub fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// The contrast ratio of two colours, 1 (same) to 21 (black on white).
pub fn ratio(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// A background black text reads better on than white text does.
pub fn is_light(bg: (u8, u8, u8)) -> bool {
    ratio(bg, (0, 0, 0)) > ratio(bg, (255, 255, 255))
}

/// The red, green and blue a cell colour shows as, in xterm's palette;
/// `None` for the terminal's own default colour.
pub fn rgb_of(c: Color) -> Option<(u8, u8, u8)> {
    match c {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some((r, g, b)),
        Color::Indexed(i) => Some(index_to_rgb(i)),
        named => ANSI16.iter().find(|(n, _)| *n == named).map(|(_, v)| *v),
    }
}

/// Gives every glyph that would not stand out from its background black or
/// white text instead, whichever reads better: a syntax colour on a diff
/// row, a theme colour on a terminal of the other kind. Cells drawn in the
/// terminal's own colours are judged against `terminal_bg` when the
/// terminal reported it, and left alone when it did not.
pub fn keep_legible(buf: &mut Buffer, terminal_bg: Option<(u8, u8, u8)>) {
    let default_fg = terminal_bg.map(|bg| {
        if is_light(bg) {
            (0, 0, 0)
        } else {
            (229, 229, 229)
        }
    });
    // Neighbouring cells mostly share their colours: judge each pair once.
    let mut last: Option<((Color, Color, bool), Option<Color>)> = None;
    for cell in buf.content.iter_mut() {
        if cell.symbol().trim().is_empty() {
            continue;
        }
        let reversed = cell.modifier.contains(Modifier::REVERSED);
        let key = (cell.fg, cell.bg, reversed);
        let fix = match last {
            Some((k, fix)) if k == key => fix,
            _ => {
                let fix = replacement(key, default_fg, terminal_bg);
                last = Some((key, fix));
                fix
            }
        };
        if let Some(c) = fix {
            if reversed {
                cell.bg = c;
            } else {
                cell.fg = c;
            }
        }
    }
}

/// The text colour a cell needs instead of its own, if it needs one.
fn replacement(
    (fg, bg, reversed): (Color, Color, bool),
    default_fg: Option<(u8, u8, u8)>,
    default_bg: Option<(u8, u8, u8)>,
) -> Option<Color> {
    let (text, back) = if reversed { (bg, fg) } else { (fg, bg) };
    let (text_default, back_default) = if reversed {
        (default_bg, default_fg)
    } else {
        (default_fg, default_bg)
    };
    let text = rgb_of(text).or(text_default)?;
    let back = rgb_of(back).or(back_default)?;
    if ratio(text, back) >= MIN_RATIO {
        return None;
    }
    Some(if ratio((0, 0, 0), back) >= ratio((255, 255, 255), back) {
        Color::Black
    } else {
        Color::White
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_on_white_is_the_widest_contrast() {
        assert!((ratio((0, 0, 0), (255, 255, 255)) - 21.0).abs() < 0.01);
        assert!((ratio((90, 90, 90), (90, 90, 90)) - 1.0).abs() < 0.01);
        assert!(is_light((255, 255, 255)) && is_light((240, 230, 200)));
        assert!(!is_light((0, 0, 0)) && !is_light((40, 44, 52)));
        assert_eq!(rgb_of(Color::Indexed(231)), Some((255, 255, 255)));
        assert_eq!(rgb_of(Color::Reset), None);
    }

    #[test]
    fn only_glyphs_that_vanish_get_black_or_white() {
        let area = ratatui::layout::Rect::new(0, 0, 4, 1);
        let mut buf = Buffer::empty(area);
        let grey = Color::Rgb(150, 150, 150);
        buf[(0, 0)]
            .set_symbol("a")
            .set_fg(grey)
            .set_bg(Color::Rgb(170, 170, 170));
        buf[(1, 0)]
            .set_symbol("b")
            .set_fg(Color::Rgb(20, 20, 20))
            .set_bg(grey);
        buf[(2, 0)].set_symbol("c").set_fg(Color::Yellow);
        buf[(3, 0)].set_symbol("d").set_fg(Color::Yellow);
        let mut unknown = buf.clone();
        keep_legible(&mut buf, Some((255, 255, 255)));
        assert_eq!(buf[(0, 0)].fg, Color::Black);
        assert_eq!(buf[(1, 0)].fg, Color::Rgb(20, 20, 20));
        assert_eq!(buf[(2, 0)].fg, Color::Black);
        keep_legible(&mut unknown, None);
        assert_eq!(unknown[(2, 0)].fg, Color::Yellow);
        assert_eq!(unknown[(0, 0)].fg, Color::Black);
    }
}
