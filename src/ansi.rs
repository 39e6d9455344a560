//! Escape sequences in what tools print (`cargo`, `git -c color.ui=always`,
//! `FORCE_COLOR`): the screen keeps colour (SGR) and nothing else, the
//! model gets the text with every sequence removed.
//!
//! Both go through one terminal parser (`vte`), so a sequence is removed
//! whole however it is spelt (CSI, OSC with either terminator, DCS, plain
//! ESC), and a carriage return that redraws a progress line keeps only the
//! last drawing, as a terminal would show it.

use vte::{Params, Parser, Perform};

/// The text with every escape sequence and control character removed
/// (newlines and tabs kept): what the model reads.
pub fn strip(text: &str) -> String {
    if !needs_work(text) {
        return text.to_string();
    }
    run(text, false)
}

/// The text with colour and style sequences (SGR) kept and every other
/// sequence and control character removed: what the screen may draw.
pub fn keep_colours(text: &str) -> String {
    if !needs_work(text) {
        return text.to_string();
    }
    run(text, true)
}

/// Whether `text` holds any escape or control character besides newline
/// and tab (most output holds none, and is passed through as it is).
pub fn needs_work(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

fn run(text: &str, sgr: bool) -> String {
    let mut out = Collector {
        out: String::with_capacity(text.len()),
        sgr,
        pending_cr: false,
    };
    Parser::new().advance(&mut out, text.as_bytes());
    out.out
}

struct Collector {
    out: String,
    sgr: bool,
    /// A carriage return not (yet) followed by a newline: the next printed
    /// character starts the line again.
    pending_cr: bool,
}

impl Collector {
    fn restart_line(&mut self) {
        if std::mem::take(&mut self.pending_cr) {
            let start = self.out.rfind('\n').map_or(0, |i| i + 1);
            self.out.truncate(start);
        }
    }
}

impl Perform for Collector {
    fn print(&mut self, c: char) {
        // C1 controls (8-bit CSI and friends) arrive as characters.
        if c.is_control() {
            return;
        }
        self.restart_line();
        self.out.push(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' => {
                self.pending_cr = false;
                self.out.push('\n');
            }
            b'\t' => {
                self.restart_line();
                self.out.push('\t');
            }
            b'\r' => self.pending_cr = true,
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        if !self.sgr || action != 'm' || ignore || !intermediates.is_empty() {
            return;
        }
        self.restart_line();
        self.out.push_str("\x1b[");
        for (i, param) in params.iter().enumerate() {
            if i > 0 {
                self.out.push(';');
            }
            for (j, sub) in param.iter().enumerate() {
                if j > 0 {
                    self.out.push(':');
                }
                self.out.push_str(&sub.to_string());
            }
        }
        self.out.push('m');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_gets_no_escape_at_all() {
        let raw =
            "\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x1b[2J\x1b[1;1H done\x1bP1$r\x1b\\ \x1b(B.";
        assert_eq!(strip(raw), "red ok done .");
        assert_eq!(strip("plain\ttext\n"), "plain\ttext\n");
    }

    #[test]
    fn the_screen_keeps_colour_and_loses_the_rest() {
        let raw = "\x1b[1;38;5;196merror\x1b[0m\x1b]52;c;aGk=\x07\x1b[?1049h: x\x1b[38:2:1:2:3mz";
        assert_eq!(
            keep_colours(raw),
            "\x1b[1;38;5;196merror\x1b[0m: x\x1b[38:2:1:2:3mz"
        );
    }

    #[test]
    fn a_progress_line_keeps_its_last_drawing_and_crlf_stays_a_line_end() {
        assert_eq!(strip("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(strip("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(strip("bell\x07 back\x08space"), "bell backspace");
    }
}
