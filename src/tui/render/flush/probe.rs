//! Asking the terminal, once at start, whether it supports synchronized
//! output (DEC private mode 2026), with DECRQM, and what colour its
//! background is (OSC 11), so a theme can match a light or dark terminal.
//!
//! The questions are followed by a request for the primary device attributes
//! (DA1), which every terminal and multiplexer answers: its answer ends the
//! wait at once, whether or not mode 2026 was reported. A terminal that
//! answers nothing costs the timeout, never a hang. The answers are read
//! here, before the input reader starts, so none of them reaches the input
//! as keys. When keys are already waiting (typed ahead), nothing is asked,
//! so they are left for the interface; a key typed during the round trip
//! itself (a few milliseconds on a local terminal) is read here and lost.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// How long to wait for the terminal's answers.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

const QUERY: &[u8] = b"\x1b]11;?\x07\x1b[?2026$p\x1b[c";

/// What the terminal answered so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Answers {
    /// `Some(true)` when DECRPM reported mode 2026 set or reset (known).
    pub sync: Option<bool>,
    /// The background colour OSC 11 reported, as 8-bit red, green, blue.
    pub background: Option<(u8, u8, u8)>,
    /// The device attributes arrived: nothing more will come.
    pub done: bool,
}

/// Reads the OSC 11, DECRPM and DA1 answers out of what the terminal sent.
pub fn parse(bytes: &[u8]) -> Answers {
    let mut answers = Answers {
        background: background(bytes),
        ..Answers::default()
    };
    let mut i = 0;
    while let Some(start) = find(&bytes[i..], b"\x1b[?").map(|p| p + i) {
        let body = &bytes[start + 3..];
        let end = body
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';' || *b == b'$'));
        let Some(end) = end else { break };
        let params = &body[..end];
        match body[end] {
            b'y' if params.ends_with(b"$") => {
                let text = String::from_utf8_lossy(&params[..params.len() - 1]);
                let mut it = text.split(';');
                if it.next() == Some("2026") {
                    // 1 set, 2 reset, 3 permanently set; 0 unknown, 4 permanently reset.
                    let state = it.next().unwrap_or("0");
                    answers.sync = Some(matches!(state, "1" | "2" | "3"));
                }
            }
            b'c' => answers.done = true,
            _ => {}
        }
        i = start + 3 + end;
    }
    answers
}

/// The colour in an OSC 11 answer: `ESC ] 11 ; rgb:R/G/B` ended by BEL or
/// ST, each channel one to four hex digits (scaled to eight bits).
fn background(bytes: &[u8]) -> Option<(u8, u8, u8)> {
    let start = find(bytes, b"\x1b]11;")? + 5;
    let rest = &bytes[start..];
    let end = rest.iter().position(|b| *b == 0x07 || *b == 0x1b)?;
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    let body = text
        .strip_prefix("rgb:")
        .or_else(|| text.strip_prefix("rgba:"))?;
    let mut channels = body.split('/').map(|h| {
        let digits = u32::try_from(h.len())
            .ok()
            .filter(|n| (1..=4).contains(n))?;
        let v = u32::from_str_radix(h, 16).ok()?;
        u8::try_from(v * 255 / (16u32.pow(digits) - 1)).ok()
    });
    Some((channels.next()??, channels.next()??, channels.next()??))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Asks the terminal and returns what it answered within `timeout`
/// (nothing known when it answered nothing). Raw mode must be on, and
/// nothing else may be reading the terminal yet.
pub fn ask_terminal(timeout: Duration) -> Answers {
    let Ok(mut tty) = File::options().read(true).write(true).open("/dev/tty") else {
        return Answers::default();
    };
    // Keys typed ahead are the person's: asking now would mean reading
    // them here, where they would be lost. Without an answer, no sync and
    // no known background.
    if input_pending(&tty) {
        return Answers::default();
    }
    if tty.write_all(QUERY).and_then(|_| tty.flush()).is_err() {
        return Answers::default();
    }
    let deadline = Instant::now() + timeout;
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return parse(&got);
        }
        let ms = PollTimeout::from(left.as_millis().clamp(1, 60_000) as u16);
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, ms) {
            Ok(0) => return parse(&got),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return parse(&got),
        }
        match tty.read(&mut buf) {
            Ok(0) | Err(_) => return parse(&got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        let answers = parse(&got);
        if answers.done {
            return answers;
        }
    }
}

fn input_pending(tty: &File) -> bool {
    let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
    !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mode_report_before_the_device_attributes() {
        let a = parse(b"\x1b[?2026;2$y\x1b[?62;22c");
        assert_eq!(
            a,
            Answers {
                sync: Some(true),
                background: None,
                done: true
            }
        );
        let a = parse(b"\x1b[?2026;0$y\x1b[?1;2c");
        assert_eq!(a.sync, Some(false));
        assert!(a.done);
    }

    #[test]
    fn a_terminal_that_only_answers_the_attributes_has_no_sync() {
        let a = parse(b"\x1b[?62;22c");
        assert_eq!(a.sync, None);
        assert!(a.done);
        let partial = parse(b"\x1b[?2026;1$y\x1b[?6");
        assert_eq!(partial.sync, Some(true));
        assert!(!partial.done);
    }

    #[test]
    fn reads_the_background_in_every_spelling_terminals_use() {
        let a = parse(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?2026;2$y\x1b[?62c");
        assert_eq!(a.background, Some((255, 255, 255)));
        assert!(a.done && a.sync == Some(true));
        let a = parse(b"\x1b]11;rgb:1e1e/2020/2828\x07\x1b[?1;2c");
        assert_eq!(a.background, Some((30, 32, 40)));
        let a = parse(b"\x1b]11;rgb:f/8/0\x07");
        assert_eq!(a.background, Some((255, 136, 0)));
        assert_eq!(parse(b"\x1b]11;rgb:ff/ff\x07").background, None);
        assert_eq!(parse(b"\x1b]11;rgb:zz/00/00\x07").background, None);
        assert_eq!(parse(b"\x1b]11;rgb:ffff/ffff/ff").background, None);
        assert_eq!(parse(b"\x1b[?62;22c").background, None);
    }
}
