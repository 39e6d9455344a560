//! Project memory below the working directory: the instruction files of a
//! subdirectory (`rust/slug/AGENTS.md`, and its cousins) join the
//! conversation when the model first reads or edits a file below them,
//! once per session, with that call's result; the transcript says which,
//! and `/memory` lists every instruction file in use.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Shared;
use super::instructions::{self, INSTRUCTION_FILES, Instructions};
use super::turn_context::TurnContext;
use crate::config::project_file::{self, Over};
use crate::conversation::{Message, Part, ResultContent};
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::state::lock;

/// The tools whose `file_path` opens a file for reading or editing.
const FILE_TOOLS: [&str; 4] = ["view", "edit", "multiedit", "write"];

/// The instruction files a finished call of `tool` on `input` brings in
/// (not loaded before in this session), rendered for its result.
pub(crate) fn nested_for(ctx: &TurnContext, tool: &str, input: &Value) -> Option<String> {
    if !FILE_TOOLS.contains(&tool) {
        return None;
    }
    let path = input.get("file_path")?.as_str()?;
    let cwd = ctx.cwd();
    let file = crate::paths::lexical(&cwd.join(path));
    let root = ctx.opts.workspace.as_path();
    let found = below(root, &ctx.opts.cwd, &file, ctx.opts.instructions_max_bytes);
    let mut fresh: Vec<Instructions> = Vec::new();
    {
        let mut loaded = lock(&ctx.shared.memory);
        for f in found {
            if loaded.iter().any(|(p, _)| *p == f.path) {
                continue;
            }
            loaded.push((f.path.clone(), format!("{tool} {path}")));
            fresh.push(f);
        }
    }
    if fresh.is_empty() {
        return None;
    }
    let names: Vec<String> = fresh.iter().map(|f| shown(root, &f.path)).collect();
    ctx.shared.emit(AgentEvent::Notice {
        level: NoticeLevel::Info,
        text: format!(
            "Loaded {} (instructions for the folder of {path}).",
            names.join(", ")
        ),
    });
    Some(format!(
        "{LOADED_HEAD} (they apply to work there):\n{}",
        instructions::render(&fresh)
    ))
}

/// How a call's result begins when it brought instruction files in.
const LOADED_HEAD: &str =
    "Instructions for the folder of this file, loaded now that you opened a file in it";

/// The instruction files a stored conversation already holds (loaded with
/// a call's result before it was saved), each with the call that brought
/// it in: a resumed session lists them in `/memory` and never loads them
/// twice. Only files named as instruction files inside `root` count, so a
/// file's text that imitates the markup cannot list anything else.
pub(crate) fn loaded_in(messages: &[Message], root: &Path) -> Vec<(PathBuf, String)> {
    let mut calls: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for part in messages.iter().flat_map(|m| &m.parts) {
        match part {
            Part::ToolCall { id, name, input } => {
                let path = input.get("file_path").and_then(Value::as_str).unwrap_or("");
                calls.insert(id, format!("{name} {path}"));
            }
            Part::ToolResult {
                call_id, content, ..
            } => {
                for text in content.iter().filter_map(|c| match c {
                    ResultContent::Text { text } if text.starts_with(LOADED_HEAD) => Some(text),
                    _ => None,
                }) {
                    let why = calls.get(call_id.as_str()).cloned().unwrap_or_default();
                    for path in rendered_paths(text, root) {
                        if !out.iter().any(|(p, _)| *p == path) {
                            out.push((path, why.clone()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The paths of `<instructions path="…">` lines in `text`.
fn rendered_paths(text: &str, root: &Path) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| l.strip_prefix("<instructions path=\"")?.strip_suffix("\">"))
        .map(PathBuf::from)
        .filter(|p| p.starts_with(root))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| INSTRUCTION_FILES.contains(&n))
        })
        .collect()
}

/// The instruction files in the folders between the project root and
/// `file`, leaving out those loaded at the start (root down to `start`).
fn below(root: &Path, start: &Path, file: &Path, max_bytes: usize) -> Vec<Instructions> {
    let Some(parent) = file.parent() else {
        return Vec::new();
    };
    if !parent.starts_with(root) {
        return Vec::new();
    }
    let mut dirs: Vec<PathBuf> = parent
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .filter(|d| !start.starts_with(d))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    let mut out = Vec::new();
    for dir in dirs {
        for name in INSTRUCTION_FILES {
            let path = dir.join(name);
            let contents = match project_file::read(Some(root), &path, max_bytes as u64, Over::Cut)
            {
                Ok(Some(c)) => c,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!("instructions skipped: {e}");
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&contents.bytes).into_owned();
            if text.trim().is_empty() {
                continue;
            }
            out.push(Instructions {
                path,
                truncated: (contents.len - contents.bytes.len() as u64) as usize,
                text,
            });
        }
    }
    out
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `/memory`: the instruction files in use, at start and loaded since.
pub(crate) fn describe(shared: &Shared, opts: &super::AgentOptions) -> String {
    let root = opts.workspace.as_path();
    let start = instructions::discover(
        opts.global_config_dir.as_deref(),
        root,
        &opts.cwd,
        opts.instructions_max_bytes,
    );
    let loaded = lock(&shared.memory).clone();
    if start.is_empty() && loaded.is_empty() {
        return "No instruction files are in use. cairn reads AGENTS.md (and CLAUDE.md, CRUSH.md, .goosehints) from your config folder, the project root down to here, and a subfolder's once the model opens a file in it.".into();
    }
    let mut out = String::from("Instruction files in use:");
    for f in &start {
        let cut = if f.truncated > 0 { ", cut to fit" } else { "" };
        out.push_str(&format!("\n  {} (at start{cut})", shown(root, &f.path)));
    }
    for (path, why) in &loaded {
        out.push_str(&format!(
            "\n  {} (loaded after {})",
            shown(root, path),
            crate::text::truncate_chars(why, 80)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_between_the_start_and_the_file_are_found_once_the_root_chain_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("rust/slug/src")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("rust/AGENTS.md"), "rust rules").unwrap();
        std::fs::write(root.join("rust/slug/CLAUDE.md"), "slug rules").unwrap();
        let found = below(root, root, &root.join("rust/slug/src/lib.rs"), 4096);
        let names: Vec<String> = found.iter().map(|f| shown(root, &f.path)).collect();
        assert_eq!(names, ["rust/AGENTS.md", "rust/slug/CLAUDE.md"]);
        // Started in rust/: its file is already in the system prompt.
        let found = below(
            root,
            &root.join("rust"),
            &root.join("rust/slug/src/lib.rs"),
            4096,
        );
        assert_eq!(found.len(), 1);
        assert!(below(root, root, Path::new("/etc/passwd"), 4096).is_empty());
    }
}
