//! `glob`: finds files by path pattern, newest first, so the files being
//! worked on come up before old ones.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::fcntl::AtFlags;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::walk::{blocking, glob_set, parallel_files, walker};
use super::{Tool, ToolContext, ToolOutput, opt_str_arg, str_arg};

const MAX_RESULTS: usize = 100;

pub struct GlobTool;

#[async_trait]
impl Tool for GlobTool {
    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        include_str!("../../assets/tools/glob.md")
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Glob matched against paths relative to `path`, e.g. \"**/*.rs\" or \"src/**/mod.rs\"."
                },
                "path": {
                    "type": "string",
                    "description": "Directory to search in. Default: the current directory."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn summary(&self, input: &Value) -> String {
        let pattern = input.get("pattern").and_then(Value::as_str).unwrap_or("");
        match input.get("path").and_then(Value::as_str) {
            Some(path) => format!("glob {pattern} in {path}"),
            None => format!("glob {pattern}"),
        }
    }

    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        let path = opt_str_arg(input, "path").ok().flatten().unwrap_or(".");
        vec![ctx.resolve(path)]
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let pattern = match str_arg(&input, "pattern") {
            Ok(p) if !p.trim().is_empty() => p.trim().to_string(),
            Ok(_) => return ToolOutput::error("`pattern` is empty; give a glob such as **/*.rs"),
            Err(e) => return ToolOutput::error(e),
        };
        let root = match opt_str_arg(&input, "path") {
            Ok(p) => ctx.resolve(p.unwrap_or(".")),
            Err(e) => return ToolOutput::error(e),
        };
        if let Err(e) = super::beneath::real_path(&root) {
            return ToolOutput::error(format!("cannot search {}: {e}", ctx.display_path(&root)));
        }
        let ctx = ctx.clone();
        blocking(move || find(&ctx, &pattern, &root))
            .await
            .unwrap_or_else(ToolOutput::error)
    }
}

fn find(ctx: &ToolContext, pattern: &str, root: &std::path::Path) -> ToolOutput {
    let shown_root = ctx.display_path(root);
    if !root.is_dir() {
        let what = if root.exists() {
            "is a file, not a directory"
        } else {
            "does not exist"
        };
        return ToolOutput::error(format!(
            "{shown_root} {what}; `path` must be a directory to search in"
        ));
    }
    // A leading `./` is how people often write a relative glob; the paths
    // matched against have none.
    let cleaned = pattern.strip_prefix("./").unwrap_or(pattern);
    let set = match glob_set([cleaned]) {
        Ok(s) => s,
        Err(e) => return ToolOutput::error(e),
    };
    let (mut found, finished) = parallel_files(
        walker(root),
        &|| ctx.cancel.is_cancelled(),
        || None,
        |folder, entry| {
            let rel = below(entry.path(), root)?;
            set.is_match(rel)
                .then(|| (modified(folder, entry.path()), entry.path().to_path_buf()))
        },
    );
    if !finished {
        return ToolOutput::error("cancelled");
    }
    if found.is_empty() {
        let mut msg = format!("No files match `{pattern}` in {shown_root}.");
        if !cleaned.contains('/') {
            msg.push_str(&format!(
                " `*` does not cross directories; to search all subdirectories use `**/{cleaned}`."
            ));
        }
        msg.push_str(" Files ignored by .gitignore and hidden files are not listed.");
        return ToolOutput::text(msg);
    }
    // Newest first; ties by path so the order is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut text: String = found
        .iter()
        .take(MAX_RESULTS)
        .map(|(_, p)| format!("{}\n", ctx.display_path(p)))
        .collect();
    if total > MAX_RESULTS {
        text.push_str(&format!(
            "\n… {} more files not shown (showing the {MAX_RESULTS} most recently modified). \
             Use a narrower pattern or path to see them.\n",
            total - MAX_RESULTS
        ));
    }
    ToolOutput::text(text)
}

/// `path` relative to `root`, which the walk started from (so `path`
/// begins with it, byte for byte): cut by bytes, not compared part by
/// part as [`Path::strip_prefix`] does — a tenth of the walk's own time
/// on a large tree.
fn below<'a>(path: &'a Path, root: &Path) -> Option<&'a Path> {
    use std::os::unix::ffi::OsStrExt;
    let (path, root) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    let rest = path.strip_prefix(root)?;
    let rest = match rest.first() {
        Some(b'/') => &rest[1..],
        // `root` ends with a separator itself (`/`).
        Some(_) if root.ends_with(b"/") => rest,
        Some(_) => return None,
        None => rest,
    };
    Some(Path::new(std::ffi::OsStr::from_bytes(rest)))
}

/// When the file at `path` was last modified, looked up from its folder
/// (`folder` keeps the last one a walker thread opened: a folder's files
/// come one after another), not along the whole path again — on a large
/// tree most of the time of a lookup by path.
fn modified(folder: &mut Option<(PathBuf, OwnedFd)>, path: &Path) -> SystemTime {
    use nix::fcntl::{OFlag, open};
    use nix::sys::stat::{Mode, fstatat};
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return SystemTime::UNIX_EPOCH;
    };
    if folder.as_ref().is_none_or(|(d, _)| d != dir) {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        *folder = open(dir, flags, Mode::empty())
            .ok()
            .map(|fd| (dir.to_path_buf(), fd));
    }
    let stat = match folder {
        Some((_, fd)) => fstatat(&*fd, name, AtFlags::AT_SYMLINK_NOFOLLOW).ok(),
        None => None,
    };
    match stat {
        Some(st) => {
            let since = Duration::new(st.st_mtime.max(0) as u64, st.st_mtime_nsec as u32);
            SystemTime::UNIX_EPOCH + since
        }
        None => (std::fs::symlink_metadata(path).and_then(|m| m.modified()))
            .unwrap_or(SystemTime::UNIX_EPOCH),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::Duration;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, ToolContext::new(root))
    }

    fn write_aged(ctx: &ToolContext, rel: &str, age_secs: u64) {
        let path = ctx.workspace.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, "x").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_secs);
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(when).unwrap();
    }

    async fn glob(ctx: &ToolContext, input: Value) -> ToolOutput {
        GlobTool.run(input, ctx).await
    }

    #[tokio::test]
    async fn lists_matches_newest_first() {
        let (_d, ctx) = setup();
        write_aged(&ctx, "old.rs", 3000);
        write_aged(&ctx, "src/new.rs", 10);
        write_aged(&ctx, "src/deep/mid.rs", 500);
        write_aged(&ctx, "notes.md", 1);
        let out = glob(&ctx, json!({"pattern": "**/*.rs"})).await;
        assert!(!out.is_error);
        assert_eq!(out.text_content(), "src/new.rs\nsrc/deep/mid.rs\nold.rs\n");
    }

    #[tokio::test]
    async fn star_stays_in_one_directory_and_path_narrows() {
        let (_d, ctx) = setup();
        write_aged(&ctx, "top.rs", 5);
        write_aged(&ctx, "src/inner.rs", 5);
        let text = glob(&ctx, json!({"pattern": "*.rs"})).await.text_content();
        assert_eq!(text, "top.rs\n");
        let text = glob(&ctx, json!({"pattern": "*.rs", "path": "src"}))
            .await
            .text_content();
        assert_eq!(text, "src/inner.rs\n");
    }

    #[tokio::test]
    async fn caps_at_100_with_a_notice() {
        let (_d, ctx) = setup();
        for i in 0..130u64 {
            write_aged(&ctx, &format!("f{i:03}.txt"), 1000 + i);
        }
        let text = glob(&ctx, json!({"pattern": "*.txt"})).await.text_content();
        let listed: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(listed.len(), 100);
        assert_eq!(listed[0], "f000.txt");
        assert_eq!(listed[99], "f099.txt");
        assert!(text.contains("… 30 more files not shown"), "{text}");
    }

    #[tokio::test]
    async fn respects_gitignore_and_hidden() {
        let (_d, ctx) = setup();
        fs::write(ctx.workspace.join(".gitignore"), "build/\n").unwrap();
        write_aged(&ctx, "build/gen.rs", 1);
        write_aged(&ctx, ".cache/c.rs", 1);
        write_aged(&ctx, "src/a.rs", 1);
        let text = glob(&ctx, json!({"pattern": "**/*.rs"}))
            .await
            .text_content();
        assert_eq!(text, "src/a.rs\n");
    }

    #[tokio::test]
    async fn no_match_hints_at_double_star_and_bad_globs_are_errors() {
        let (_d, ctx) = setup();
        write_aged(&ctx, "src/a.rs", 1);
        let out = glob(&ctx, json!({"pattern": "*.rs"})).await;
        assert!(!out.is_error);
        assert!(
            out.text_content().contains("**/*.rs"),
            "{}",
            out.text_content()
        );
        let out = glob(&ctx, json!({"pattern": "src/{a"})).await;
        assert!(out.is_error);
        assert!(out.text_content().contains("invalid glob"));
        let out = glob(&ctx, json!({"pattern": "*", "path": "src/a.rs"})).await;
        assert!(out.is_error && out.text_content().contains("is a file"));
    }

    #[test]
    fn summary_shows_the_pattern() {
        assert_eq!(
            GlobTool.summary(&json!({"pattern": "**/*.rs"})),
            "glob **/*.rs"
        );
    }
}
