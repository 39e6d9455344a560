//! Wrapping of styled spans: prose (markdown) and code (markdown code
//! blocks, the diff view).
//!
//! Widths are measured per grapheme cluster (`crate::text::width`), as
//! ratatui lays out cells, so CJK and emoji take the columns they really
//! occupy.

use crate::text::{grapheme_width, width as str_width};
use ratatui::style::Style;
use ratatui::text::Span;
use unicode_segmentation::UnicodeSegmentation;

/// A grapheme wider than the whole line (a CJK character in one column)
/// cannot be shown; an ellipsis stands in for it.
fn fit_grapheme(g: &str, width: usize) -> (&str, usize) {
    let w = grapheme_width(g);
    if w > width { ("…", 1) } else { (g, w) }
}

fn push_merged(line: &mut Vec<Span<'static>>, style: Style, text: &str) {
    match line.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(text),
        _ => line.push(Span::styled(text.to_string(), style)),
    }
}

fn trim_trailing_spaces(line: &mut Vec<Span<'static>>) {
    while let Some(last) = line.last_mut() {
        let kept = last.content.trim_end_matches(' ').len();
        if kept == 0 {
            line.pop();
        } else {
            last.content.to_mut().truncate(kept);
            break;
        }
    }
}

/// Width of a row of spans.
pub fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Pads `row` with spaces in `style` up to `width` columns.
pub fn pad_to(row: &mut Vec<Span<'static>>, width: usize, style: Style) {
    let w = spans_width(row);
    if w < width {
        row.push(Span::styled(" ".repeat(width - w), style));
    }
}

struct Wrapper {
    width: usize,
    lines: Vec<Vec<Span<'static>>>,
    cur: Vec<Span<'static>>,
    cur_w: usize,
}

impl Wrapper {
    fn newline(&mut self) {
        trim_trailing_spaces(&mut self.cur);
        self.lines.push(std::mem::take(&mut self.cur));
        self.cur_w = 0;
    }

    fn word(&mut self, style: Style, word: &str, w: usize) {
        if self.cur_w + w <= self.width {
            push_merged(&mut self.cur, style, word);
            self.cur_w += w;
            return;
        }
        if w <= self.width {
            self.newline();
            push_merged(&mut self.cur, style, word);
            self.cur_w = w;
            return;
        }
        // Longer than a whole line: break it between graphemes.
        for g in word.graphemes(true) {
            let (g, gw) = fit_grapheme(g, self.width);
            if self.cur_w + gw > self.width && self.cur_w > 0 {
                self.newline();
            }
            push_merged(&mut self.cur, style, g);
            self.cur_w += gw;
        }
    }
}

/// Greedy word wrap of prose: breaks at spaces and beside wide (CJK)
/// characters, splits words longer than a line, drops spaces at breaks, and
/// honours '\n' as a hard break. Never returns an empty list.
pub fn wrap_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Vec<Span<'static>>> {
    let mut w = Wrapper {
        width: width.max(1),
        lines: Vec::new(),
        cur: Vec::new(),
        cur_w: 0,
    };
    for span in &spans {
        let style = span.style;
        let text: &str = &span.content;
        let mut word_start: Option<usize> = None;
        let mut word_w = 0;
        let mut step = |i: usize, g: &str, gw: usize| {
            let is_space = g == " ";
            let is_break = g == "\n" || g == "\r\n";
            let is_wide = gw >= 2;
            if (is_space || is_break || is_wide || gw == 0)
                && let Some(s) = word_start.take()
            {
                w.word(style, &text[s..i], word_w);
                word_w = 0;
            }
            if is_break {
                w.newline();
            } else if is_space {
                if w.cur_w == 0 {
                    return;
                }
                if w.cur_w < w.width {
                    push_merged(&mut w.cur, style, " ");
                    w.cur_w += 1;
                } else {
                    w.newline();
                }
            } else if is_wide {
                w.word(style, g, gw);
            } else if gw != 0 {
                // (Width 0: control characters would corrupt the terminal;
                // combining marks are part of their grapheme already.)
                word_start.get_or_insert(i);
                word_w += gw;
            }
        };
        if text.is_ascii() {
            // Every byte is its own grapheme: skip segmentation, the hot path.
            for (i, b) in text.bytes().enumerate() {
                let gw = usize::from(!b.is_ascii_control());
                step(i, &text[i..i + 1], gw);
            }
        } else {
            for (i, g) in text.grapheme_indices(true) {
                step(i, g, grapheme_width(g));
            }
        }
        if let Some(s) = word_start {
            w.word(style, &text[s..], word_w);
        }
    }
    trim_trailing_spaces(&mut w.cur);
    if !w.cur.is_empty() || w.lines.is_empty() {
        w.lines.push(w.cur);
    }
    w.lines
}

fn breaks_after(g: &str) -> bool {
    matches!(
        g,
        " " | ","
            | ";"
            | "("
            | ")"
            | "["
            | "]"
            | "{"
            | "}"
            | "."
            | ":"
            | "="
            | "&"
            | "|"
            | "/"
            | "-"
    )
}

/// Wraps one line of code, keeping every character (indentation matters).
/// Breaks after a space or punctuation when one lies in the second half of
/// the line, else between graphemes. Continuation rows start with `marker`
/// when the width leaves room for it.
pub fn wrap_code(
    spans: Vec<Span<'static>>,
    width: usize,
    marker: Option<Span<'static>>,
) -> Vec<Vec<Span<'static>>> {
    let width = width.max(1);
    let gs: Vec<(Style, &str, usize)> = spans
        .iter()
        .flat_map(|s| {
            s.content
                .graphemes(true)
                .map(move |g| (s.style, fit_grapheme(g, width)))
        })
        .map(|(st, (g, w))| (st, g, w))
        .filter(|(_, _, w)| *w > 0)
        .collect();
    let total: usize = gs.iter().map(|g| g.2).sum();
    if total <= width {
        return vec![
            spans
                .into_iter()
                .filter(|s| !s.content.is_empty())
                .collect(),
        ];
    }
    let marker = marker.filter(|m| str_width(&m.content) * 2 < width);
    let marker_w = marker.as_ref().map_or(0, |m| str_width(&m.content));
    let mut out = Vec::new();
    let mut start = 0;
    while start < gs.len() {
        let limit = if start == 0 { width } else { width - marker_w };
        let mut end = start;
        let mut used = 0;
        while end < gs.len() && (used + gs[end].2 <= limit || end == start) {
            used += gs[end].2;
            end += 1;
        }
        if end < gs.len() {
            let mut w_at = used;
            let mut i = end;
            while i > start + 1 && w_at * 2 >= limit {
                if breaks_after(gs[i - 1].1) {
                    end = i;
                    break;
                }
                i -= 1;
                w_at -= gs[i].2;
            }
        }
        let mut row: Vec<Span<'static>> = Vec::new();
        if start > 0 {
            row.extend(marker.clone());
        }
        for (style, g, _) in &gs[start..end] {
            push_merged(&mut row, *style, g);
        }
        out.push(row);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Vec<Span<'static>>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_words_and_drops_break_spaces() {
        let l = wrap_spans(vec![Span::raw("the quick brown fox jumps")], 10);
        assert_eq!(texts(&l), ["the quick", "brown fox", "jumps"]);
        let l = wrap_spans(vec![Span::raw("abcdefghijkl")], 5);
        assert_eq!(texts(&l), ["abcde", "fghij", "kl"]);
        let l = wrap_spans(vec![Span::raw("a\nb")], 5);
        assert_eq!(texts(&l), ["a", "b"]);
        assert_eq!(texts(&wrap_spans(vec![], 5)), [""]);
    }

    #[test]
    fn wide_characters_take_two_columns() {
        let l = wrap_spans(vec![Span::raw("日本語のテキスト")], 7);
        assert_eq!(texts(&l), ["日本語", "のテキ", "スト"]);
        assert_eq!(str_width("👍🏽 ok"), 5);
        let l = wrap_spans(vec![Span::raw("ab 👍🏽👍🏽 cd")], 4);
        assert!(l.iter().all(|r| spans_width(r) <= 4), "{:?}", texts(&l));
    }

    #[test]
    fn code_wraps_at_punctuation_and_marks_continuations() {
        let l = wrap_code(
            vec![Span::raw("let value = compute(first, second);")],
            20,
            Some(Span::raw("↪ ")),
        );
        let t = texts(&l);
        assert_eq!(t[0], "let value = compute(");
        assert_eq!(t[1], "↪ first, second);");
        assert!(t[1].starts_with("↪ "));
        assert_eq!(
            t.concat().replace("↪ ", ""),
            "let value = compute(first, second);"
        );
        assert!(l.iter().all(|r| spans_width(r) <= 20));
        let l = wrap_code(vec![Span::raw("    x")], 3, None);
        assert_eq!(texts(&l), ["   ", " x"]);
    }
}
