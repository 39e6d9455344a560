//! Wrapping to a width, the one place that does it: plain text here
//! (prompts, tool output, dialogs), styled prose and code in `spans`. Every
//! width is measured per grapheme cluster with `crate::text::width`.

mod spans;

pub use spans::{pad_to, spans_width, wrap_code, wrap_spans};

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use crate::text::grapheme_width;

/// Wraps `text` to `width` columns, breaking at spaces where it can and
/// inside words where it must. Tabs become four spaces; other control
/// characters are dropped so they cannot move the cursor.
pub fn wrap_plain(text: &str, width: u16, style: Style) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for raw in text.split('\n') {
        for row in wrap_str(raw.trim_end_matches('\r'), width as usize) {
            out.push(Line::from(Span::styled(row, style)));
        }
    }
    out
}

/// Same as `wrap_plain` with a prefix on the first row and an indent of the
/// same width on the rest (`› ` for prompts, `│ ` for tool output).
pub fn wrap_prefixed(
    text: &str,
    width: u16,
    first: Span<'static>,
    rest: Span<'static>,
    style: Style,
) -> Vec<Line<'static>> {
    let pw = first.width().max(rest.width()) as u16;
    let inner = width.saturating_sub(pw).max(1);
    wrap_plain(text, inner, style)
        .into_iter()
        .enumerate()
        .map(|(i, mut line)| {
            let p = if i == 0 { first.clone() } else { rest.clone() };
            line.spans.insert(0, p);
            line
        })
        .collect()
}

/// One line as it can be drawn: a tab becomes four spaces, other control
/// characters are dropped.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Splits one line (no newlines) into rows of at most `width` columns.
pub fn wrap_str(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let s = clean(s);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut row_w = 0usize;
    // Byte index in `row` just after the last space, to break there.
    let mut last_space: Option<usize> = None;
    for g in s.graphemes(true) {
        let gw = grapheme_width(g);
        if g == " " && row_w + gw > width {
            // A space at the edge ends the row and is not carried over.
            rows.push(std::mem::take(&mut row).trim_end().to_string());
            row_w = 0;
            last_space = None;
            continue;
        }
        if row_w + gw > width && !row.is_empty() {
            match last_space {
                Some(at) if at < row.len() => {
                    let tail = row.split_off(at);
                    rows.push(row.trim_end().to_string());
                    row = tail;
                }
                _ => rows.push(std::mem::take(&mut row)),
            }
            row_w = crate::text::width(&row);
            last_space = None;
        }
        row.push_str(g);
        row_w += gw;
        if g == " " {
            last_space = Some(row.len());
        }
    }
    rows.push(row);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_and_splits_long_words() {
        assert_eq!(wrap_str("hello big world", 9), vec!["hello big", "world"]);
        assert_eq!(wrap_str("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap_str("", 4), vec![""]);
        assert_eq!(wrap_str("a\tb", 10), vec!["a    b"]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        assert_eq!(
            wrap_str("日本語テキスト", 6),
            vec!["日本語", "テキス", "ト"]
        );
    }

    #[test]
    fn a_combining_accent_stays_with_its_letter() {
        assert_eq!(wrap_str("cafe\u{301}s", 4), vec!["cafe\u{301}", "s"]);
    }
}
