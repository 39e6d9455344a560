//! `ls`: a directory as an indented tree, gitignore-aware.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::GlobSet;
use serde_json::{Value, json};

use super::walk::{blocking, glob_set, walker, walker_with};
use super::{Tool, ToolContext, ToolOutput, opt_str_arg};

const MAX_ENTRIES: usize = 1000;
/// Past the cap the walk only counts, and stops counting here.
const MAX_COUNTED: usize = 100_000;

pub struct LsTool;

#[async_trait]
impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        include_str!("../../assets/tools/ls.md")
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Directory to list. Default: the current directory."
                },
                "ignore": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Globs of entries to leave out, matched against names and paths below `path`, e.g. [\"*.lock\", \"tests/fixtures\"]."
                }
            },
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn summary(&self, input: &Value) -> String {
        match input.get("path").and_then(Value::as_str) {
            Some(path) => format!("ls {path}"),
            None => "ls".to_string(),
        }
    }

    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        let path = opt_str_arg(input, "path").ok().flatten().unwrap_or(".");
        vec![ctx.resolve(path)]
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let root = match opt_str_arg(&input, "path") {
            Ok(p) => ctx.resolve(p.unwrap_or(".")),
            Err(e) => return ToolOutput::error(e),
        };
        let ignore = match ignore_arg(&input) {
            Ok(i) => i,
            Err(e) => return ToolOutput::error(e),
        };
        // A missing path is `list`'s to report ("not found", with hints).
        if let Err(e) = super::beneath::real_path(&root)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return ToolOutput::error(format!("cannot list {}: {e}", ctx.display_path(&root)));
        }
        let ctx = ctx.clone();
        blocking(move || list(&ctx, &root, ignore))
            .await
            .unwrap_or_else(ToolOutput::error)
    }
}

fn ignore_arg(input: &Value) -> Result<Option<GlobSet>, String> {
    let globs: Vec<&str> = match input.get("ignore") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| "`ignore` must be an array of glob strings".to_string())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`ignore` must be an array of glob strings".into()),
    };
    // `dir/` is a natural way to name a directory; the walker's paths have
    // no trailing slash.
    let trimmed: Vec<&str> = globs
        .iter()
        .map(|g| g.trim().trim_end_matches('/'))
        .filter(|g| !g.is_empty())
        .collect();
    if trimmed.is_empty() {
        return Ok(None);
    }
    glob_set(trimmed).map(Some)
}

fn list(ctx: &ToolContext, root: &Path, ignore: Option<GlobSet>) -> ToolOutput {
    let shown_root = ctx.display_path(root);
    if !root.exists() {
        return ToolOutput::error(format!(
            "directory not found: {shown_root}; check the path, or use glob to find it"
        ));
    }
    if !root.is_dir() {
        return ToolOutput::error(format!(
            "{shown_root} is a file, not a directory; use view to read it"
        ));
    }
    let builder = match ignore {
        Some(set) => {
            let base = root.to_path_buf();
            // Pruning here keeps the walk out of ignored directories entirely.
            walker_with(root, move |e| !is_ignored(&set, &base, e.path()))
        }
        None => walker(root),
    };
    let mut out = format!("{}/\n", root.display());
    let mut listed = 0usize;
    let mut more = 0usize;
    for entry in builder.build() {
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("cancelled");
        }
        let Ok(entry) = entry else { continue };
        let depth = entry.depth();
        if depth == 0 {
            continue;
        }
        if listed >= MAX_ENTRIES {
            more += 1;
            if more >= MAX_COUNTED {
                break;
            }
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        let slash = if entry.file_type().is_some_and(|t| t.is_dir()) {
            "/"
        } else {
            ""
        };
        out.push_str(&format!("{}{name}{slash}\n", "  ".repeat(depth)));
        listed += 1;
    }
    if listed == 0 {
        out.push_str("  (empty, or every entry is hidden or ignored)\n");
    }
    if more > 0 {
        let count = if more >= MAX_COUNTED {
            format!("more than {more}")
        } else {
            more.to_string()
        };
        out.push_str(&format!(
            "\n… {count} more entries not shown (listing stops at {MAX_ENTRIES}). \
             List a subdirectory, add `ignore` globs, or use glob to find specific files.\n"
        ));
    }
    ToolOutput::text(out)
}

fn is_ignored(set: &GlobSet, root: &Path, path: &Path) -> bool {
    if path.file_name().is_some_and(|n| set.is_match(n)) {
        return true;
    }
    path.strip_prefix(root)
        .is_ok_and(|rel| !rel.as_os_str().is_empty() && set.is_match(rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, ToolContext::new(root))
    }

    fn touch(ctx: &ToolContext, rel: &str) {
        let path = ctx.workspace.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, "x").unwrap();
    }

    async fn ls(ctx: &ToolContext, input: Value) -> String {
        let out = LsTool.run(input, ctx).await;
        assert!(!out.is_error, "{}", out.text_content());
        out.text_content()
    }

    #[tokio::test]
    async fn shows_an_indented_tree_under_the_root() {
        let (_d, ctx) = setup();
        touch(&ctx, "Cargo.toml");
        touch(&ctx, "src/main.rs");
        touch(&ctx, "src/tools/mod.rs");
        let text = ls(&ctx, json!({})).await;
        let root = ctx.workspace.display();
        assert_eq!(
            text,
            format!("{root}/\n  Cargo.toml\n  src/\n    main.rs\n    tools/\n      mod.rs\n")
        );
        let text = ls(&ctx, json!({"path": "src/tools"})).await;
        assert_eq!(text, format!("{root}/src/tools/\n  mod.rs\n"));
    }

    #[tokio::test]
    async fn respects_gitignore_and_hides_hidden_entries() {
        let (_d, ctx) = setup();
        fs::write(ctx.workspace.join(".gitignore"), "target/\n").unwrap();
        touch(&ctx, "target/debug/app");
        touch(&ctx, ".env");
        touch(&ctx, ".git/HEAD");
        touch(&ctx, "src/lib.rs");
        let text = ls(&ctx, json!({})).await;
        assert!(text.contains("  src/\n    lib.rs\n"), "{text}");
        for hidden in ["target", ".env", ".git", ".gitignore"] {
            assert!(!text.contains(hidden), "{hidden} in {text}");
        }
    }

    #[tokio::test]
    async fn ignore_globs_prune_names_and_paths() {
        let (_d, ctx) = setup();
        touch(&ctx, "Cargo.lock");
        touch(&ctx, "keep.rs");
        touch(&ctx, "tests/fixtures/big.json");
        touch(&ctx, "tests/it.rs");
        let text = ls(&ctx, json!({"ignore": ["*.lock", "tests/fixtures/"]})).await;
        assert!(
            text.contains("  keep.rs\n") && text.contains("    it.rs\n"),
            "{text}"
        );
        assert!(
            !text.contains("Cargo.lock") && !text.contains("fixtures"),
            "{text}"
        );
        let out = LsTool.run(json!({"ignore": "*.lock"}), &ctx).await;
        assert!(out.is_error && out.text_content().contains("array"));
    }

    #[tokio::test]
    async fn caps_entries_with_a_notice() {
        let (_d, ctx) = setup();
        for i in 0..1010 {
            touch(&ctx, &format!("f{i:04}"));
        }
        let text = ls(&ctx, json!({})).await;
        assert_eq!(text.lines().filter(|l| l.starts_with("  f")).count(), 1000);
        assert!(text.contains("… 10 more entries not shown"), "{text}");
    }

    #[tokio::test]
    async fn files_and_missing_paths_are_errors() {
        let (_d, ctx) = setup();
        touch(&ctx, "a.txt");
        let out = LsTool.run(json!({"path": "a.txt"}), &ctx).await;
        assert!(out.is_error && out.text_content().contains("use view"));
        let out = LsTool.run(json!({"path": "nope"}), &ctx).await;
        assert!(out.is_error && out.text_content().contains("not found: nope"));
    }

    #[test]
    fn summary_and_paths() {
        assert_eq!(LsTool.summary(&json!({"path": "src/"})), "ls src/");
        let ctx = ToolContext::new(PathBuf::from("/ws"));
        assert_eq!(
            LsTool.paths(&json!({"path": "src"}), &ctx),
            vec![PathBuf::from("/ws/src")]
        );
    }
}
