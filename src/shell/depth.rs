//! A linear pre-scan that bounds how deeply a command nests before the
//! parser crate, which recurses once per level (and re-reads each
//! substitution's text), ever sees it. A model can send `{ { { …` ten
//! thousand deep; without this the parser overflows its stack.
//!
//! The scan follows quoting closely enough not to be fooled by closers
//! that are only text (`echo }`, `")"`); where it still errs, the parse
//! also runs on a thread with a large stack and the number of openers is
//! capped, so no spelling can take the process down.

/// Deepest nesting handed to the parser. Real commands stay far below.
pub(super) const MAX_NESTING: usize = 64;
/// Openers in all: bounds the parser's recursion even where the scan's
/// idea of a closer is wrong.
pub(super) const MAX_OPENERS: usize = 4096;

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    /// `(`, `$(`, `$((`.
    Paren,
    /// `{ …; }` as a group.
    Group,
    /// `${…}`.
    Param,
    /// `"…"`.
    Quote,
    /// `if`, `while`, `until`, `for`, `case`, `select`.
    Keyword,
}

/// Why the command is refused before parsing, or `None` when its nesting
/// is within bounds.
pub(super) fn too_deep(command: &str) -> Option<String> {
    let mut scan = Scan::default();
    scan.run(command.as_bytes());
    if scan.deepest > MAX_NESTING {
        Some(format!(
            "the command nests more than {MAX_NESTING} levels deep; it is not inspected"
        ))
    } else if scan.openers > MAX_OPENERS {
        Some(format!(
            "the command opens more than {MAX_OPENERS} nested constructs; it is not inspected"
        ))
    } else {
        None
    }
}

#[derive(Default)]
struct Scan {
    stack: Vec<Frame>,
    deepest: usize,
    openers: usize,
    /// Here-document delimiters whose bodies start at the next newline.
    heredocs: Vec<Vec<u8>>,
}

impl Scan {
    fn push(&mut self, frame: Frame) {
        self.stack.push(frame);
        self.openers += 1;
        self.deepest = self.deepest.max(self.stack.len());
    }

    fn pop_if(&mut self, wanted: &[Frame]) {
        if self.stack.last().is_some_and(|f| wanted.contains(f)) {
            self.stack.pop();
        }
    }

    fn run(&mut self, b: &[u8]) {
        let mut i = 0;
        while i < b.len() {
            i = match self.stack.last() {
                Some(Frame::Quote) => self.in_quote(b, i),
                _ => self.in_code(b, i),
            };
        }
    }

    /// One step inside double quotes: only substitutions nest here.
    fn in_quote(&mut self, b: &[u8], i: usize) -> usize {
        match b[i] {
            b'\\' => i + 2,
            b'"' => {
                self.stack.pop();
                i + 1
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                self.push(Frame::Paren);
                i + 2
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                self.push(Frame::Param);
                i + 2
            }
            _ => i + 1,
        }
    }

    /// One step in code (the top, a subshell, a group, a substitution).
    fn in_code(&mut self, b: &[u8], i: usize) -> usize {
        let word_start = i == 0 || is_break(b[i - 1]);
        match b[i] {
            b'\\' => i + 2,
            b'\'' => skip_past(b, i + 1, b'\''),
            b'"' => {
                self.push(Frame::Quote);
                i + 1
            }
            b'#' if word_start => b[i..]
                .iter()
                .position(|c| *c == b'\n')
                .map_or(b.len(), |n| i + n),
            b'\n' => self.heredoc_bodies(b, i + 1),
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                self.heredoc_operator(b, i + 2)
            }
            b'(' => {
                self.push(Frame::Paren);
                i + 1
            }
            b')' => {
                self.pop_if(&[Frame::Paren]);
                i + 1
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                self.push(Frame::Param);
                i + 2
            }
            b'{' if word_start && b.get(i + 1).is_none_or(|c| is_break(*c)) => {
                self.push(Frame::Group);
                i + 1
            }
            b'}' if self.stack.last() == Some(&Frame::Param) => {
                self.stack.pop();
                i + 1
            }
            b'}' if word_start && b.get(i + 1).is_none_or(|c| is_break(*c)) => {
                // Only in command position is `}` a closer; `echo }` is text.
                if ends_command(&b[..i]) {
                    self.pop_if(&[Frame::Group]);
                }
                i + 1
            }
            c if word_start && c.is_ascii_lowercase() => self.keyword(b, i),
            _ => i + 1,
        }
    }

    fn keyword(&mut self, b: &[u8], i: usize) -> usize {
        // Keywords are lowercase letters only; anything else in the word
        // is scanned as usual.
        let end = b[i..]
            .iter()
            .position(|c| !c.is_ascii_lowercase())
            .map_or(b.len(), |n| i + n);
        if b.get(end).is_some_and(|c| !is_break(*c)) {
            return end;
        }
        match &b[i..end] {
            b"if" | b"while" | b"until" | b"for" | b"case" | b"select" => self.push(Frame::Keyword),
            b"fi" | b"done" | b"esac" => self.pop_if(&[Frame::Keyword]),
            _ => {}
        }
        end
    }

    /// After `<<`: note the delimiter so its body is skipped.
    fn heredoc_operator(&mut self, b: &[u8], mut i: usize) -> usize {
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let start = i;
        while i < b.len() && !is_break(b[i]) {
            i += 1;
        }
        let word: Vec<u8> = b[start..i]
            .iter()
            .copied()
            .filter(|c| !matches!(c, b'\'' | b'"' | b'\\'))
            .collect();
        if !word.is_empty() {
            self.heredocs.push(word);
        }
        i
    }

    /// At the start of a line: skip the bodies of pending here-documents.
    fn heredoc_bodies(&mut self, b: &[u8], mut i: usize) -> usize {
        for delimiter in std::mem::take(&mut self.heredocs) {
            while i < b.len() {
                let end = skip_past(b, i, b'\n');
                let line = &b[i..end.min(b.len())];
                let line = line.strip_suffix(b"\n").unwrap_or(line);
                i = end;
                if trim_tabs(line) == delimiter.as_slice() {
                    break;
                }
            }
        }
        i
    }
}

/// Whether what precedes ends a command, so a `}` next is a keyword.
fn ends_command(before: &[u8]) -> bool {
    before
        .iter()
        .rev()
        .find(|c| !matches!(c, b' ' | b'\t'))
        .is_none_or(|c| matches!(c, b';' | b'&' | b'\n' | b')' | b'}'))
}

fn trim_tabs(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|c| *c != b'\t').unwrap_or(line.len());
    &line[start..]
}

/// The index just past the next `stop` at or after `from` (or the end).
fn skip_past(b: &[u8], from: usize, stop: u8) -> usize {
    b.get(from..)
        .and_then(|rest| rest.iter().position(|c| *c == stop))
        .map_or(b.len(), |n| from + n + 1)
}

/// Bytes that end a word (and so may start a keyword or a group brace).
fn is_break(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(command: &str) -> usize {
        let mut scan = Scan::default();
        scan.run(command.as_bytes());
        scan.deepest
    }

    #[test]
    fn counts_each_kind_of_nesting() {
        assert_eq!(depth("echo hi"), 0);
        assert_eq!(depth("{ { echo; }; }"), 2);
        assert_eq!(depth("if a; then if b; then c; fi; fi"), 2);
        assert_eq!(depth("echo $(a $(b $(c)))"), 3);
        assert_eq!(depth("echo \"$(a \"$(b)\")\""), 4);
        assert_eq!(depth("echo ${a:-${b}}"), 2);
        assert_eq!(depth("( ( ls ) )"), 2);
    }

    #[test]
    fn closers_that_are_only_text_do_not_close() {
        // `}` as an argument, `)` in quotes: the group still nests.
        assert_eq!(depth("{ echo }; { echo }; { echo }; ls"), 3);
        assert_eq!(depth("( echo \")\" ( echo ')' ( ls"), 3);
        assert_eq!(depth("{ # } }\n{ ls"), 2);
    }

    #[test]
    fn quoted_and_heredoc_text_does_not_nest() {
        assert_eq!(depth("echo '((((((((((' \"{{{{{{\""), 1);
        assert_eq!(depth("cat <<'EOF'\n((((((\nif if if\nEOF\nls"), 0);
        assert_eq!(depth("cat <<-EOF\n\t{ { {\n\tEOF\n"), 0);
        assert_eq!(depth("echo {a,b}{c,d} x}y"), 0);
    }

    #[test]
    fn refuses_beyond_the_bounds() {
        let deep = format!(
            "{}ls{}",
            "{ ".repeat(MAX_NESTING + 1),
            "; }".repeat(MAX_NESTING + 1)
        );
        assert!(too_deep(&deep).is_some());
        let fine = format!(
            "{}ls{}",
            "{ ".repeat(MAX_NESTING),
            "; }".repeat(MAX_NESTING)
        );
        assert_eq!(too_deep(&fine), None);
        let many = "( ls ); ".repeat(MAX_OPENERS + 1);
        assert!(too_deep(&many).unwrap().contains("constructs"));
    }
}
