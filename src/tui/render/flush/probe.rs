//! Asking the terminal, once at start, whether it supports synchronized
//! output (DEC private mode 2026), with DECRQM.
//!
//! The question is followed by a request for the primary device attributes
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

const QUERY: &[u8] = b"\x1b[?2026$p\x1b[c";

/// What the terminal answered so far.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Answers {
    /// `Some(true)` when DECRPM reported mode 2026 set or reset (known).
    pub sync: Option<bool>,
    /// The device attributes arrived: nothing more will come.
    pub done: bool,
}

/// Reads the DECRPM and DA1 answers out of what the terminal sent.
pub fn parse(bytes: &[u8]) -> Answers {
    let mut answers = Answers::default();
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

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Asks the terminal; true only when it said it supports mode 2026.
/// Raw mode must be on, and nothing else may be reading the terminal yet.
pub fn synchronized_output_supported(timeout: Duration) -> bool {
    let Ok(mut tty) = File::options().read(true).write(true).open("/dev/tty") else {
        return false;
    };
    // Keys typed ahead are the person's: asking now would mean reading
    // them here, where they would be lost. Without an answer, no sync.
    if input_pending(&tty) {
        return false;
    }
    if tty.write_all(QUERY).and_then(|_| tty.flush()).is_err() {
        return false;
    }
    let deadline = Instant::now() + timeout;
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let ms = PollTimeout::from(left.as_millis().clamp(1, 60_000) as u16);
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, ms) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return false,
        }
        match tty.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        let answers = parse(&got);
        if answers.done {
            return answers.sync == Some(true);
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
}
