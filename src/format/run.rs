//! Running one formatter command: the text goes in on stdin, the formatted
//! text comes back on stdout, within a time limit and an output cap; the
//! formatter is stopped (its whole process group) when either is passed or
//! the call is cancelled.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// How long the output of a formatter that has ended may stay open.
const LEFTOVER_WAIT: Duration = Duration::from_millis(500);

/// What is kept of a formatter's stderr, to say why it failed.
const STDERR_KEPT: usize = 64 * 1024;

/// How a formatter run is bounded.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub time: Duration,
    /// The most bytes of output taken; more is a failure.
    pub output: usize,
}

/// Runs `cmd` (already built, in the sandbox) on `input`; the formatted
/// text, or why there is none, naming the formatter as `name`.
pub fn run(
    mut cmd: Command,
    name: &str,
    input: &str,
    limits: Limits,
    cancel: &CancellationToken,
) -> Result<String, String> {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name} could not be started: {e}"))?;
    let writer = child.stdin.take().map(|mut stdin| {
        let bytes = input.as_bytes().to_vec();
        // A formatter that stops reading early (it failed) closes the
        // pipe: that error is its failure's, not this one's.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        })
    });
    let out = child.stdout.take().map(|p| drain(p, limits.output + 1));
    let err = child.stderr.take().map(|p| drain(p, STDERR_KEPT));
    let deadline = Instant::now() + limits.time;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if cancel.is_cancelled() => {
                stop(&mut child);
                return Err(format!("{name} was stopped: the turn was cancelled"));
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(3));
            }
            Ok(None) => {
                stop(&mut child);
                return Err(format!(
                    "{name} took longer than {} s and was stopped",
                    limits.time.as_secs_f32()
                ));
            }
            Err(e) => {
                stop(&mut child);
                return Err(format!("{name} could not be waited for: {e}"));
            }
        }
    };
    // Something it started in the background may hold its output open:
    // that is waited for briefly, then stopped (its group still has a
    // member then, so the group's id names no one else).
    let leftovers = Instant::now() + LEFTOVER_WAIT;
    while [&out, &err]
        .iter()
        .any(|t| t.as_ref().is_some_and(|t| !t.is_finished()))
    {
        if Instant::now() >= leftovers {
            crate::sandbox::kill_group(child.id() as i32);
            break;
        }
        std::thread::sleep(Duration::from_millis(3));
    }
    if let Some(w) = writer {
        let _ = w.join();
    }
    let stdout = collect(out);
    let stderr = collect(err);
    // First: a formatter cut off for writing too much dies of the closed
    // pipe.
    if stdout.len() > limits.output {
        return Err(format!(
            "{name} wrote more than {} KB; its output was not used",
            limits.output / 1024
        ));
    }
    if !status.success() {
        let why = match status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        };
        let said = first_lines(&String::from_utf8_lossy(&stderr));
        return Err(match said.is_empty() {
            true => format!("{name} failed ({why})"),
            false => format!("{name} failed ({why}): {said}"),
        });
    }
    let text = String::from_utf8(stdout)
        .map_err(|_| format!("{name} wrote text that is not UTF-8; it was not used"))?;
    if text.is_empty() && !input.trim().is_empty() {
        return Err(format!(
            "{name} wrote nothing on stdout (its command must print the formatted text, not \
             write the file)"
        ));
    }
    Ok(text)
}

/// Kills the formatter and every process it started, and reaps it.
fn stop(child: &mut std::process::Child) {
    crate::sandbox::kill_group(child.id() as i32);
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads `pipe` on its own thread, keeping at most `max` bytes (then it
/// stops reading: a formatter writing without end meets a closed pipe).
fn drain<R: Read + Send + 'static>(pipe: R, max: usize) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.take(max as u64).read_to_end(&mut buf);
        buf
    })
}

fn collect(reader: Option<JoinHandle<Vec<u8>>>) -> Vec<u8> {
    reader.and_then(|t| t.join().ok()).unwrap_or_default()
}

/// The first few lines a formatter said on stderr, on one line, without
/// control characters, cut to a readable length.
fn first_lines(stderr: &str) -> String {
    let lines: Vec<String> = stderr
        .lines()
        .map(|l| {
            l.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect::<String>()
                .trim()
                .to_string()
        })
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    crate::text::fit(&lines.join(" / "), 300)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    const LIMITS: Limits = Limits {
        time: Duration::from_secs(5),
        output: 1024,
    };

    fn go(script: &str, input: &str, limits: Limits) -> Result<String, String> {
        run(sh(script), "fmt", input, limits, &CancellationToken::new())
    }

    #[test]
    fn the_text_goes_through_stdin_and_stdout() {
        assert_eq!(go("tr a-z A-Z", "abc\n", LIMITS).unwrap(), "ABC\n");
        // A large input does not block on a full pipe.
        let big = "x".repeat(200_000);
        let limits = Limits {
            output: 1 << 20,
            ..LIMITS
        };
        assert_eq!(go("cat", &big, limits).unwrap().len(), 200_000);
    }

    #[test]
    fn failures_say_why() {
        let e = go("echo 'error: expected `;`' >&2; echo; exit 3", "x", LIMITS).unwrap_err();
        assert_eq!(e, "fmt failed (exit status 3): error: expected `;`");
        let e = go("cat > /dev/null", "x\n", LIMITS).unwrap_err();
        assert!(e.contains("wrote nothing on stdout"), "{e}");
        let e = go("yes", "x", LIMITS).unwrap_err();
        assert!(e.contains("more than 1 KB"), "{e}");
        let e = go("printf '\\377\\376'", "x", LIMITS).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
        let e = run(
            Command::new("/nonexistent/fmt"),
            "fmt",
            "x",
            LIMITS,
            &CancellationToken::new(),
        )
        .unwrap_err();
        assert!(e.starts_with("fmt could not be started"), "{e}");
    }

    #[test]
    fn a_slow_formatter_and_what_it_started_are_stopped_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("child-ran");
        let script = format!("(sleep 1; touch {}) & sleep 30", mark.display());
        let limits = Limits {
            time: Duration::from_millis(300),
            ..LIMITS
        };
        let started = Instant::now();
        let e = go(&script, "x", limits).unwrap_err();
        assert!(e.contains("took longer than 0.3 s"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!mark.exists(), "the formatter's child was stopped too");

        // One that ends but leaves a process holding its output is not
        // waited for.
        let started = Instant::now();
        let out = go("(sleep 30) & echo formatted", "x", LIMITS).unwrap();
        assert_eq!(out, "formatted\n");
        assert!(started.elapsed() < Duration::from_secs(5));

        let cancel = CancellationToken::new();
        cancel.cancel();
        let e = run(sh("sleep 30"), "fmt", "x", LIMITS, &cancel).unwrap_err();
        assert!(e.contains("cancelled"), "{e}");
    }
}
