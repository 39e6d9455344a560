//! Formatting an edited file once the edit is written. The file tools know
//! only this face ([`Formatting`]); the formatters themselves (which one
//! serves a file, running it in the sandbox, a language server's
//! formatting) are `crate::format`'s, which the agent hands in.
//!
//! The formatter gets the text the edit wrote and answers with the
//! formatted text; cairn writes it the way the edit was written (atomically,
//! beneath the workspace), keeping the file's byte-order mark and line
//! ends, and records no new version: undo takes the file back to what it
//! was before the edit. A formatter that fails leaves the edit as written,
//! and the note says why.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::ToolContext;
use super::edit_core::{FileText, Plan};

/// The formatters of a session.
pub trait Formatting: Send + Sync {
    /// What formats `path` after an edit: `Ok` with its name (`rustfmt`,
    /// or a language server's), `Err` with why the formatter asked for
    /// cannot run here; `None` when nothing formats the file.
    fn formatter_for(&self, path: &Path) -> Option<Result<String, String>>;
    /// The formatted `text` of `path`, or why it could not be had. Blocks
    /// (the file tools call it on a blocking thread), within its own time
    /// limit and until `cancel`.
    fn format(&self, path: &Path, text: &str, cancel: &CancellationToken)
    -> Result<String, String>;
}

/// How the note to the model begins when the file was formatted; the
/// pane reads it back.
const FORMATTED: &str = "Formatted by ";
/// …and when it was not.
const NOT_FORMATTED: &str = "Not formatted: ";
/// How a note that it was not formatted ends.
const AS_WRITTEN: &str = "; the edit is on disk as written.";

/// Formats the file `plan` has just written, when a formatter serves it:
/// writes the formatted text and makes `plan` say it, so the model's
/// answer and the diff show the file as it now is. The note for the model,
/// `None` when no formatter serves the file.
pub fn after_write(plan: &mut Plan, ctx: &ToolContext) -> Option<String> {
    let formatting = ctx.formatting.as_ref()?;
    let name = match formatting.formatter_for(&plan.path)? {
        Ok(name) => name,
        Err(why) => return Some(format!("{NOT_FORMATTED}{why}{AS_WRITTEN}")),
    };
    let file = match FileText::decode(&plan.after, &plan.shown) {
        Ok(f) => f,
        Err(why) => return Some(format!("{NOT_FORMATTED}{why}{AS_WRITTEN}")),
    };
    let formatted = match formatting.format(&plan.path, &file.text, &ctx.cancel) {
        Ok(text) => text,
        Err(why) => return Some(format!("{NOT_FORMATTED}{why}{AS_WRITTEN}")),
    };
    // The file keeps its byte-order mark and, when it used them
    // throughout, its CRLF line ends, whatever the formatter's stdin mode
    // does with them.
    let bytes = file.encode(&formatted);
    if bytes == plan.after {
        return Some(format!("{FORMATTED}{name}: it found nothing to change."));
    }
    // A command running in the background could have changed the file
    // since the edit wrote it: its change is not overwritten. (The disk
    // is read, not a front end's buffer, which may not hold the edit yet.)
    let now = super::regular::read_bounded(&plan.path, super::regular::MAX_EDIT_FILE);
    if now.ok().as_deref() != Some(plan.after.as_slice()) {
        return Some(format!(
            "{NOT_FORMATTED}{} changed on disk while {name} ran (something else wrote it), so \
             the formatted text was not written; view the file before changing it again.",
            plan.shown
        ));
    }
    if let Err(why) = super::files::write(ctx, &plan.path, &bytes) {
        return Some(format!("{NOT_FORMATTED}{why}{AS_WRITTEN}"));
    }
    let (added, removed) = crate::diff::line_counts(&file.text, &formatted);
    // The text shown is in the plan's own form: an edit's without the
    // mark and with `\n` ends, a write's as the bytes are.
    plan.new_text = match plan.form {
        Some(_) => FileText::decode(&bytes, &plan.shown).map_or(formatted, |f| f.text),
        None => String::from_utf8_lossy(&bytes).into_owned(),
    };
    plan.after = bytes;
    Some(format!(
        "{FORMATTED}{name} (+{added} -{removed} lines): the lines above and the file on disk \
         are the formatted text."
    ))
}

/// What the review dialog of an edit of `path` says of formatting.
pub fn dialog_line(formatting: &dyn Formatting, path: &Path) -> Option<String> {
    Some(match formatting.formatter_for(path)? {
        Ok(name) => format!("will be formatted by {name} after it is applied"),
        Err(why) => format!("will not be formatted: {why}"),
    })
}

/// What an edit's output says of formatting, for its pane: `Ok` with
/// "formatted by rustfmt …", `Err` with why it was not formatted.
pub fn note_of(output: &str) -> Option<Result<String, String>> {
    output.lines().find_map(|line| {
        if let Some(rest) = line.strip_prefix(FORMATTED) {
            let shown = rest.split_once(": the lines above").map_or(rest, |r| r.0);
            let shown = shown.trim_end_matches('.');
            Some(Ok(format!("formatted by {shown}")))
        } else {
            let rest = line.strip_prefix(NOT_FORMATTED)?;
            Some(Err(rest
                .strip_suffix(AS_WRITTEN)
                .unwrap_or(rest)
                .to_string()))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// Upper-cases text; fails on text holding "broken".
    struct Shout;

    impl Formatting for Shout {
        fn formatter_for(&self, path: &Path) -> Option<Result<String, String>> {
            match path.extension()?.to_str()? {
                "txt" => Some(Ok("shout".to_string())),
                "cfg" => Some(Err("`shout` is not installed".to_string())),
                _ => None,
            }
        }
        fn format(&self, _: &Path, text: &str, _: &CancellationToken) -> Result<String, String> {
            if text.contains("broken") {
                return Err("shout failed (exit status 2): cannot parse".into());
            }
            Ok(text.to_uppercase())
        }
    }

    /// Upper-cases text, while something else writes the file.
    struct Raced;

    impl Formatting for Raced {
        fn formatter_for(&self, _: &Path) -> Option<Result<String, String>> {
            Some(Ok("raced".to_string()))
        }
        fn format(&self, path: &Path, text: &str, _: &CancellationToken) -> Result<String, String> {
            std::fs::write(path, "written by a job\n").unwrap();
            Ok(text.to_uppercase())
        }
    }

    #[tokio::test]
    async fn a_file_written_by_something_else_meanwhile_keeps_that_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.txt"), "one\n").unwrap();
        let mut ctx = ToolContext::new(dir.path().to_path_buf());
        ctx.formatting = Some(Arc::new(Raced));
        use crate::tools::Tool;
        crate::tools::view::ViewTool
            .run(json!({"file_path": "r.txt"}), &ctx)
            .await;
        let out = crate::tools::edit::EditTool
            .run(
                json!({"file_path": "r.txt", "old_string": "one", "new_string": "two"}),
                &ctx,
            )
            .await;
        let text = out.text_content();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("r.txt")).unwrap(),
            "written by a job\n"
        );
        assert!(
            text.contains("Not formatted: r.txt changed on disk while raced ran"),
            "{text}"
        );
    }

    async fn edited(
        file: &str,
        before: &[u8],
        old: &str,
        new: &str,
    ) -> (tempfile::TempDir, ToolContext, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), before).unwrap();
        let mut ctx = ToolContext::new(dir.path().to_path_buf());
        ctx.formatting = Some(Arc::new(Shout));
        let view = crate::tools::view::ViewTool;
        use crate::tools::Tool;
        view.run(json!({"file_path": file}), &ctx).await;
        let out = crate::tools::edit::EditTool
            .run(
                json!({"file_path": file, "old_string": old, "new_string": new}),
                &ctx,
            )
            .await;
        assert!(!out.is_error, "{}", out.text_content());
        (dir, ctx, out.text_content())
    }

    #[tokio::test]
    async fn the_file_is_formatted_and_the_answer_shows_it_and_undo_has_the_original() {
        let (_dir, ctx, text) = edited("a.txt", b"one\r\ntwo\r\n", "two", "three").await;
        let path = ctx.workspace.join("a.txt");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"ONE\r\nTHREE\r\n",
            "formatted, CRLF kept"
        );
        assert!(
            text.contains("2\tTHREE"),
            "the snippet is formatted: {text}"
        );
        assert!(
            text.contains("Formatted by shout (+2 -2 lines): the lines"),
            "{text}"
        );
        assert_eq!(
            note_of(&text),
            Some(Ok("formatted by shout (+2 -2 lines)".into()))
        );
        // One version, the text before the edit.
        let versions = ctx.session.versions();
        assert_eq!(versions.len(), 1);
        assert_eq!(versions[0].before.as_deref(), Some(&b"one\r\ntwo\r\n"[..]));
        // The model knows the formatted file: a next edit needs no view.
        let again = crate::tools::Tool::run(
            &crate::tools::edit::EditTool,
            json!({"file_path": "a.txt", "old_string": "THREE", "new_string": "four"}),
            &ctx,
        )
        .await;
        assert!(!again.is_error, "{}", again.text_content());
    }

    #[tokio::test]
    async fn a_failing_formatter_leaves_the_edit_and_says_why() {
        let (_dir, ctx, text) = edited("b.txt", b"fine\n", "fine", "broken").await;
        assert_eq!(
            std::fs::read_to_string(ctx.workspace.join("b.txt")).unwrap(),
            "broken\n"
        );
        assert!(
            text.contains("Not formatted: shout failed (exit status 2): cannot parse"),
            "{text}"
        );
        assert_eq!(
            note_of(&text),
            Some(Err("shout failed (exit status 2): cannot parse".into()))
        );
    }

    #[tokio::test]
    async fn a_formatter_that_cannot_run_is_said_in_the_dialog_and_the_result() {
        let (dir, _, text) = edited("d.cfg", b"a\n", "a", "b").await;
        assert!(
            text.contains(
                "Not formatted: `shout` is not installed; the edit is on disk as written."
            ),
            "{text}"
        );
        let cfg = dir.path().join("d.cfg");
        assert_eq!(
            dialog_line(&Shout, &cfg).as_deref(),
            Some("will not be formatted: `shout` is not installed")
        );
        assert_eq!(
            dialog_line(&Shout, &dir.path().join("e.txt")).as_deref(),
            Some("will be formatted by shout after it is applied")
        );
        assert_eq!(dialog_line(&Shout, &dir.path().join("e.md")), None);
    }

    #[tokio::test]
    async fn a_file_no_formatter_serves_says_nothing() {
        let (_dir, ctx, text) = edited("c.md", b"x\n", "x", "y").await;
        assert_eq!(
            std::fs::read_to_string(ctx.workspace.join("c.md")).unwrap(),
            "y\n"
        );
        assert_eq!(note_of(&text), None, "{text}");
        assert!(!text.contains("ormatted"), "{text}");
    }
}
