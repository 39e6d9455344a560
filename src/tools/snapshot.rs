//! A cheap picture of the workspace taken before a shell command, so the
//! files the command changed can be undone like an edit. Small files keep
//! their content; every file keeps its (mtime, length) stamp.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::walk::walker_with;

const MAX_CONTENT_FILE: u64 = 256 * 1024;
const MAX_CONTENT_FILES: usize = 2_000;
const MAX_CONTENT_TOTAL: u64 = 64 * 1024 * 1024;
const MAX_STAMPS: usize = 5_000;

#[derive(Debug, Clone)]
struct Entry {
    modified: Option<SystemTime>,
    len: u64,
    content: Option<Vec<u8>>,
}

/// A changed file and the content it had before (`None`: it was new).
pub type Change = (PathBuf, Option<Vec<u8>>);

#[derive(Debug, Default)]
pub struct Snapshot {
    files: HashMap<PathBuf, Entry>,
    /// False when the walk stopped at `MAX_STAMPS`: files missing from the
    /// picture then may be old ones, not new.
    complete: bool,
}

/// The files a command may have changed: what git would track or offer to
/// track, hidden ones included (`.github/`, `.env`, `.cargo/config.toml`),
/// but not git's own directory.
fn files(root: &Path) -> impl Iterator<Item = (PathBuf, fs::Metadata)> {
    walker_with(root, |e| e.file_name() != ".git")
        .hidden(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((e.into_path(), meta))
        })
}

impl Snapshot {
    pub fn take(root: &Path) -> Snapshot {
        let mut snap = Snapshot {
            files: HashMap::new(),
            complete: true,
        };
        let mut kept_files = 0;
        let mut kept_bytes = 0;
        for (path, meta) in files(root) {
            if snap.files.len() >= MAX_STAMPS {
                snap.complete = false;
                break;
            }
            let len = meta.len();
            let content = if len <= MAX_CONTENT_FILE
                && kept_files < MAX_CONTENT_FILES
                && kept_bytes + len <= MAX_CONTENT_TOTAL
            {
                fs::read(&path).ok()
            } else {
                None
            };
            if let Some(c) = &content {
                kept_files += 1;
                kept_bytes += c.len() as u64;
            }
            let modified = meta.modified().ok();
            snap.files.insert(
                path,
                Entry {
                    modified,
                    len,
                    content,
                },
            );
        }
        snap
    }

    /// Files that differ now from the picture, each with the content it had
    /// (`None` for a file that did not exist). Files too large to keep are
    /// left out: they cannot be restored.
    pub fn changes(&self, root: &Path) -> Vec<Change> {
        self.changes_and_losses(root).0
    }

    /// Like [`Snapshot::changes`], and also the files that changed whose
    /// earlier content was not kept (too large, or past the limits), so
    /// undo can name what it cannot restore.
    pub fn changes_and_losses(&self, root: &Path) -> (Vec<Change>, Vec<PathBuf>) {
        let mut lost = Vec::new();
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (path, meta) in files(root).take(MAX_STAMPS * 2) {
            match self.files.get(&path) {
                Some(entry) => {
                    seen.insert(path.clone());
                    let same_stamp =
                        entry.modified == meta.modified().ok() && entry.len == meta.len();
                    if same_stamp {
                        continue;
                    }
                    let Some(before) = &entry.content else {
                        lost.push(path);
                        continue;
                    };
                    if fs::read(&path).is_ok_and(|now| &now != before) {
                        out.push((path, Some(before.clone())));
                    }
                }
                None if self.complete => out.push((path, None)),
                None => {}
            }
        }
        for (path, entry) in &self.files {
            if seen.contains(path) || path.exists() {
                continue;
            }
            match &entry.content {
                Some(before) => out.push((path.clone(), Some(before.clone()))),
                None => lost.push(path.clone()),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        lost.sort();
        (out, lost)
    }
}

/// Stores, for undo, the content of every workspace file that changed since
/// `before`; a file too large to keep is named as lost, `why` saying what
/// changed it ("changed by a command").
pub async fn record_changes(ctx: &super::ToolContext, before: Option<Snapshot>, why: &str) {
    let Some(before) = before else { return };
    let root = ctx.workspace.clone();
    let found = super::walk::blocking(move || before.changes_and_losses(&root)).await;
    if let Ok((changes, lost)) = found {
        for (path, content) in changes {
            ctx.session.record_version(&path, content);
        }
        for path in lost {
            ctx.session
                .record_unrestorable(&path, &format!("{why}, and too large to keep a copy of"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_changed_created_and_deleted_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "hello\n").unwrap();
        fs::write(root.join("gone.txt"), "bye\n").unwrap();
        fs::write(root.join("same.txt"), "same\n").unwrap();
        let snap = Snapshot::take(root);
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("sed -i 's/hello/HELLO/' a.txt && rm gone.txt && echo new > new.txt")
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success());
        let changes = snap.changes(root);
        assert_eq!(
            changes,
            vec![
                (root.join("a.txt"), Some(b"hello\n".to_vec())),
                (root.join("gone.txt"), Some(b"bye\n".to_vec())),
                (root.join("new.txt"), None),
            ]
        );
    }

    #[test]
    fn hidden_files_count_but_gits_own_directory_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join(".github")).unwrap();
        fs::write(root.join(".env"), "A=1\n").unwrap();
        fs::write(root.join(".github/ci.yml"), "on: push\n").unwrap();
        fs::write(root.join(".gitignore"), "ignored.txt\n").unwrap();
        let snap = Snapshot::take(root);
        fs::write(root.join(".env"), "A=2\n").unwrap();
        fs::write(root.join(".github/ci.yml"), "on: pull_request\n").unwrap();
        fs::write(root.join(".git/index"), "x").unwrap();
        fs::write(root.join("ignored.txt"), "x").unwrap();
        assert_eq!(
            snap.changes(root),
            vec![
                (root.join(".env"), Some(b"A=1\n".to_vec())),
                (root.join(".github/ci.yml"), Some(b"on: push\n".to_vec())),
            ]
        );
    }
}

#[cfg(test)]
mod loss_tests {
    use super::*;

    #[test]
    fn a_changed_file_too_large_to_keep_is_named_as_lost() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let big = root.join("big.bin");
        fs::write(&big, vec![b'a'; (MAX_CONTENT_FILE + 10) as usize]).unwrap();
        fs::write(root.join("small.txt"), "one\n").unwrap();
        let snap = Snapshot::take(root);
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&big, vec![b'b'; (MAX_CONTENT_FILE + 20) as usize]).unwrap();
        fs::write(root.join("small.txt"), "two\n").unwrap();
        let (changes, lost) = snap.changes_and_losses(root);
        assert_eq!(changes.len(), 1);
        assert!(changes[0].0.ends_with("small.txt"));
        assert_eq!(lost, vec![big]);
    }
}
