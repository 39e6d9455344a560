//! A rename through the language server: the server's answer (which
//! files change, and where) is worked out before the call is judged, so
//! the gate sees every file and the person reviews every hunk in one
//! dialog; only the hunks they accept are written, and only while each
//! file still holds what the server saw.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lsp_types::{DocumentChanges, OneOf, TextEdit, WorkspaceEdit};
use serde_json::{Value, json};

use crate::tools::edit_core::{FileText, Plan};
use crate::tools::{RejectedHunks, ToolContext, ToolOutput};

/// The largest file read for a question or a rename.
pub const MAX_FILE: u64 = 8 << 20;

/// Most files one rename may change: more cannot be reviewed.
pub const MAX_FILES: usize = 200;

/// The server's `WorkspaceEdit` as text edits per file.
pub(super) fn edits_by_file(answer: Value) -> Result<BTreeMap<PathBuf, Vec<TextEdit>>, String> {
    if answer.is_null() {
        return Err("the language server found nothing to rename there".into());
    }
    let edit: WorkspaceEdit = serde_json::from_value(answer)
        .map_err(|e| format!("the language server's rename could not be read: {e}"))?;
    let mut files: BTreeMap<PathBuf, Vec<TextEdit>> = BTreeMap::new();
    let mut add = |uri: &lsp_types::Uri, edits: Vec<TextEdit>| -> Result<(), String> {
        let path = super::uri::to_path(uri.as_str())
            .ok_or_else(|| format!("the language server named `{}`, not a file", uri.as_str()))?;
        files.entry(path).or_default().extend(edits);
        Ok(())
    };
    match edit.document_changes {
        Some(DocumentChanges::Edits(docs)) => {
            for d in docs {
                add(
                    &d.text_document.uri,
                    d.edits.into_iter().map(plain).collect(),
                )?;
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    lsp_types::DocumentChangeOperation::Edit(d) => add(
                        &d.text_document.uri,
                        d.edits.into_iter().map(plain).collect(),
                    )?,
                    lsp_types::DocumentChangeOperation::Op(_) => {
                        return Err("the language server's rename also creates, renames or \
                                    deletes files; cairn applies only changes inside files \
                                    (move the file with a command if that is wanted)"
                            .into());
                    }
                }
            }
        }
        None => {
            for (uri, edits) in edit.changes.unwrap_or_default() {
                add(&uri, edits)?;
            }
        }
    }
    files.retain(|_, e| !e.is_empty());
    if files.is_empty() {
        return Err("the language server's rename changes nothing".into());
    }
    Ok(files)
}

fn plain(e: OneOf<TextEdit, lsp_types::AnnotatedTextEdit>) -> TextEdit {
    match e {
        OneOf::Left(e) => e,
        OneOf::Right(a) => a.text_edit,
    }
}

/// The byte offset of an LSP position (0-based line, UTF-16 column) in
/// `text`, whose lines end in `\n`, `\r\n` or `\r`.
fn offset(text: &str, line: u32, character: u32) -> Option<usize> {
    let mut at = 0;
    let bytes = text.as_bytes();
    for _ in 0..line {
        let rest = &bytes[at..];
        let end = rest.iter().position(|b| *b == b'\n' || *b == b'\r')?;
        at += end + 1;
        if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') {
            at += 1;
        }
    }
    let line_text = &text[at..];
    let line_end = line_text.find(['\n', '\r']).unwrap_or(line_text.len());
    let mut units = 0u32;
    for (i, c) in line_text[..line_end].char_indices() {
        if units >= character {
            return Some(at + i);
        }
        units += c.len_utf16() as u32;
    }
    // A column past the line's end means its end (the protocol says so).
    Some(at + line_end)
}

/// `text` with `edits` applied; they may not overlap.
pub(super) fn apply(text: &str, edits: &[TextEdit]) -> Result<String, String> {
    let mut spans = Vec::with_capacity(edits.len());
    for e in edits {
        let (s, t) = (e.range.start, e.range.end);
        let from = offset(text, s.line, s.character);
        let to = offset(text, t.line, t.character);
        match (from, to) {
            (Some(a), Some(b)) if a <= b => spans.push((a, b, e.new_text.as_str())),
            _ => {
                return Err(format!(
                    "the language server's rename points past the file's end (line {})",
                    s.line + 1
                ));
            }
        }
    }
    spans.sort_by_key(|s| (s.0, s.1));
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err("the language server's rename has overlapping changes".into());
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (a, b, new) in spans {
        out.push_str(&text[at..a]);
        out.push_str(new);
        at = b;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The change of one file: its bytes now, and the text the rename makes.
pub(super) fn plan_file(
    path: &Path,
    edits: &[TextEdit],
    ctx: &ToolContext,
) -> Result<Plan, String> {
    use std::io::Read;
    let shown = ctx.display_path(path);
    let mut bytes = Vec::new();
    crate::tools::beneath::open(path)
        .and_then(|f| f.take(MAX_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("{shown} is too large to rename in"));
    }
    let raw = std::str::from_utf8(&bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
    let renamed = apply(raw, edits).map_err(|e| format!("{shown}: {e}"))?;
    let old = FileText::decode(&bytes, &shown)?;
    let body = renamed.strip_prefix('\u{feff}').unwrap_or(&renamed);
    let new_text = if old.crlf {
        body.replace("\r\n", "\n")
    } else {
        body.to_string()
    };
    Ok(Plan {
        path: path.to_path_buf(),
        shown,
        after: old.encode(&new_text),
        before: Some(bytes),
        old_text: old.text,
        new_text,
        form: Some((old.bom, old.crlf)),
    })
}

/// Writes the accepted hunks of every file, if every file still holds
/// what the server renamed in; the model's answer.
pub(super) fn write(plans: Vec<Plan>, from: &str, to: &str, ctx: &ToolContext) -> ToolOutput {
    for p in &plans {
        let now = crate::tools::beneath::open(&p.path).and_then(|mut f| {
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut b).map(|_| b)
        });
        if now.ok().as_ref() != p.before.as_ref() {
            return ToolOutput::error(format!(
                "{} changed after the rename was worked out; nothing was renamed. Ask for \
                 the rename again.",
                p.shown
            ));
        }
    }
    let rejected = ctx.rejected.clone().unwrap_or_default();
    let mut first = 0;
    let mut lines = Vec::new();
    let mut notes = Vec::new();
    let mut ready = Vec::new();
    for mut plan in plans {
        let n = crate::diff::hunks(&plan.old_text, &plan.new_text).len();
        let mine: Vec<usize> = (rejected.hunks.iter())
            .filter(|h| (first..first + n).contains(h))
            .map(|h| h - first)
            .collect();
        first += n;
        if n > 0 && mine.len() == n {
            notes.push(format!(
                "{}: every hunk rejected, left as it was",
                plan.shown
            ));
            continue;
        }
        let mine = RejectedHunks {
            hunks: mine,
            reason: None,
        };
        match plan.keep_accepted(&mine) {
            Ok(note) if !note.is_empty() => notes.push(format!("{}: {note}", plan.shown)),
            Ok(_) => {}
            Err(e) => return ToolOutput::error(e),
        }
        ready.push(plan);
    }
    let mut written = Vec::new();
    for plan in &ready {
        if let Err(e) = plan.write(ctx) {
            let done = if written.is_empty() {
                "nothing else was written".to_string()
            } else {
                format!("already written: {}", written.join(", "))
            };
            return ToolOutput::error(format!("{e}; {done}"));
        }
        let (added, removed) = plan.counts();
        lines.push(format!("  {} (+{added} -{removed} lines)", plan.shown));
        written.push(plan.shown.clone());
    }
    let mut text = format!(
        "Renamed `{from}` to `{to}` in {} {}:\n{}",
        written.len(),
        if written.len() == 1 { "file" } else { "files" },
        lines.join("\n")
    );
    if !notes.is_empty() {
        // The whole change's tally first: the pane reads it back.
        text.push_str(&format!(
            "\n\n{}{} of {}; per file:\n\n",
            crate::tools::hunks::NOTE_START,
            rejected.hunks.iter().filter(|h| **h < first).count(),
            first
        ));
        text.push_str(&notes.join("\n\n"));
        if let Some(r) = rejected.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            text.push_str(&format!("\n\nThe person's reason: {}", r.trim()));
        }
    }
    let files = ready.iter().map(file_diff).collect();
    ToolOutput::text(text).with_display(crate::tools::ToolDisplay::Diffs { files })
}

fn file_diff(p: &Plan) -> crate::diff::FileDiff {
    crate::diff::FileDiff::new(p.shown.clone(), p.old_text.clone(), p.new_text.clone())
}

/// The preview of a worked-out rename.
pub(super) fn preview(plans: &[Plan]) -> crate::tools::Preview {
    crate::tools::Preview::Diffs {
        files: plans.iter().map(file_diff).collect(),
    }
}

/// The part of a rename call that must not change between working it
/// out and running it.
pub(super) fn asked(input: &Value) -> Value {
    json!({
        "file_path": input["file_path"],
        "line": input["line"],
        "symbol": input["symbol"],
        "new_name": input["new_name"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> TextEdit {
        TextEdit {
            range: Range::new(Position::new(l1, c1), Position::new(l2, c2)),
            new_text: text.into(),
        }
    }

    #[test]
    fn edits_land_by_utf16_column_on_any_line_ending() {
        let text = "let é = 1;\r\nuse(é); use(é)\rend\n";
        let out = apply(
            text,
            &[
                edit(0, 4, 0, 5, "x"),
                edit(1, 12, 1, 13, "x"),
                edit(1, 4, 1, 5, "x"),
            ],
        )
        .unwrap();
        assert_eq!(out, "let x = 1;\r\nuse(x); use(x)\rend\n");
        // An emoji is two UTF-16 units.
        assert_eq!(apply("a😀b c", &[edit(0, 3, 0, 4, "Z")]).unwrap(), "a😀Z c");
    }

    #[test]
    fn overlapping_or_out_of_range_edits_are_refused() {
        assert!(apply("abc\n", &[edit(0, 0, 0, 2, "x"), edit(0, 1, 0, 3, "y")]).is_err());
        assert!(apply("abc\n", &[edit(5, 0, 5, 1, "x")]).is_err());
    }

    #[test]
    fn a_workspace_edit_is_read_in_either_form_and_file_operations_are_refused() {
        let changes = json!({"changes": {"file:///w/a.ts": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "b"}
        ]}});
        let files = edits_by_file(changes).unwrap();
        assert_eq!(files.len(), 1);
        assert!(files.contains_key(Path::new("/w/a.ts")));
        let docs = json!({"documentChanges": [
            {"textDocument": {"uri": "file:///w/a.ts", "version": 3}, "edits": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "b"}
            ]},
            {"kind": "rename", "oldUri": "file:///w/a.ts", "newUri": "file:///w/b.ts"}
        ]});
        let err = edits_by_file(docs).unwrap_err();
        assert!(err.contains("creates, renames or deletes files"), "{err}");
        assert!(edits_by_file(Value::Null).is_err());
    }
}
