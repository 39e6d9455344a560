//! The prompt of `cairn run`: its arguments, and standard input when that is
//! not a terminal. With arguments, what arrives on standard input is
//! attached to the prompt (`cat f | cairn run "summarise this"`); without,
//! it is the prompt (`cairn run < prompt.txt`). Either way at most
//! [`STDIN_CAP`] bytes are taken, and a cut is said both to the model and
//! on standard error.

use std::io::{IsTerminal, Read};

/// The most of standard input a prompt takes.
pub const STDIN_CAP: usize = 256 * 1024;

/// The prompt, and what to tell the person about it (a cut input).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub notes: Vec<String>,
    /// Pictures given with `-i FILE`.
    pub images: Vec<crate::conversation::ImageData>,
}

/// Reads each `-i FILE` as a picture to send; an error names the file and
/// says why (a usage error).
pub fn read_images(
    paths: &[std::path::PathBuf],
) -> Result<Vec<crate::conversation::ImageData>, String> {
    paths
        .iter()
        .map(|p| {
            crate::images::read_file(p)
                .map(|(image, _)| image)
                .map_err(|why| format!("-i {}: {why}", p.display()))
        })
        .collect()
}

/// Builds the prompt from the arguments and, when it is not a terminal,
/// standard input. An error is a usage error (exit code 2).
pub fn read(args: &[String]) -> Result<Prompt, String> {
    let stdin = std::io::stdin();
    let piped = if stdin.is_terminal() {
        None
    } else {
        let mut bytes = Vec::new();
        // One byte over the cap tells a cut from an exact fit; the rest is
        // still drained so a writer in a pipeline does not see EPIPE.
        let mut lock = stdin.lock();
        lock.by_ref()
            .take(STDIN_CAP as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        let mut total = bytes.len();
        if total > STDIN_CAP {
            total += std::io::copy(&mut lock, &mut std::io::sink()).unwrap_or(0) as usize;
        }
        Some((bytes, total))
    };
    compose(args, piped)
}

/// [`read`] without the reading: `piped` is what standard input held (at
/// most one byte over the cap) and its whole length.
pub fn compose(args: &[String], piped: Option<(Vec<u8>, usize)>) -> Result<Prompt, String> {
    let asked = args.join(" ");
    let mut notes = Vec::new();
    let input = piped.and_then(|(mut bytes, total)| {
        let cut = total > STDIN_CAP;
        bytes.truncate(STDIN_CAP);
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        // A cut may split a character; the replacement mark goes.
        if cut && text.ends_with('\u{FFFD}') {
            text.pop();
        }
        if text.trim().is_empty() {
            return None;
        }
        if cut {
            notes.push(format!(
                "standard input is {total} bytes; only the first {} KiB are in the prompt",
                STDIN_CAP / 1024
            ));
        }
        Some((text, total, cut))
    });
    let text = match (asked.trim().is_empty(), input) {
        (true, None) => {
            return Err("no prompt given (pass it as an argument or on standard input)".into());
        }
        (true, Some((text, total, cut))) => {
            if cut {
                format!("{text}\n\n[the prompt was cut: {total} bytes, the first {STDIN_CAP} kept]")
            } else {
                text
            }
        }
        (false, None) => asked,
        (false, Some((text, total, cut))) => {
            let tail = if cut {
                format!(
                    "\n[cut here: standard input was {total} bytes, the first {STDIN_CAP} are shown]"
                )
            } else {
                String::new()
            };
            let nl = if text.ends_with('\n') { "" } else { "\n" };
            format!(
                "{asked}\n\nStandard input (piped to cairn):\n<stdin>\n{text}{nl}</stdin>{tail}"
            )
        }
    };
    Ok(Prompt {
        text,
        notes,
        images: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn piped_input_is_attached_after_the_question() {
        let p = compose(
            &args(&["summarise", "this"]),
            Some((b"line one\n".to_vec(), 9)),
        )
        .unwrap();
        assert!(p.text.starts_with("summarise this\n\n"), "{}", p.text);
        assert!(p.text.contains("<stdin>\nline one\n</stdin>"), "{}", p.text);
        assert!(p.notes.is_empty());
    }

    #[test]
    fn without_arguments_standard_input_is_the_prompt() {
        let p = compose(&[], Some((b"fix the bug\n".to_vec(), 12))).unwrap();
        assert_eq!(p.text, "fix the bug\n");
    }

    #[test]
    fn a_long_input_is_cut_and_the_cut_is_said() {
        let big = vec![b'x'; STDIN_CAP + 1];
        let p = compose(&args(&["count"]), Some((big, STDIN_CAP * 3))).unwrap();
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains(&(STDIN_CAP * 3).to_string()));
        assert!(
            p.text.contains("cut here"),
            "{}",
            &p.text[p.text.len() - 200..]
        );
        assert_eq!(p.text.matches('x').count(), STDIN_CAP);
    }

    #[test]
    fn nothing_at_all_is_a_usage_error() {
        assert!(compose(&[], None).is_err());
        assert!(compose(&args(&["  "]), Some((b"\n".to_vec(), 1))).is_err());
        // An empty pipe beside a question is no attachment.
        let p = compose(&args(&["hi"]), Some((Vec::new(), 0))).unwrap();
        assert_eq!(p.text, "hi");
    }

    #[test]
    fn a_cut_inside_a_character_drops_the_broken_half() {
        let mut bytes = vec![b'a'; STDIN_CAP - 1];
        bytes.extend_from_slice("é".as_bytes());
        let p = compose(&args(&["q"]), Some((bytes, STDIN_CAP + 1))).unwrap();
        assert!(!p.text.contains('\u{FFFD}'));
    }
}
