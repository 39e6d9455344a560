//! Text helpers every layer shares: display width (per grapheme cluster, as
//! terminals lay out cells), cutting to a width or a number of characters,
//! first lines and one-line summaries.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The ellipsis that marks a cut.
pub const ELLIPSIS: char = '…';

/// Display width of `s` in terminal columns, control characters excluded.
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    s.graphemes(true).map(grapheme_width).sum()
}

/// Columns one grapheme cluster takes (0 for control characters).
pub fn grapheme_width(g: &str) -> usize {
    if g.chars().all(char::is_control) {
        0
    } else {
        g.width()
    }
}

/// At most `max` columns of `s`, cut between graphemes, no marker.
pub fn clip(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut w = 0;
    for g in s.graphemes(true) {
        let gw = grapheme_width(g);
        if w + gw > max {
            break;
        }
        w += gw;
        out.push_str(g);
    }
    out
}

/// At most `max` columns of `s`, ending with `…` when cut.
pub fn fit(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = clip(s, max.saturating_sub(1));
    if max > 0 {
        out.push(ELLIPSIS);
    }
    out
}

/// The first `max` characters of `s`, no marker.
pub fn take_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// The first `max` characters of `s`, followed by `…` when it was longer.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}{ELLIPSIS}", &s[..at]),
    }
}

/// Keeps the first and last `max / 2` characters of a long text and says
/// how many were cut from the middle.
pub fn truncate_middle(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let half = max / 2;
    let head_end = text.char_indices().nth(half).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - half)
        .map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n\n[... {} characters cut from the middle of the output ...]\n\n{}",
        &text[..head_end],
        total - 2 * half,
        &text[tail_start..]
    )
}

/// The word for one or for many, as `n` needs: `plural(1, "line",
/// "lines")` is "line".
pub fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// The first line of `s` that is not blank, trimmed.
pub fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// The first line of `s`, trimmed and cut to `max` characters, with `…`
/// when anything was left out (the rest of the line or more lines).
pub fn first_line_marked(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    let short = take_chars(line, max);
    if short.len() < line.len() || s.trim().lines().count() > 1 {
        format!("{short}{ELLIPSIS}")
    } else {
        short
    }
}

/// `s` on one line: runs of whitespace (newlines included) become a space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_say_one_and_many() {
        assert_eq!(plural(1, "line", "lines"), "line");
        assert_eq!(plural(0, "line", "lines"), "lines");
        assert_eq!(plural(3, "session", "sessions"), "sessions");
    }

    #[test]
    fn widths_count_columns_per_grapheme() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1, "a combining accent adds nothing");
        assert_eq!(width("a\x1bb"), 2, "control characters take no column");
    }

    #[test]
    fn fits_with_an_ellipsis_and_clips_without() {
        assert_eq!(fit("cargo test --all", 8), "cargo t…");
        assert_eq!(fit("short", 8), "short");
        assert_eq!(fit("日本語", 4), "日…");
        assert_eq!(clip("日本語", 5), "日本");
    }

    #[test]
    fn cuts_by_characters() {
        assert_eq!(truncate_chars("héllo", 2), "hé…");
        assert_eq!(truncate_chars("hé", 2), "hé");
        assert_eq!(take_chars("héllo", 3), "hél");
    }

    #[test]
    fn keeps_head_and_tail_of_long_output() {
        let t = truncate_middle(&"a".repeat(10), 4);
        assert!(t.starts_with("aa\n") && t.ends_with("\naa"), "{t}");
        assert!(t.contains("6 characters cut"), "{t}");
        assert_eq!(truncate_middle("short", 10), "short");
    }

    #[test]
    fn first_lines_and_one_line() {
        assert_eq!(first_line("\n  \n  hello \nworld"), "hello");
        assert_eq!(first_line_marked("ls\npwd", 10), "ls…");
        assert_eq!(first_line_marked("abcdef", 3), "abc…");
        assert_eq!(first_line_marked("ls", 3), "ls");
        assert_eq!(one_line(" a\n b\t c "), "a b c");
    }
}
