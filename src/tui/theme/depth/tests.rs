use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

use super::*;
use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView};

/// Every theme shipped in `themes/`, by file.
fn shipped() -> Vec<(String, Theme)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let theme = Theme::load(&name, Some(&dir)).unwrap();
            out.push((name, theme));
        }
    }
    assert!(out.len() >= 3, "{out:?}", out = out.len());
    out
}

/// Background of the cell where `needle` starts on the row that has it.
fn bg_at(buf: &Buffer, needle: &str) -> Option<Color> {
    for y in 0..buf.area.height {
        let row: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let text: String = row.concat();
        if let Some(at) = text.find(needle) {
            let col = text[..at].chars().count() as u16;
            return buf[(col, y)].bg.into();
        }
    }
    panic!("{needle} not drawn")
}

fn draw(theme: &Theme) -> Buffer {
    let view = DiffView::new(
        "a.rs",
        "fn keep() {}\nlet total = 1;\n",
        "fn keep() {}\nlet total = 2;\n",
    );
    let opts = DiffOptions {
        highlight: false,
        ..DiffOptions::default()
    };
    let lines = view.lines(60, DiffLayout::Unified, theme, opts);
    let mut buf = Buffer::empty(Rect::new(0, 0, 60, lines.len() as u16));
    for (y, l) in lines.iter().enumerate() {
        buf.set_line(0, y as u16, l, 60);
    }
    buf
}

fn hue(c: Color) -> usize {
    dominant(rgb(c).unwrap())
}

#[test]
fn added_and_deleted_rows_differ_in_background_at_256_and_16_colours() {
    for (name, theme) in shipped() {
        let declared = Declared::of(&theme);
        for depth in [
            ColorDepth::TrueColor,
            ColorDepth::Ansi256,
            ColorDepth::Ansi16,
        ] {
            let t = theme.clone().adapt(depth);
            let buf = draw(&t);
            let del_row = bg_at(&buf, "- let").filter(|c| *c != Color::Reset);
            let add_row = bg_at(&buf, "+ let").filter(|c| *c != Color::Reset);
            let del_word = bg_at(&buf, "1;");
            let add_word = bg_at(&buf, "2;");
            let at = format!("{name} at {depth:?}");
            assert!(
                del_row.is_some() && add_row.is_some(),
                "{at}: no row colour"
            );
            assert_ne!(add_row, del_row, "{at}: + and - rows look the same");
            assert_ne!(add_word, add_row, "{at}: changed words vanish in + rows");
            assert_ne!(del_word, del_row, "{at}: changed words vanish in - rows");
            assert_ne!(add_word, del_word, "{at}");
            // The hue the theme chose survives (green stays green).
            for (got, want) in [(add_row, declared.add_bg), (del_row, declared.del_bg)] {
                if let (Some(got), Some(want)) = (got, want) {
                    assert_eq!(hue(got), hue(want), "{at}: {got:?} for {want:?}");
                }
            }
        }
    }
}

#[test]
fn the_dark_theme_keeps_green_and_red_where_quantising_gave_grey() {
    let t = Theme::dark().adapt(ColorDepth::Ansi256);
    assert_eq!(t.diff_add_bg.bg, Some(Color::Indexed(22)));
    assert_eq!(t.diff_del_bg.bg, Some(Color::Indexed(52)));
    let t = Theme::dark().adapt(ColorDepth::Ansi16);
    assert_eq!(t.diff_add_bg.bg, Some(Color::Green));
    assert_eq!(t.diff_del_bg.bg, Some(Color::Red));
}
