//! Project instructions: AGENTS.md and its cousins, from the global config
//! directory, then from the repository root down to the working directory.

use std::path::{Path, PathBuf};

use crate::config::project_file::{self, Over};

pub const INSTRUCTION_FILES: [&str; 4] = ["AGENTS.md", "CLAUDE.md", "CRUSH.md", ".goosehints"];

/// One instruction file as it goes into the prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Instructions {
    pub path: PathBuf,
    pub text: String,
    /// Bytes dropped to stay within the cap.
    pub truncated: usize,
}

pub use crate::paths::project_root;

/// Finds instruction files in order (global first, then root → cwd), taking
/// at most `max_bytes` in all; the deepest files matter most, so when the
/// cap bites the shallow ones are cut first.
pub fn discover(
    global_dir: Option<&Path>,
    root: &Path,
    cwd: &Path,
    max_bytes: usize,
) -> Vec<Instructions> {
    // The person's own directory may link anywhere; a project's files must
    // stay in the project (see `config::project_file`).
    let mut dirs: Vec<(PathBuf, Option<&Path>)> = Vec::new();
    if let Some(g) = global_dir {
        dirs.push((g.to_path_buf(), None));
    }
    let mut chain: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    chain.reverse();
    dirs.extend(chain.into_iter().map(|d| (d, Some(root))));
    dirs.dedup_by(|a, b| a.0 == b.0);

    let mut found = Vec::new();
    for (dir, within) in dirs {
        for name in INSTRUCTION_FILES {
            let path = dir.join(name);
            let cap = max_bytes as u64;
            let contents = match project_file::read(within, &path, cap, Over::Cut) {
                Ok(Some(c)) => c,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!("instructions skipped: {e}");
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&contents.bytes).into_owned();
            if !text.trim().is_empty() {
                found.push(Instructions {
                    path,
                    truncated: (contents.len - contents.bytes.len() as u64) as usize,
                    text,
                });
            }
        }
    }
    cap(&mut found, max_bytes);
    found
}

fn cap(files: &mut [Instructions], max_bytes: usize) {
    let mut budget = max_bytes;
    // Deepest (last) first keeps the most specific instructions whole.
    for f in files.iter_mut().rev() {
        if f.text.len() <= budget {
            budget -= f.text.len();
            continue;
        }
        let mut cut = budget;
        while cut > 0 && !f.text.is_char_boundary(cut) {
            cut -= 1;
        }
        f.truncated += f.text.len() - cut;
        f.text.truncate(cut);
        budget = 0;
    }
}

/// Renders the files for the system prompt.
pub fn render(files: &[Instructions]) -> String {
    let mut out = String::new();
    for f in files {
        if f.text.is_empty() {
            out.push_str(&format!(
                "<instructions path=\"{}\">\n[omitted: over the size limit]\n</instructions>\n",
                f.path.display()
            ));
            continue;
        }
        out.push_str(&format!("<instructions path=\"{}\">\n", f.path.display()));
        out.push_str(f.text.trim_end());
        if f.truncated > 0 {
            out.push_str(&format!(
                "\n[… {} bytes cut to fit the size limit]",
                f.truncated
            ));
        }
        out.push_str("\n</instructions>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_files_from_global_root_and_cwd_in_order() {
        let g = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        let sub = repo.path().join("crates/app");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(g.path().join("AGENTS.md"), "global rules").unwrap();
        std::fs::write(repo.path().join("CLAUDE.md"), "root rules").unwrap();
        std::fs::write(repo.path().join("crates/.goosehints"), "crates hints").unwrap();
        std::fs::write(sub.join("AGENTS.md"), "app rules").unwrap();
        std::fs::write(sub.join("CRUSH.md"), "   \n").unwrap();
        let root = project_root(&sub);
        assert_eq!(root, repo.path());
        let found = discover(Some(g.path()), &root, &sub, 10_000);
        let texts: Vec<_> = found.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            ["global rules", "root rules", "crates hints", "app rules"]
        );
    }

    #[test]
    fn cap_cuts_shallow_files_first() {
        let repo = tempfile::tempdir().unwrap();
        let sub = repo.path().join("a");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(repo.path().join("AGENTS.md"), "x".repeat(100)).unwrap();
        std::fs::write(sub.join("AGENTS.md"), "y".repeat(60)).unwrap();
        let found = discover(None, repo.path(), &sub, 80);
        assert_eq!(found[1].text.len(), 60);
        assert_eq!(found[0].text.len(), 20);
        assert_eq!(found[0].truncated, 80);
        let rendered = render(&found);
        assert!(rendered.contains("80 bytes cut"));
        let total: usize = found.iter().map(|f| f.text.len()).sum();
        assert!(total <= 80);
    }
}
