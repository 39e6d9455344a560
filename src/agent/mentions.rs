//! `@path` in a prompt: the file's text (or a directory's listing) goes to
//! the model with the prompt, capped, saying what was cut. Only paths
//! inside the workspace are attached; anything else is for the model to
//! read with its tools, through the permission gate.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::Shared;
use crate::conversation::{ATTACHED_TAG, ImageData, Part};
use crate::protocol::{AgentEvent, NoticeLevel};

/// The most of a file attached.
pub const MAX_LINES: usize = 2000;
pub const MAX_BYTES: usize = 100 * 1024;
/// The most entries of a directory listed.
pub const MAX_ENTRIES: usize = 300;
/// How far past what is attached lines are still counted.
const MAX_COUNTED: u64 = 64 * 1024 * 1024;

/// One `@path` read for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// As typed, without the `@`.
    pub mention: String,
    /// What was attached, in a few words ("120 lines", "first 2000 of
    /// 5300 lines", "directory, 12 entries").
    pub summary: String,
    /// The part of the user's message the model reads.
    pub text: String,
}

/// What the prompt's mentions gave: the attachments, and a sentence for
/// each mention of a path that could not be attached.
#[derive(Debug, Default)]
pub struct Mentions {
    pub attached: Vec<Attachment>,
    /// Pictures (`@shot.png`): sent as images, not text.
    pub images: Vec<(String, ImageData)>,
    pub problems: Vec<String>,
}

/// The `@` mentions of files and directories in `prompt`, each once.
/// `@mcp:…` is a server's resource, attached elsewhere.
pub fn mentioned(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let path = rest.trim_end_matches([',', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '.']);
        if path.is_empty() || path.starts_with("mcp:") || out.iter().any(|p| p == path) {
            continue;
        }
        out.push(path.to_string());
    }
    out
}

/// Reads every `@path` of `prompt`, resolved against `cwd`, that lies in
/// `workspace` and not under one of `unreadable` (the secrets the sandbox
/// keeps from commands: `~/.ssh`, cairn's keys, `deny_read`).
pub fn read(prompt: &str, cwd: &Path, workspace: &Path, unreadable: &[PathBuf]) -> Mentions {
    let mut out = Mentions::default();
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    for mention in mentioned(prompt) {
        let path = cwd.join(&mention);
        let Ok(real) = path.canonicalize() else {
            // `@alice` is a name, not a file; a path that is not there is
            // worth saying.
            if mention.contains(['/', '.']) {
                out.problems.push(format!(
                    "@{mention} was not attached: no such file or directory"
                ));
            }
            continue;
        };
        if !real.starts_with(&root) {
            out.problems.push(format!(
                "@{mention} was not attached: it is outside the project ({})",
                root.display()
            ));
            continue;
        }
        if unreadable.iter().any(|d| real.starts_with(d)) {
            out.problems.push(format!(
                "@{mention} was not attached: it holds secrets kept from the model"
            ));
            continue;
        }
        if real.is_file() && is_picture(&real) {
            let opened = crate::tools::beneath::open_exact(&real).map_err(|e| e.to_string());
            match opened.and_then(|f| crate::images::read_open(f).map_err(|e| e.to_string())) {
                Ok((image, _)) => out.images.push((mention, image)),
                Err(why) => out
                    .problems
                    .push(format!("@{mention} was not attached: {why}")),
            }
            continue;
        }
        let read = if real.is_dir() {
            list_dir(&real, &mention)
        } else {
            read_file(&real, &mention)
        };
        match read {
            Ok(a) => out.attached.push(a),
            Err(why) => out
                .problems
                .push(format!("@{mention} was not attached: {why}")),
        }
    }
    out
}

/// A picture by its name and its first bytes: a `.png` that is really
/// text is attached as text.
fn is_picture(path: &Path) -> bool {
    if !crate::images::has_image_extension(path) {
        return false;
    }
    let mut head = [0u8; 12];
    let n = open_regular(path)
        .and_then(|(mut f, _)| f.read(&mut head).map_err(|e| e.to_string()))
        .unwrap_or(0);
    crate::images::looks_like_image(&head[..n])
}

/// The parts the prompt's `@path` mentions add to the user's message (and
/// the pictures it names, with their mentions); each attachment and each
/// path that could not be attached is told to the front end.
pub(crate) async fn attach(
    prompt: &str,
    cwd: PathBuf,
    workspace: PathBuf,
    shared: &Shared,
) -> (Vec<Part>, Vec<(String, ImageData)>) {
    if mentioned(prompt).is_empty() {
        return (Vec::new(), Vec::new());
    }
    let prompt = prompt.to_string();
    let unreadable = shared.sandbox.unreadable(&workspace);
    let found = tokio::task::spawn_blocking(move || read(&prompt, &cwd, &workspace, &unreadable))
        .await
        .unwrap_or_default();
    let secrets = crate::tools::env::current();
    for text in found.problems {
        shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text,
        });
    }
    let mut parts = Vec::new();
    for mut a in found.attached {
        // Redacted as tool output is: a `.env` may hold the provider's key.
        a.text = secrets.redact(&a.text);
        parts.push(Part::Text {
            text: a.text.clone(),
        });
        shared.emit(AgentEvent::Attached {
            mention: a.mention,
            summary: a.summary,
            text: a.text,
        });
    }
    (parts, found.images)
}

fn wrap(mention: &str, kind: &str, note: &str, body: &str) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!("\n[{note}]")
    };
    format!("{ATTACHED_TAG}{kind}=\"{mention}\">\n{body}{note}\n</attached>")
}

/// Opens the checked real path `path` only when it is a regular file (a
/// pipe would block the read forever, a device never ends) and still the
/// file that was checked: a link swapped in since fails the open.
fn open_regular(path: &Path) -> Result<(File, u64), String> {
    let file = crate::tools::beneath::open_exact(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file (a pipe, socket or device)".into());
    }
    Ok((file, meta.len()))
}

/// How many lines `head` and the rest of `file` hold, counting no further
/// than [`MAX_COUNTED`]; `None` past that.
fn count_lines(head: &[u8], file: File) -> Option<usize> {
    let mut total = bytecount(head);
    let mut last = head.last().copied();
    let mut rest = file.take(MAX_COUNTED + 1);
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen = head.len() as u64;
    loop {
        let n = rest.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        seen += n as u64;
        if seen > MAX_COUNTED {
            return None;
        }
        total += bytecount(&buf[..n]);
        last = Some(buf[n - 1]);
    }
    Some(total + usize::from(last.is_some_and(|b| b != b'\n')))
}

fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

fn read_file(path: &Path, mention: &str) -> Result<Attachment, String> {
    let (mut file, size) = open_regular(path)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(format!("it is a binary file ({size} bytes)"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut kept = String::new();
    let mut lines = 0;
    for line in text.lines() {
        if lines == MAX_LINES || kept.len() + line.len() + 1 > MAX_BYTES {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        lines += 1;
    }
    let total = count_lines(&bytes, file);
    let (summary, note) = match total {
        Some(total) => described(lines, total),
        None => (
            format!("first {lines} lines of {size} bytes"),
            "cut: the rest of this large file is not shown; read it with the view tool".into(),
        ),
    };
    Ok(Attachment {
        mention: mention.to_string(),
        text: wrap(mention, "path", &note, kept.trim_end_matches('\n')),
        summary,
    })
}

/// The summary and the note of a file of `total` lines, `lines` attached.
fn described(lines: usize, total: usize) -> (String, String) {
    if lines < total {
        (
            format!("first {lines} of {total} lines"),
            format!(
                "cut: lines {}–{total} are not shown; read them with the view tool",
                lines + 1
            ),
        )
    } else {
        let unit = if total == 1 { "line" } else { "lines" };
        (format!("{total} {unit}"), String::new())
    }
}

fn list_dir(path: &Path, mention: &str) -> Result<Attachment, String> {
    // Listed through a descriptor of the checked folder itself.
    let dir = crate::tools::beneath::open_exact(path).map_err(|e| e.to_string())?;
    let pinned = crate::tools::beneath::named_by_descriptor(&dir, path);
    let mut names: Vec<String> = std::fs::read_dir(&pinned)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    names.sort();
    let total = names.len();
    names.truncate(MAX_ENTRIES);
    let note = if total > MAX_ENTRIES {
        format!("cut: {} more entries are not listed", total - MAX_ENTRIES)
    } else {
        String::new()
    };
    Ok(Attachment {
        mention: mention.to_string(),
        summary: format!(
            "directory, {total} {}",
            if total == 1 { "entry" } else { "entries" }
        ),
        text: wrap(mention, "directory", &note, &names.join("\n")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_mentions_without_trailing_punctuation_or_resources() {
        assert_eq!(
            mentioned("read @src/main.rs, then @docs/ and @mcp:demo:x @src/main.rs."),
            ["src/main.rs", "docs/"]
        );
        assert!(mentioned("mail me@example.com").is_empty());
    }

    #[test]
    fn the_message_text_is_the_prompt_without_what_it_attached() {
        let m = crate::conversation::Message {
            role: crate::conversation::Role::User,
            parts: vec![
                Part::Text {
                    text: wrap("a.rs", "path", "", "fn main() {}"),
                },
                Part::Text {
                    text: "explain @a.rs".into(),
                },
            ],
        };
        assert_eq!(m.text(), "explain @a.rs");
    }

    #[test]
    fn attaches_files_and_listings_capped_and_refuses_outside_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().join("project");
        std::fs::create_dir(root).unwrap();
        std::fs::write(dir.path().join("outside.txt"), "x").unwrap();
        std::fs::write(root.join("small.txt"), "one\ntwo\n").unwrap();
        let big: String = (0..MAX_LINES + 50).map(|i| format!("line {i}\n")).collect();
        std::fs::write(root.join("big.txt"), big).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.rs"), "").unwrap();
        std::fs::write(root.join("bin"), [0u8, 1, 2]).unwrap();
        let m = read(
            "see @small.txt @big.txt @sub @bin @missing.txt @alice @../outside.txt",
            root,
            root,
            &[],
        );
        assert_eq!(m.attached.len(), 3, "{:?}", m.problems);
        assert_eq!(m.attached[0].summary, "2 lines");
        assert!(
            m.attached[0].text.contains("one\ntwo") && m.attached[0].text.starts_with(ATTACHED_TAG)
        );
        assert_eq!(
            m.attached[1].summary,
            format!("first {MAX_LINES} of {} lines", MAX_LINES + 50)
        );
        assert!(m.attached[1].text.contains("are not shown"));
        assert!(!m.attached[1].text.contains(&format!("line {MAX_LINES}\n")));
        assert_eq!(m.attached[2].summary, "directory, 1 entry");
        assert!(m.attached[2].text.contains("a.rs"));
        let problems = m.problems.join("\n");
        assert!(
            problems.contains("@bin was not attached: it is a binary file"),
            "{problems}"
        );
        assert!(
            problems.contains("@missing.txt was not attached"),
            "{problems}"
        );
        assert!(!problems.contains("@alice"), "{problems}");
        assert!(
            problems.contains("@../outside.txt was not attached: it is outside the project"),
            "{problems}"
        );
    }

    #[test]
    fn secrets_the_sandbox_keeps_from_commands_are_not_attached_even_through_a_link() {
        let home = tempfile::tempdir().unwrap();
        let home = &home.path().canonicalize().unwrap();
        std::fs::create_dir(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE").unwrap();
        std::fs::create_dir(home.join("project")).unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("project/keys")).unwrap();
        let sandbox = crate::sandbox::Sandbox::with_dirs(
            &Default::default(),
            true,
            Some(home.clone()),
            Vec::new(),
        );
        // cairn started in the home directory: `~/.ssh` is in the workspace.
        let unreadable = sandbox.unreadable(home);
        let m = read(
            "@.ssh/id_ed25519 @project/keys/id_ed25519 @.ssh",
            home,
            home,
            &unreadable,
        );
        assert!(m.attached.is_empty(), "{:?}", m.attached);
        assert_eq!(m.problems.len(), 3, "{:?}", m.problems);
        assert!(m.problems[0].contains("holds secrets kept from the model"));
    }
}
