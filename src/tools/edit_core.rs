//! What `edit`, `multiedit` and `write` share: decoding a file while keeping
//! its byte-order mark and line endings, the "viewed and unchanged" rule,
//! applying string replacements with errors the model can act on, and
//! writing the result with its undo record.

use std::fs;
use std::path::{Path, PathBuf};

use similar::{DiffTag, TextDiff};

use super::state::hash_bytes;
use super::{ToolContext, ToolDisplay, ToolOutput};

const BOM: &str = "\u{feff}";
/// Above this many windows the nearest-lines search stops looking.
const MAX_WINDOWS: usize = 20_000;
const SNIPPET_CONTEXT: usize = 3;
const MAX_SNIPPET_LINES: usize = 40;

/// A text file's content as the model sees it: no BOM, and `\n` line ends
/// when the file uses CRLF throughout; `encode` restores both.
#[derive(Debug, Clone, PartialEq)]
pub struct FileText {
    pub bom: bool,
    pub crlf: bool,
    pub text: String,
}

impl FileText {
    pub fn decode(bytes: &[u8], shown: &str) -> Result<FileText, String> {
        let raw = std::str::from_utf8(bytes).map_err(|_| {
            format!("{shown} is not UTF-8 text; it cannot be edited with string replacement")
        })?;
        let (bom, body) = match raw.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        let crlf_count = body.matches("\r\n").count();
        let crlf = crlf_count > 0 && crlf_count == body.matches('\n').count();
        let text = if crlf {
            body.replace("\r\n", "\n")
        } else {
            body.to_string()
        };
        Ok(FileText { bom, crlf, text })
    }

    pub fn encode(&self, text: &str) -> Vec<u8> {
        let mut out = String::with_capacity(text.len() + 8);
        if self.bom {
            out.push_str(BOM);
        }
        if self.crlf {
            out.push_str(&text.replace("\r\n", "\n").replace('\n', "\r\n"));
        } else {
            out.push_str(text);
        }
        out.into_bytes()
    }

    /// Brings a string from the model to the same line ends as `text`.
    pub fn normalise(&self, s: &str) -> String {
        if self.crlf {
            s.replace("\r\n", "\n")
        } else {
            s.to_string()
        }
    }
}

/// One replacement asked for by the model.
#[derive(Debug, Clone)]
pub struct EditSpec {
    pub old_string: String,
    pub new_string: String,
    pub replace_all: bool,
}

/// Refuses to change an existing file the model has not viewed, or that
/// changed on disk since it did, so an edit is never based on stale text.
pub fn check_viewed(ctx: &ToolContext, path: &Path, current: &[u8]) -> Result<(), String> {
    let shown = ctx.display_path(path);
    match ctx.session.viewed(path) {
        None => Err(format!(
            "{shown} has not been viewed in this session; view it first so the change is based on its current content"
        )),
        Some(stamp) if stamp.hash != hash_bytes(current) => Err(format!(
            "{shown} changed on disk since you last viewed it; view it again before changing it"
        )),
        Some(_) => Ok(()),
    }
}

/// Applies one replacement to `text`.
pub fn apply_edit(text: &str, old: &str, new: &str, replace_all: bool) -> Result<String, String> {
    if old.is_empty() {
        return Err("`old_string` is empty; to replace a whole file use write".into());
    }
    if old == new {
        return Err("`old_string` and `new_string` are identical; nothing would change".into());
    }
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    match starts.len() {
        0 => Err(no_match_message(text, old)),
        1 => Ok(text.replacen(old, new, 1)),
        n if replace_all => {
            let _ = n;
            Ok(text.replace(old, new))
        }
        n => {
            let lines: Vec<String> = starts
                .iter()
                .map(|&i| (text[..i].matches('\n').count() + 1).to_string())
                .collect();
            Err(format!(
                "old_string matches {n} places (lines {}); add surrounding context to make it unique, or set replace_all",
                lines.join(", ")
            ))
        }
    }
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Explains a failed match by showing where the file looks most like
/// `old`, with line numbers, so the model can copy the exact text.
fn no_match_message(text: &str, old: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let want: Vec<&str> = old.trim_matches('\n').lines().collect();
    let n = want.len().max(1);
    if lines.is_empty() {
        return "old_string was not found: the file is empty".into();
    }
    let want_text = want.join("\n");
    let want_ws = collapse_ws(&want_text);
    let mut best: Option<(f32, usize)> = None;
    let windows = lines.len().saturating_sub(n) + 1;
    for start in 0..windows.min(MAX_WINDOWS) {
        let end = (start + n).min(lines.len());
        let window = lines[start..end].join("\n");
        let score = if collapse_ws(&window) == want_ws {
            2.0
        } else if want_text.len() + window.len() <= 4000 {
            TextDiff::from_chars(window.as_str(), want_text.as_str()).ratio()
        } else {
            TextDiff::from_lines(window.as_str(), want_text.as_str()).ratio()
        };
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, start));
        }
    }
    let Some((score, start)) = best else {
        return "old_string was not found in the file".into();
    };
    if score < 0.3 {
        return "old_string was not found in the file, and no lines look similar; view the file to copy the exact text".into();
    }
    let end = (start + n).min(lines.len());
    let shown = numbered(&lines, start, end);
    let why = if score >= 2.0 {
        "the text differs only in whitespace or indentation"
    } else {
        "the nearest-looking lines are"
    };
    format!(
        "old_string was not found in the file; {why} (lines {}-{}):\n{shown}\nCopy the text exactly as it appears (without the line-number prefix).",
        start + 1,
        end
    )
}

fn numbered(lines: &[&str], start: usize, end: usize) -> String {
    let width = end.to_string().len();
    lines[start..end]
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>width$}\t{l}", start + i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An edit worked out in memory, ready to preview or write.
#[derive(Debug, Clone)]
pub struct Plan {
    pub path: PathBuf,
    pub shown: String,
    /// The bytes on disk now; `None` for a new file.
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    pub old_text: String,
    pub new_text: String,
    /// The byte-order mark and CRLF line ends `new_text` is written with
    /// (edits keep the file's); `None` writes the text as it is.
    pub form: Option<(bool, bool)>,
}

impl Plan {
    pub fn counts(&self) -> (usize, usize) {
        crate::diff::line_counts(&self.old_text, &self.new_text)
    }

    /// The change as the dialog, the pane and the store show it.
    pub fn file_diff(&self) -> crate::diff::FileDiff {
        crate::diff::FileDiff::new(
            self.shown.clone(),
            self.old_text.clone(),
            self.new_text.clone(),
        )
    }

    pub fn preview(&self) -> super::Preview {
        super::Preview::Diff(self.file_diff())
    }

    /// Writes the change (to the disk, or an editor's buffer when the
    /// front end offers its files), keeping the old content for undo and a
    /// fresh view stamp so the next edit needs no new view.
    pub fn write(&self, ctx: &ToolContext) -> Result<(), String> {
        if let Some(dir) = self.path.parent() {
            super::beneath::pinned_dir(dir)
                .map_err(|e| format!("cannot create the directory {}: {e}", dir.display()))?;
        }
        ctx.session.record_version(&self.path, self.before.clone());
        super::files::write(ctx, &self.path, &self.after)?;
        if self.before.as_deref() != Some(self.after.as_slice()) {
            ctx.session.wrote(&self.path, &self.after);
        }
        Ok(())
    }

    /// The model's answer: counts and a numbered snippet of the new text
    /// around the change, plus the diff for the interface.
    pub fn output(&self, verb: &str) -> ToolOutput {
        let (added, removed) = self.counts();
        let mut text = format!("{verb} {} (+{added} -{removed} lines)", self.shown);
        if let Some(snippet) = self.snippet() {
            text.push_str("\n\n");
            text.push_str(&snippet);
        }
        ToolOutput::text(text).with_display(ToolDisplay::Diff(self.file_diff()))
    }

    fn snippet(&self) -> Option<String> {
        let diff = TextDiff::from_lines(&self.old_text, &self.new_text);
        let changed: Vec<_> = diff
            .ops()
            .iter()
            .filter(|op| op.tag() != DiffTag::Equal)
            .map(|op| op.new_range())
            .collect();
        let first = changed.first()?.start;
        let last = changed.last()?.end;
        let lines: Vec<&str> = self.new_text.lines().collect();
        if lines.is_empty() {
            return None;
        }
        let start = first.saturating_sub(SNIPPET_CONTEXT).min(lines.len());
        let end = (last + SNIPPET_CONTEXT)
            .min(lines.len())
            .min(start + MAX_SNIPPET_LINES);
        if start >= end {
            return None;
        }
        Some(numbered(&lines, start, end))
    }
}

/// Reads `path` for an edit: it must exist, be a file, and have been viewed.
pub fn read_for_edit(ctx: &ToolContext, path: &Path) -> Result<(Vec<u8>, FileText), String> {
    let shown = ctx.display_path(path);
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{shown} does not exist; use write to create a new file"
            ));
        }
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    if meta.is_dir() {
        return Err(format!("{shown} is a directory, not a file"));
    }
    if let Some(refusal) = super::regular::refusal(&shown, &meta) {
        return Err(refusal);
    }
    let bytes = super::files::read_bounded(ctx, path, super::regular::MAX_EDIT_FILE)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    check_viewed(ctx, path, &bytes)?;
    let text = FileText::decode(&bytes, &shown)?;
    Ok((bytes, text))
}

/// Works out the result of `edits` applied in order to the file at `path`.
/// With more than one edit, an error names the edit that failed.
pub fn plan_edits(ctx: &ToolContext, path: &Path, edits: &[EditSpec]) -> Result<Plan, String> {
    let (before, file) = read_for_edit(ctx, path)?;
    let mut text = file.text.clone();
    for (i, e) in edits.iter().enumerate() {
        let old = file.normalise(&e.old_string);
        let new = file.normalise(&e.new_string);
        text = apply_edit(&text, &old, &new, e.replace_all).map_err(|msg| {
            if edits.len() > 1 {
                format!(
                    "edit {} of {} failed, so no edit was applied: {msg}",
                    i + 1,
                    edits.len()
                )
            } else {
                msg
            }
        })?;
    }
    Ok(Plan {
        shown: ctx.display_path(path),
        path: path.to_path_buf(),
        after: file.encode(&text),
        before: Some(before),
        form: Some((file.bom, file.crlf)),
        old_text: file.text,
        new_text: text,
    })
}
