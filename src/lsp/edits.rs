//! A server's `TextEdit`s applied to a text: a rename's changes of one
//! file, a formatting's changes of the edited text. Positions are
//! (0-based line, UTF-16 column), lines ending in `\n`, `\r\n` or `\r`; a
//! column past a line's end means its end, a line past the text its end.

use lsp_types::TextEdit;

/// The byte offset of each line's start.
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                i += 1;
                starts.push(i + 1);
            }
            b'\r' | b'\n' => starts.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    starts
}

/// The byte offset of (line, UTF-16 column).
fn offset(text: &str, starts: &[usize], line: u32, character: u32) -> usize {
    let Some(&start) = starts.get(line as usize) else {
        return text.len();
    };
    let rest = &text[start..];
    let content = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
    let mut units = 0;
    for (i, c) in content.char_indices() {
        if units >= character {
            return start + i;
        }
        units += c.len_utf16() as u32;
    }
    start + content.len()
}

/// `text` with `edits` applied; they may not overlap, and none may end
/// before it starts.
pub fn apply(text: &str, edits: &[TextEdit]) -> Result<String, String> {
    let starts = line_starts(text);
    let mut spans = Vec::with_capacity(edits.len());
    for e in edits {
        let (s, t) = (e.range.start, e.range.end);
        let (from, to) = (
            offset(text, &starts, s.line, s.character),
            offset(text, &starts, t.line, t.character),
        );
        if from > to {
            return Err("an edit whose range ends before it starts".into());
        }
        spans.push((from, to, e.new_text.as_str()));
    }
    spans.sort_by_key(|s| (s.0, s.1));
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err("edits that overlap".into());
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (from, to, new) in spans {
        out.push_str(&text[at..from]);
        out.push_str(new);
        at = to;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> TextEdit {
        TextEdit {
            range: Range::new(Position::new(l1, c1), Position::new(l2, c2)),
            new_text: text.into(),
        }
    }

    #[test]
    fn edits_land_by_utf16_column_on_any_line_ending() {
        let text = "let é = 1;\r\nuse(é); use(é)\rend\n";
        let edits = [
            edit(0, 4, 0, 5, "x"),
            edit(1, 12, 1, 13, "x"),
            edit(1, 4, 1, 5, "x"),
        ];
        assert_eq!(
            apply(text, &edits).unwrap(),
            "let x = 1;\r\nuse(x); use(x)\rend\n"
        );
        // An emoji and a musical sign are two UTF-16 units each.
        assert_eq!(apply("a😀b c", &[edit(0, 3, 0, 4, "Z")]).unwrap(), "a😀Z c");
        let text = "fn  main(){\n  let é𝄞=1;\n}\n";
        let edits = [
            edit(1, 0, 1, 2, "    "),
            edit(0, 2, 0, 4, " "),
            edit(1, 9, 1, 10, " = "),
            edit(0, 10, 0, 10, " "),
        ];
        assert_eq!(
            apply(text, &edits).unwrap(),
            "fn main() {\n    let é𝄞 = 1;\n}\n"
        );
    }

    #[test]
    fn positions_past_the_end_clamp_and_bad_edits_are_refused() {
        // Past a line's end is its end (before its `\r\n`); past the text,
        // the text's end.
        assert_eq!(apply("ab\r\ncd", &[edit(0, 99, 5, 0, "")]).unwrap(), "ab");
        assert_eq!(
            apply("abcdef", &[edit(0, 0, 0, 3, "a"), edit(0, 2, 0, 4, "b")]).unwrap_err(),
            "edits that overlap"
        );
        assert!(apply("x", &[edit(0, 1, 0, 0, "")]).is_err());
        assert_eq!(apply("x", &[]).unwrap(), "x");
    }
}
