//! Input the parser crate cannot take, refused before it sees it.

/// Input the parser crate never returns from: it loops, allocating, on
/// some here-documents whose delimiter holds `$((` (`<<x$(( ||$((`) or is
/// empty (`<<""<( `, `<< );;`). bash has no use for such delimiters (an
/// expansion in one is never expanded; an empty one ends at the first
/// empty line or is a syntax error), so refusing them loses nothing.
pub(super) fn parser_trap(command: &str) -> Option<String> {
    for at in unquoted_heredoc_operators(command) {
        let after = &command[at + 2..];
        let delimiter = after
            .strip_prefix('-')
            .unwrap_or(after)
            .trim_start_matches([' ', '\t']);
        let end = delimiter
            .find(|c: char| c.is_whitespace() || ";&|<>()".contains(c))
            .unwrap_or(delimiter.len());
        let word = &delimiter[..end];
        if word.contains(['$', '`']) || word.replace(['\'', '"'], "").is_empty() {
            return Some(
                "cannot parse the command: a here-document delimiter is empty or holds an \
                 expansion"
                    .into(),
            );
        }
    }
    None
}

/// Byte offsets of `<<` (not `<<<`) outside quotes.
fn unquoted_heredoc_operators(command: &str) -> Vec<usize> {
    let bytes = command.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'\'') if b == b'\'' => quote = None,
            Some(b'"') if b == b'\\' => i += 1,
            Some(b'"') if b == b'"' => quote = None,
            Some(_) => {}
            None if b == b'\\' => i += 1,
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if bytes[i..].starts_with(b"<<<") => i += 2,
            None if bytes[i..].starts_with(b"<<") => {
                out.push(i);
                i += 1;
            }
            None => {}
        }
        i += 1;
    }
    out
}
