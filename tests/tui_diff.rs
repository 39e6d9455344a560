//! Diff view: unified and side-by-side snapshots, folding, colours on the
//! rendered buffer, and robustness across widths and odd inputs.

use cairn::tui::highlight;
use cairn::tui::theme::{ColorDepth, Theme};
use cairn::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView};
use cairn::tui::wrap::spans_width;
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::text::{Line, Text};
use ratatui::widgets::Paragraph;

const OLD: &str = "use std::io;\n\nfn main() {\n    let name = \"world\";\n    println!(\"hello {}\", name);\n}\n\nfn helper() -> u32 {\n    1\n}\n\nfn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\nfn g() {}\nfn last() {}\n";
const NEW: &str = "use std::io;\n\nfn main() {\n    let name = \"cairn\";\n    println!(\"hello {}\", name);\n    helper();\n}\n\nfn helper() -> u32 {\n    1\n}\n\nfn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\nfn g() {}\nfn final_one() {}\n";

fn text(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|l| {
            let s: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            s.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn plain() -> DiffOptions {
    DiffOptions {
        highlight: false,
        ..DiffOptions::default()
    }
}

#[test]
fn unified_with_folding() {
    let d = DiffView::new("src/main.rs", OLD, NEW);
    assert_eq!((d.added(), d.removed()), (3, 2));
    insta::assert_snapshot!(text(&d.lines(
        80,
        DiffLayout::Unified,
        &Theme::dark(),
        plain()
    )));
}

#[test]
fn unified_without_folding_shows_everything() {
    let d = DiffView::new("src/main.rs", OLD, NEW);
    let opts = DiffOptions {
        fold: false,
        ..plain()
    };
    let lines = d.lines(80, DiffLayout::Unified, &Theme::dark(), opts);
    assert_eq!(lines.len(), OLD.lines().count() + 3);
    assert!(!text(&lines).contains("unchanged"));
}

#[test]
fn side_by_side() {
    let d = DiffView::new("src/main.rs", OLD, NEW);
    insta::assert_snapshot!(text(&d.lines(
        100,
        DiffLayout::SideBySide,
        &Theme::dark(),
        plain()
    )));
}

#[test]
fn narrow_wraps_long_lines() {
    let d = DiffView::new(
        "a.txt",
        "short\n",
        &format!("short\n{}\n", "word ".repeat(12)),
    );
    insta::assert_snapshot!(text(&d.lines(
        30,
        DiffLayout::Unified,
        &Theme::dark(),
        plain()
    )));
}

#[test]
fn layout_for_width() {
    assert_eq!(DiffLayout::for_width(159), DiffLayout::Unified);
    assert_eq!(DiffLayout::for_width(160), DiffLayout::SideBySide);
}

#[test]
fn new_file_is_all_additions() {
    let d = DiffView::new("new.py", "", "a = 1\nb = 2\n");
    assert_eq!((d.added(), d.removed()), (2, 0));
    let t = text(&d.lines(60, DiffLayout::Unified, &Theme::dark(), plain()));
    assert!(t.starts_with("@@ -0,0 +1,2 @@"), "{t}");
    assert!(t.contains("+ a = 1") && t.contains("+ b = 2"), "{t}");
}

#[test]
fn missing_trailing_newline_is_marked() {
    let d = DiffView::new("x", "a\nb", "a\nb\n");
    let t = text(&d.lines(60, DiffLayout::Unified, &Theme::dark(), plain()));
    assert!(
        t.contains("- b\n\\ No newline at end of file\n") && t.contains("+ b"),
        "{t}"
    );
}

#[test]
fn crlf_and_tabs_are_normalised() {
    let d = DiffView::new("x", "a\r\n\tb\r\n", "a\n\tb\n");
    assert!(d.is_unchanged());
    let d = DiffView::new("x", "\tx\n", "\ty\n");
    let t = text(&d.lines(60, DiffLayout::Unified, &Theme::dark(), plain()));
    assert!(t.contains("-     x") && !t.contains('\t'), "{t}");
}

/// Renders lines into a TestBackend buffer so colours can be read per cell.
fn buffer(lines: Vec<Line<'static>>, width: u16) -> ratatui::buffer::Buffer {
    let height = lines.len() as u16;
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| f.render_widget(Paragraph::new(Text::from(lines)), f.area()))
        .unwrap();
    term.backend().buffer().clone()
}

fn row_of(buf: &ratatui::buffer::Buffer, needle: &str) -> u16 {
    (0..buf.area.height)
        .find(|y| {
            let s: String = (0..buf.area.width).map(|x| buf[(x, *y)].symbol()).collect();
            s.contains(needle)
        })
        .unwrap_or_else(|| panic!("no row with {needle:?}"))
}

#[test]
fn added_and_removed_cells_carry_diff_backgrounds() {
    highlight::ensure_loaded();
    let theme = Theme::dark();
    let d = DiffView::new("src/main.rs", OLD, NEW);
    let buf = buffer(
        d.lines(80, DiffLayout::Unified, &theme, DiffOptions::default()),
        80,
    );
    let add_bg = theme.diff_add_bg.bg.unwrap();
    let del_bg = theme.diff_del_bg.bg.unwrap();
    let word_add = theme.diff_add_word_bg.bg.unwrap();
    let word_del = theme.diff_del_word_bg.bg.unwrap();

    let y = row_of(&buf, "helper();");
    // The whole added line, to the right edge, is on the add background.
    assert!((12..80).all(|x| buf[(x, y)].bg == add_bg), "row {y}");
    let y = row_of(&buf, "fn last() {}");
    assert!((12..80).all(|x| buf[(x, y)].bg == del_bg || buf[(x, y)].bg == word_del));

    // Only the changed word of a paired line is on the word background.
    let y = row_of(&buf, "\"cairn\"");
    let line: String = (0..80).map(|x| buf[(x, y)].symbol().to_string()).collect();
    let col = line.find("cairn").unwrap() as u16;
    assert_eq!(buf[(col, y)].bg, word_add);
    let let_col = line.find("let").unwrap() as u16;
    assert_eq!(buf[(let_col, y)].bg, add_bg);
    // Syntax colours sit under the diff background: the keyword differs
    // from the string.
    assert_ne!(buf[(let_col, y)].fg, buf[(col, y)].fg);
}

#[test]
fn side_by_side_cells_are_split() {
    let theme = Theme::dark();
    let d = DiffView::new("src/main.rs", OLD, NEW);
    let buf = buffer(d.lines(100, DiffLayout::SideBySide, &theme, plain()), 100);
    let y = row_of(&buf, "helper();");
    // An added line with no partner: filler on the left, add bg on the right.
    assert_ne!(buf[(10, y)].bg, theme.diff_add_bg.bg.unwrap());
    assert_eq!(buf[(95, y)].bg, theme.diff_add_bg.bg.unwrap());
}

#[test]
fn nocolor_diff_keeps_signs_and_drops_colour() {
    let theme = Theme::dark().adapt(ColorDepth::NoColor);
    let d = DiffView::new("src/main.rs", OLD, NEW);
    let lines = d.lines(80, DiffLayout::Unified, &theme, DiffOptions::default());
    for s in lines.iter().flat_map(|l| &l.spans) {
        assert_eq!((s.style.fg, s.style.bg), (None, None));
    }
    assert!(text(&lines).contains("+     helper();"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_width_any_input_fits(
        old in "([a-c \t\r\n]|日|é|\\{|\\}){0,120}",
        new in "([a-c \t\r\n]|日|é|\\{|\\}){0,120}",
        width in 1u16..200,
        side in any::<bool>(),
        fold in any::<bool>(),
    ) {
        let d = DiffView::new("f.rs", &old, &new);
        let layout = if side { DiffLayout::SideBySide } else { DiffLayout::Unified };
        let opts = DiffOptions { fold, context: 1, ..DiffOptions::default() };
        for line in d.lines(width, layout, &Theme::dark(), opts) {
            prop_assert!(spans_width(&line.spans) <= usize::from(width));
        }
    }
}

#[test]
fn sixteen_colours_mark_lines_by_text_colour() {
    highlight::ensure_loaded();
    let theme = Theme::dark().adapt(ColorDepth::Ansi16);
    let d = DiffView::new("src/main.rs", OLD, NEW);
    let lines = d.lines(80, DiffLayout::Unified, &theme, DiffOptions::default());
    let line = lines
        .iter()
        .find(|l| text(&[(*l).clone()]).contains("helper();"))
        .unwrap();
    let code = line
        .spans
        .iter()
        .find(|s| s.content.contains("helper"))
        .unwrap();
    assert_eq!(code.style.fg, theme.diff_add_fg.fg);
    assert!(code.style.fg.is_some());
}
