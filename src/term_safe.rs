//! Text that came from a model, a tool or a file is printed by the
//! command-line front ends only after this: a control character is shown in
//! caret notation (`^[`, `^G`, …) instead of being sent to the terminal, so
//! no escape sequence in it can set the window title, write the clipboard
//! (OSC 52), clear the screen or make the terminal answer into the shell
//! (a cursor-position report). Newlines and tabs stay as they are.

use std::io::IsTerminal;

/// `s` with every control character except newline and tab made visible.
pub fn escape(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x20 {
            out.push('^');
            out.push(char::from(b'@' + c as u8));
        } else if c == '\u{7f}' {
            out.push_str("^?");
        } else {
            // C1 controls (U+0080–U+009F): 8-bit CSI, OSC, DCS and friends.
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Whether text styling (bold, colour) may go to standard output: only a
/// terminal, and not when `NO_COLOR` is set to anything non-empty.
pub fn stdout_styled() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Makes a closed pipe end the process quietly, as for any Unix filter
/// (`cairn sessions show … | head`), instead of an error or a panic when
/// the reader has gone.
pub fn quiet_broken_pipe() {
    // SAFETY: restoring the default disposition of one signal at start-up.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_made_visible() {
        let hostile =
            "hi\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\x1b[2J\x1b[6n\u{9b}31m\r\x7fok\n\tend";
        let safe = escape(hostile);
        assert!(!safe.chars().any(needs_escape), "{safe:?}");
        assert_eq!(
            safe,
            "hi^[]52;c;aGVsbG8=^G^[]0;pwned^G^[[2J^[[6n\\u{9b}31m^M^?ok\n\tend"
        );
        assert_eq!(escape("plain ✓ text\n"), "plain ✓ text\n");
    }
}
