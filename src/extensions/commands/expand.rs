//! Filling a command's prompt: `$ARGUMENTS`, `$1`…`$9`, and finding the
//! `` !`cmd` `` spans whose output replaces them.

use std::ops::Range;

/// Splits arguments the way a shell would for `$1`…`$9`: at spaces, with
/// `"…"` and `'…'` keeping spaces inside one argument.
pub fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            None => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out
}

/// The prompt with its placeholders filled: `$ARGUMENTS` is everything
/// typed after the name, `$1`…`$9` one argument each (empty when not
/// given). A prompt without any placeholder gets the arguments appended,
/// so they are never silently dropped.
pub fn substitute(body: &str, args: &str) -> String {
    let positional = split_args(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let i = d as usize - '1' as usize;
            out.push_str(positional.get(i).map(String::as_str).unwrap_or(""));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.trim().is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {}", args.trim()));
    }
    out
}

/// One `` !`cmd` `` of a prompt: where it is and the command.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellSpan {
    pub range: Range<usize>,
    pub command: String,
}

/// The `` !`cmd` `` spans of a prompt, in order. A span lies on one line;
/// an empty one is left as written.
pub fn shell_spans(text: &str) -> Vec<ShellSpan> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("!`") {
        let start = from + at;
        let inner_start = start + 2;
        let Some(len) = text[inner_start..].find(['`', '\n']) else {
            break;
        };
        let end = inner_start + len;
        if text[end..].starts_with('`') && !text[inner_start..end].trim().is_empty() {
            out.push(ShellSpan {
                range: start..end + 1,
                command: text[inner_start..end].trim().to_string(),
            });
            from = end + 1;
        } else {
            from = inner_start;
        }
    }
    out
}

/// The prompt with each span replaced by its output (in span order).
pub fn inline(text: &str, spans: &[ShellSpan], outputs: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, output) in spans.iter().zip(outputs) {
        out.push_str(&text[at..span.range.start]);
        out.push_str(output.trim_end());
        at = span.range.end;
    }
    out.push_str(&text[at..]);
    out
}
