//! Diff colours for every colour depth, derived from the ones a theme
//! declares once (in truecolour).
//!
//! Plain nearest-colour quantisation fails diffs: the dark, desaturated
//! backgrounds of a dark theme (`#1f3324` green, `#3b2226` red) both land on
//! grey 235 in the 256-colour palette, and sixteen colours have no dark
//! shades at all. So each diff colour keeps its hue: at 256 colours it
//! becomes the nearest colour of the cube with the same dominant channel
//! (never a grey), at 16 the basic colour of its hue; additions and
//! deletions never share a background, and changed words never share one
//! with their row.

use ratatui::style::{Color, Modifier, Style};

use super::contrast::rgb_of as rgb;
use super::{CUBE, ColorDepth, Theme, dist};

/// The diff colours a theme declared, before adaptation.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    add_bg: Option<Color>,
    del_bg: Option<Color>,
    add_word: Option<Color>,
    del_word: Option<Color>,
}

impl Declared {
    pub fn of(theme: &Theme) -> Declared {
        Declared {
            add_bg: theme.diff_add_bg.bg,
            del_bg: theme.diff_del_bg.bg,
            add_word: theme.diff_add_word_bg.bg,
            del_word: theme.diff_del_word_bg.bg,
        }
    }
}

/// Replaces the adapted diff backgrounds of `theme` with hue-keeping ones
/// for `depth`.
pub fn derive(theme: &mut Theme, declared: &Declared, depth: ColorDepth) {
    match depth {
        ColorDepth::Ansi256 => derive_256(theme, declared),
        ColorDepth::Ansi16 => derive_16(theme, declared),
        ColorDepth::TrueColor | ColorDepth::NoColor => {}
    }
}

/// Which channel is strongest (0 red, 1 green, 2 blue).
fn dominant((r, g, b): (u8, u8, u8)) -> usize {
    if r >= g && r >= b {
        0
    } else if g >= b {
        1
    } else {
        2
    }
}

/// The nearest cube colour with the same dominant channel that is not a
/// grey, skipping `avoid`.
fn cube_like(c: (u8, u8, u8), avoid: &[u8]) -> Option<u8> {
    let want = dominant(c);
    (0..216u16)
        .filter_map(|n| {
            let n = n as usize;
            let cand = (CUBE[n / 36], CUBE[(n / 6) % 6], CUBE[n % 6]);
            let index = 16 + n as u8;
            let grey = cand.0 == cand.1 && cand.1 == cand.2;
            let channels = [cand.0, cand.1, cand.2];
            let strict = (0..3).all(|k| k == want || channels[k] < channels[want]);
            (!grey && strict && !avoid.contains(&index)).then_some((index, dist(c, cand)))
        })
        .min_by_key(|(_, d)| *d)
        .map(|(i, _)| i)
}

fn derive_256(theme: &mut Theme, d: &Declared) {
    let pick = |c: Option<Color>, fallback: (u8, u8, u8), avoid: &[u8]| {
        let source = c.and_then(rgb).unwrap_or(fallback);
        cube_like(source, avoid)
    };
    let Some(add) = pick(d.add_bg, (0, 95, 0), &[]) else {
        return;
    };
    let Some(del) = pick(d.del_bg, (95, 0, 0), &[add]) else {
        return;
    };
    let add_word = pick(d.add_word, (0, 135, 0), &[add, del]);
    let del_word = pick(
        d.del_word,
        (135, 0, 0),
        &[add, del, add_word.unwrap_or(add)],
    );
    theme.diff_add_bg.bg = Some(Color::Indexed(add));
    theme.diff_del_bg.bg = Some(Color::Indexed(del));
    if let (Some(a), Some(r)) = (add_word, del_word) {
        theme.diff_add_word_bg.bg = Some(Color::Indexed(a));
        theme.diff_del_word_bg.bg = Some(Color::Indexed(r));
    }
}

/// The basic colour nearest in hue, and its bright variant.
fn basic_of(c: (u8, u8, u8)) -> (Color, Color) {
    let (r, g, b) = (f32::from(c.0), f32::from(c.1), f32::from(c.2));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    if max - min < 1.0 {
        return (Color::DarkGray, Color::Gray);
    }
    let h = if max == r {
        60.0 * (((g - b) / (max - min)).rem_euclid(6.0))
    } else if max == g {
        60.0 * ((b - r) / (max - min) + 2.0)
    } else {
        60.0 * ((r - g) / (max - min) + 4.0)
    };
    match ((h + 30.0) / 60.0) as u32 % 6 {
        0 => (Color::Red, Color::LightRed),
        1 => (Color::Yellow, Color::LightYellow),
        2 => (Color::Green, Color::LightGreen),
        3 => (Color::Cyan, Color::LightCyan),
        4 => (Color::Blue, Color::LightBlue),
        _ => (Color::Magenta, Color::LightMagenta),
    }
}

/// Text that stays readable on a basic colour.
fn text_on(c: Color) -> Color {
    match c {
        Color::Red | Color::Blue | Color::Magenta | Color::DarkGray => Color::White,
        _ => Color::Black,
    }
}

fn derive_16(theme: &mut Theme, d: &Declared) {
    let hue = |c: Option<Color>, fallback| c.and_then(rgb).map_or(fallback, basic_of);
    let add = hue(d.add_bg, (Color::Green, Color::LightGreen));
    let mut del = hue(d.del_bg, (Color::Red, Color::LightRed));
    if del.0 == add.0 {
        del = if add.0 == Color::Red {
            (Color::Magenta, Color::LightMagenta)
        } else {
            (Color::Red, Color::LightRed)
        };
    }
    // Rows lay their own text colour on the background (syntax colours
    // give way at this depth); changed words take the bright shade.
    let row = |(bg, _): (Color, Color)| Style::default().bg(bg);
    let text = |(bg, _): (Color, Color)| Style::default().fg(text_on(bg));
    let word = |(_, bright): (Color, Color)| {
        Style::default()
            .bg(bright)
            .fg(Color::Black)
            .add_modifier(Modifier::BOLD)
    };
    theme.diff_add_bg = row(add);
    theme.diff_del_bg = row(del);
    theme.diff_add_fg = theme.diff_add_fg.patch(text(add));
    theme.diff_del_fg = theme.diff_del_fg.patch(text(del));
    theme.diff_add_word_bg = word(add);
    theme.diff_del_word_bg = word(del);
}

#[cfg(test)]
mod tests;
