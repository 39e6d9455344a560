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

/// The files as one name each: a file the server named twice (`a.ts` and
/// `sub/../a.ts`, or through a link) would be written twice, the second
/// over the first, so such an answer is refused.
pub(super) fn one_name_each(
    files: BTreeMap<PathBuf, Vec<TextEdit>>,
) -> Result<BTreeMap<PathBuf, Vec<TextEdit>>, String> {
    let mut out: BTreeMap<PathBuf, Vec<TextEdit>> = BTreeMap::new();
    let mut real: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for (original, edits) in files {
        let path = crate::paths::lexical(&original);
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if let Some(first) = real.insert(key, original.clone()) {
            return Err(format!(
                "the language server named one file twice ({} and {}); nothing was renamed",
                first.display(),
                original.display()
            ));
        }
        out.insert(path, edits);
    }
    Ok(out)
}

fn plain(e: OneOf<TextEdit, lsp_types::AnnotatedTextEdit>) -> TextEdit {
    match e {
        OneOf::Left(e) => e,
        OneOf::Right(a) => a.text_edit,
    }
}

/// The change of one file: its bytes now, and the text the rename makes.
pub(super) fn plan_file(
    path: &Path,
    edits: &[TextEdit],
    ctx: &ToolContext,
) -> Result<Plan, String> {
    let shown = ctx.display_path(path);
    let bytes = crate::tools::regular::read_bounded(path, MAX_FILE)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let raw = std::str::from_utf8(&bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
    let renamed = super::edits::apply(raw, edits)
        .map_err(|e| format!("{shown}: the language server's rename has {e}"))?;
    let old = FileText::decode(&bytes, &shown)?;
    let body = renamed.strip_prefix('\u{feff}').unwrap_or(&renamed);
    let new_text = if old.crlf {
        body.replace("\r\n", "\n")
    } else {
        body.to_string()
    };
    if new_text.len() as u64 > MAX_FILE {
        return Err(format!(
            "the language server's rename would make {shown} larger than {} MiB; nothing was \
             renamed",
            MAX_FILE >> 20
        ));
    }
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
        let now = crate::tools::regular::read_bounded(&p.path, MAX_FILE);
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
    let files = ready.iter().map(Plan::file_diff).collect();
    ToolOutput::text(text).with_display(crate::tools::ToolDisplay::Diffs { files })
}

/// The preview of a worked-out rename.
pub(super) fn preview(plans: &[Plan]) -> crate::tools::Preview {
    crate::tools::Preview::Diffs {
        files: plans.iter().map(Plan::file_diff).collect(),
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

    #[test]
    fn a_file_named_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().canonicalize().unwrap();
        std::fs::create_dir(w.join("sub")).unwrap();
        std::fs::write(w.join("a.ts"), "x").unwrap();
        std::os::unix::fs::symlink(w.join("a.ts"), w.join("link.ts")).unwrap();
        let edit = || vec![TextEdit::new(Default::default(), "y".into())];
        for other in ["sub/../a.ts", "link.ts"] {
            let files = BTreeMap::from([(w.join("a.ts"), edit()), (w.join(other), edit())]);
            let why = one_name_each(files).unwrap_err();
            assert!(why.contains("named one file twice"), "{other}: {why}");
        }
        let fine = BTreeMap::from([(w.join("a.ts"), edit()), (w.join("b.ts"), edit())]);
        assert_eq!(one_name_each(fine).unwrap().len(), 2);
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
