//! A tool's output in its pane: the head or the tail as the tool calls for
//! (a file or listing starts at its top, a command's news is at its end),
//! all of it when expanded, colour codes drawn as colours.

use ansi_to_tui::IntoText;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::styles::Styles;
use crate::tui::wrap::{clean, wrap_spans};

/// Output lines shown while folded.
pub const PREVIEW_LINES: usize = 5;

/// Which end of the output a folded pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

impl End {
    /// Files, listings and search results read from the top; a command's
    /// (or a job's) last lines say how it went.
    pub fn for_tool(name: &str) -> End {
        match name {
            "bash" | "job_output" => End::Tail,
            _ => End::Head,
        }
    }
}

/// Appends `chunk`, then drops the oldest whole lines beyond `max` bytes.
pub fn push_capped(buf: &mut String, chunk: &str, max: usize) {
    buf.push_str(chunk);
    if buf.len() > max {
        let mut cut = buf.len() - max;
        while !buf.is_char_boundary(cut) {
            cut += 1;
        }
        let cut = buf[cut..].find('\n').map_or(cut, |i| cut + i + 1);
        buf.drain(..cut);
    }
}

pub fn more_line(n: usize, styles: &Styles) -> Line<'static> {
    Line::from(Span::styled(
        format!(
            "  … {n} more {} (Tab, Enter to expand)",
            crate::text::plural(n, "line", "lines")
        ),
        styles.dim,
    ))
}

pub fn lines(
    text: &str,
    end: End,
    expanded: bool,
    width: u16,
    styles: &Styles,
) -> Vec<Line<'static>> {
    let text = text.trim_end_matches('\n');
    if text.is_empty() {
        return Vec::new();
    }
    let all: Vec<&str> = text.split('\n').collect();
    let hidden = if expanded {
        0
    } else {
        all.len().saturating_sub(PREVIEW_LINES)
    };
    let shown = match end {
        End::Head => &all[..all.len() - hidden],
        End::Tail => &all[hidden..],
    };
    let mut out = Vec::new();
    if hidden > 0 && end == End::Tail {
        out.push(more_line(hidden, styles));
    }
    let text_w = usize::from(width.saturating_sub(2)).max(1);
    for line in shown {
        // Indentation is structure (a tree, a traceback, YAML): it is kept,
        // and rows the line wraps onto hang under it.
        let (indent, rest) = indentation(line, text_w / 2);
        let pad = " ".repeat(indent);
        for row in wrap_spans(styled(rest, styles.dim), text_w - indent) {
            let mut spans = vec![Span::styled("│ ", styles.border)];
            if indent > 0 {
                spans.push(Span::raw(pad.clone()));
            }
            spans.extend(row);
            out.push(Line::from(spans));
        }
    }
    if hidden > 0 && end == End::Head {
        out.push(more_line(hidden, styles));
    }
    out
}

/// The columns of `line`'s leading blanks (a tab counts four), at most
/// `max`, and the rest of the line.
fn indentation(line: &str, max: usize) -> (usize, &str) {
    let mut cols = 0;
    for (i, c) in line.char_indices() {
        let w = match c {
            ' ' => 1,
            '\t' => 4,
            _ => return (cols, &line[i..]),
        };
        if cols + w > max {
            return (cols, &line[i..]);
        }
        cols += w;
    }
    (cols, "")
}

/// One output line as spans: its colour codes applied over `base`, and
/// no control character left.
pub fn styled(line: &str, base: Style) -> Vec<Span<'static>> {
    let line = line.trim_end_matches('\r');
    if !line.contains('\x1b') {
        return vec![Span::styled(clean(line), base)];
    }
    let parsed = crate::ansi::keep_colours(line)
        .into_text()
        .ok()
        .and_then(|t| t.lines.into_iter().next());
    match parsed {
        Some(l) => l
            .spans
            .into_iter()
            .map(|s| {
                Span::styled(
                    clean(&s.content),
                    base.patch(unreset(l.style)).patch(unreset(s.style)),
                )
            })
            .filter(|s| !s.content.is_empty())
            .collect(),
        None => vec![Span::styled(clean(&crate::ansi::strip(line)), base)],
    }
}

/// An SGR reset means "back to the pane's own style", not the terminal's.
fn unreset(mut s: Style) -> Style {
    if s.fg == Some(ratatui::style::Color::Reset) {
        s.fg = None;
    }
    if s.bg == Some(ratatui::style::Color::Reset) {
        s.bg = None;
    }
    s
}

#[cfg(test)]
mod indent_tests {
    use super::*;

    fn rows(text: &str, width: u16) -> Vec<String> {
        let styles = Styles::default();
        lines(text, End::Head, true, width, &styles)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn leading_whitespace_is_kept_and_wrapped_rows_hang_under_it() {
        let r = rows("src\n  main.rs\n    lib/\n\tmod.rs", 40);
        assert_eq!(r, ["│ src", "│   main.rs", "│     lib/", "│     mod.rs"]);
        let r = rows("    a long line that has to wrap here", 20);
        assert!(r.len() > 1, "{r:?}");
        assert!(r.iter().all(|l| l.starts_with("│     ")), "{r:?}");
    }
}
