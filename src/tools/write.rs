//! `write`: creates a file or replaces one the model has viewed.

use std::fs;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::edit_core::{Plan, check_viewed};
use super::walk::blocking;
use super::{Preview, Tool, ToolContext, ToolOutput, str_arg};

pub struct WriteTool;

fn file_path(input: &Value) -> Result<&str, String> {
    let p = str_arg(input, "file_path")?;
    if p.trim().is_empty() {
        return Err("`file_path` is empty; give the path of the file to write".into());
    }
    Ok(p)
}

fn plan_write(ctx: &ToolContext, path: &Path, content: String) -> Result<Plan, String> {
    let shown = ctx.display_path(path);
    let before = match fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(format!("{shown} is a directory; give a file path"));
        }
        Ok(m) => {
            if let Some(refusal) = super::regular::refusal(&shown, &m) {
                return Err(refusal);
            }
            let bytes = super::files::read_bounded(ctx, path, super::regular::MAX_EDIT_FILE)
                .map_err(|e| format!("cannot read {shown}: {e}"))?;
            check_viewed(ctx, path, &bytes)?;
            Some(bytes)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let old_text = before
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    Ok(Plan {
        path: path.to_path_buf(),
        shown,
        before,
        after: content.clone().into_bytes(),
        old_text,
        new_text: content,
        form: None,
    })
}

async fn plan(input: &Value, ctx: &ToolContext) -> Result<Plan, String> {
    let path = ctx.resolve(file_path(input)?);
    let content = str_arg(input, "content")?.to_string();
    let ctx = ctx.clone();
    blocking(move || plan_write(&ctx, &path, content)).await?
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        include_str!("../../assets/tools/write.md")
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "Path of the file to create or replace, absolute or relative to the current directory."
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file."
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        false
    }
    fn summary(&self, input: &Value) -> String {
        format!("write {}", file_path(input).unwrap_or(""))
    }
    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        file_path(input)
            .map(|p| vec![ctx.resolve(p)])
            .unwrap_or_default()
    }
    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        plan(input, ctx).await.map(|p| Some(p.preview()))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let plan = match plan(&input, ctx).await {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let verb = if plan.before.is_some() {
            "Replaced"
        } else {
            "Created"
        };
        let c = ctx.clone();
        blocking(move || super::hunks::write_reviewed(plan, &c, verb))
            .await
            .unwrap_or_else(ToolOutput::error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn creates_parents_and_records_no_previous_version() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let input = json!({"file_path": "a/b/new.txt", "content": "hi\n"});
        let preview = WriteTool.preview(&input, &ctx).await.unwrap();
        assert!(
            matches!(preview, Some(Preview::Diff(crate::diff::FileDiff { ref old, added: 1, .. })) if old.is_empty())
        );
        let out = WriteTool.run(input, &ctx).await;
        assert!(!out.is_error, "{}", out.text_content());
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/new.txt")).unwrap(),
            "hi\n"
        );
        let versions = ctx.session.versions();
        assert_eq!(versions.len(), 1);
        assert_eq!(versions[0].before, None);
    }

    #[tokio::test]
    async fn replacing_needs_a_view_and_then_keeps_the_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        fs::write(&p, "old\n").unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let input = json!({"file_path": "f.txt", "content": "new\n"});
        let out = WriteTool.run(input.clone(), &ctx).await;
        assert!(out.is_error);
        assert!(out.text_content().contains("view it first"));
        assert!(WriteTool.preview(&input, &ctx).await.is_err());

        let view = super::super::view::ViewTool;
        view.run(json!({"file_path": "f.txt"}), &ctx).await;
        let out = WriteTool.run(input, &ctx).await;
        assert!(!out.is_error, "{}", out.text_content());
        assert_eq!(fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(ctx.session.versions()[0].before, Some(b"old\n".to_vec()));
        // The write recorded a fresh stamp: a second write needs no view.
        let again = WriteTool
            .run(json!({"file_path": "f.txt", "content": "third\n"}), &ctx)
            .await;
        assert!(!again.is_error, "{}", again.text_content());
    }
}
