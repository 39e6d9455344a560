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
    let mut used = false;
    let mut out = placeholders(body, args, &split_args(args), false, &mut used);
    append_unused(&mut out, args, used);
    out
}

fn append_unused(out: &mut String, args: &str, used: bool) {
    if !used && !args.trim().is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {}", args.trim()));
    }
}

/// `text` with `$ARGUMENTS` and `$1`…`$9` filled; in a shell command
/// (`quote`) each argument is one single-quoted word, so what the person
/// typed is never read as shell syntax.
fn placeholders(
    text: &str,
    args: &str,
    positional: &[String],
    quote: bool,
    used: &mut bool,
) -> String {
    let word = |a: &str| {
        if quote {
            format!("'{}'", a.replace('\'', r"'\''"))
        } else {
            a.to_string()
        }
    };
    let all = if quote {
        positional
            .iter()
            .map(|a| word(a))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        args.to_string()
    };
    let mut out = String::with_capacity(text.len() + args.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(&all);
            *used = true;
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let i = d as usize - '1' as usize;
            out.push_str(&positional.get(i).map(|a| word(a)).unwrap_or_default());
            *used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A command's prompt split at its `` !`cmd` `` spans (found in the file's
/// own text, before any argument is filled in, so an argument cannot add
/// a span), with the arguments filled: as typed in the text pieces,
/// single-quoted words in the span commands. `pieces` has one more entry
/// than `commands`; [`join`] puts them back together around the outputs.
pub fn fill(body: &str, args: &str) -> (Vec<String>, Vec<String>) {
    let positional = split_args(args);
    let mut used = false;
    let (mut pieces, mut commands) = (Vec::new(), Vec::new());
    let mut at = 0;
    for span in shell_spans(body) {
        let before = &body[at..span.range.start];
        pieces.push(placeholders(before, args, &positional, false, &mut used));
        commands.push(placeholders(
            &span.command,
            args,
            &positional,
            true,
            &mut used,
        ));
        at = span.range.end;
    }
    let mut last = placeholders(&body[at..], args, &positional, false, &mut used);
    append_unused(&mut last, args, used);
    pieces.push(last);
    (pieces, commands)
}

/// The pieces of [`fill`] with each command's output between them.
pub fn join(pieces: &[String], outputs: &[String]) -> String {
    let mut out = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        out.push_str(piece);
        if let Some(o) = outputs.get(i) {
            out.push_str(o.trim_end());
        }
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
