//! Putting back the files turns changed, byte for byte: what it would do
//! (a plan shown before anything changes) and doing it. Used by undo and
//! rewind in the agent and by a rewind of a stored session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tools::state::FileVersion;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAction {
    /// Write back the earlier content.
    Restore,
    /// The turn created it: remove it.
    Delete,
}

/// What an undo would do, shown before anything changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoPlan {
    pub turn: u64,
    /// Workspace-relative (or absolute) paths and what happens to each.
    pub files: Vec<(String, FileAction)>,
    /// Files that cannot be put back, with the reason.
    pub unrestorable: Vec<(String, String)>,
}

/// The state of each file before `turn`: its earliest version in that turn.
pub fn earliest_versions(
    versions: &[FileVersion],
    turn: u64,
) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    earliest_since(versions, turn, turn)
}

/// The state of each file before turn `from`, for changes made in turns
/// `from..=to`.
pub fn earliest_since(
    versions: &[FileVersion],
    from: u64,
    to: u64,
) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut sorted: Vec<&FileVersion> = versions
        .iter()
        .filter(|v| v.turn >= from && v.turn <= to)
        .collect();
    // Within a turn versions are in the order they were recorded; a stable
    // sort keeps that while putting earlier turns first.
    sorted.sort_by_key(|v| v.turn);
    let mut out = BTreeMap::new();
    for v in sorted {
        out.entry(v.path.clone())
            .or_insert_with(|| v.before.clone());
    }
    out
}

/// The last turn that changed files.
pub fn last_turn_with_changes(versions: &[FileVersion]) -> Option<u64> {
    versions.iter().map(|v| v.turn).max()
}

pub fn plan(versions: &[FileVersion], turn: u64, workspace: &Path) -> UndoPlan {
    plan_range(versions, turn, turn, workspace)
}

/// What restoring the files to how they were before turn `from` would do.
pub fn plan_range(versions: &[FileVersion], from: u64, to: u64, workspace: &Path) -> UndoPlan {
    let turn = from;
    let mut files = Vec::new();
    for (path, before) in earliest_since(versions, from, to) {
        let shown = display(&path, workspace);
        let action = match before {
            Some(_) => FileAction::Restore,
            None => FileAction::Delete,
        };
        if action == FileAction::Delete && !path.exists() {
            continue;
        }
        files.push((shown, action));
    }
    UndoPlan {
        turn,
        files,
        unrestorable: Vec::new(),
    }
}

/// Restores the files. Returns the paths restored and the failures.
/// What putting files back did: the files written back as they were, the
/// files removed (the turn had created them), and the failures.
pub type Applied = (Vec<String>, Vec<String>, Vec<(String, String)>);

/// Puts back the files of `turn`, saying which were removed.
pub fn apply(versions: &[FileVersion], turn: u64, workspace: &Path) -> Applied {
    apply_split(versions, turn, turn, workspace)
}

/// Puts back the files of turns `from..=to`; removed files count as
/// restored.
pub fn apply_range(
    versions: &[FileVersion],
    from: u64,
    to: u64,
    workspace: &Path,
) -> (Vec<String>, Vec<(String, String)>) {
    let (mut done, removed, failed) = apply_split(versions, from, to, workspace);
    done.extend(removed);
    (done, failed)
}

fn apply_split(versions: &[FileVersion], from: u64, to: u64, workspace: &Path) -> Applied {
    let mut done = Vec::new();
    let mut removed = Vec::new();
    let mut failed = Vec::new();
    for (path, before) in earliest_since(versions, from, to) {
        let shown = display(&path, workspace);
        let created = before.is_none();
        let result = match before {
            Some(bytes) => write_atomic(&path, &bytes),
            None => match crate::tools::beneath::remove_file(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        match result {
            Ok(()) if created => removed.push(shown),
            Ok(()) => done.push(shown),
            Err(e) => failed.push((shown, e.to_string())),
        }
    }
    (done, removed, failed)
}

fn display(path: &Path, workspace: &Path) -> String {
    path.strip_prefix(workspace)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// Restores through the tools' atomic write: an existing file keeps its
/// permission bits, a link keeps pointing at the file it names, and a file
/// the turn deleted comes back with what the umask allows.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::tools::beneath::pinned_dir(dir)?;
    }
    crate::tools::atomic::write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_keeps_modes_and_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "changed").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&real, "changed").unwrap();
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        let versions = vec![
            FileVersion {
                path: script.clone(),
                before: Some(b"original".to_vec()),
                turn: 1,
            },
            FileVersion {
                path: link.clone(),
                before: Some(b"original".to_vec()),
                turn: 1,
            },
        ];
        let (done, removed, failed) = apply(&versions, 1, dir.path());
        assert_eq!(
            (done.len(), removed.len(), failed.len()),
            (2, 0, 0),
            "{failed:?}"
        );
        assert_eq!(std::fs::read(&script).unwrap(), b"original");
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"original");
    }

    #[test]
    fn restores_earliest_content_and_deletes_created_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("new/b.txt");
        std::fs::write(&a, b"third\r\n").unwrap();
        std::fs::create_dir_all(b.parent().unwrap()).unwrap();
        std::fs::write(&b, b"created").unwrap();
        let versions = vec![
            FileVersion {
                path: a.clone(),
                before: Some(b"orig\r\n\xff".to_vec()),
                turn: 2,
            },
            FileVersion {
                path: a.clone(),
                before: Some(b"second".to_vec()),
                turn: 2,
            },
            FileVersion {
                path: b.clone(),
                before: None,
                turn: 2,
            },
            FileVersion {
                path: a.clone(),
                before: Some(b"older".to_vec()),
                turn: 1,
            },
        ];
        assert_eq!(last_turn_with_changes(&versions), Some(2));
        let p = plan(&versions, 2, dir.path());
        assert_eq!(
            p.files,
            vec![
                ("a.txt".to_string(), FileAction::Restore),
                ("new/b.txt".to_string(), FileAction::Delete)
            ]
        );
        let (done, removed, failed) = apply(&versions, 2, dir.path());
        assert_eq!(done, vec!["a.txt".to_string()]);
        assert_eq!(removed, vec!["new/b.txt".to_string()]);
        assert!(failed.is_empty());
        assert_eq!(std::fs::read(&a).unwrap(), b"orig\r\n\xff");
        assert!(!b.exists());
    }
}
