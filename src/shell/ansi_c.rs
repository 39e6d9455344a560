//! bash's ANSI-C quoting (`$'…'`): the escapes bash decodes before the
//! command runs, decoded here too so that `$'\x72\x6d'` is judged as `rm`.

/// Decode the text between `$'` and `'` as bash does (bash(1), QUOTING).
pub(super) fn decode(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(&mut out, value & 0xff);
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < max {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.wrapping_mul(16).wrapping_add(d);
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    push_code(&mut out, value);
                }
            }
            'c' => match chars.next() {
                Some(k) => push_code(&mut out, (k.to_ascii_uppercase() as u32) ^ 0x40),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// A byte or code point; bash stops a word at a NUL, which no command name
/// or argument can hold, so it is dropped.
fn push_code(out: &mut String, value: u32) {
    if value == 0 {
        return;
    }
    out.push(char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER));
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_what_bash_decodes() {
        assert_eq!(decode(r"\x72\x6d"), "rm");
        assert_eq!(decode(r"\163\165\144\157"), "sudo");
        assert_eq!(decode(r"\u0073udo"), "sudo");
        assert_eq!(decode(r"\U00000073udo"), "sudo");
        assert_eq!(decode(r"a\tb\n"), "a\tb\n");
        assert_eq!(decode(r"\'\\"), "'\\");
        assert_eq!(decode(r"\q"), "\\q");
        assert_eq!(decode(r"\x"), "\\x");
        assert_eq!(decode(r"\cA"), "\x01");
    }
}
