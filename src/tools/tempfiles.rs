//! Temporary files the tools create carry the creating process's id in
//! their names: `.cairn-tmp-<pid>-…` beside a file being written (its
//! directory noted in a per-process list under the state directory), and
//! `cairn-cwd-<pid>-…` in the system's temporary directory for a shell
//! call's final working directory. A normal run deletes them as it goes;
//! after a crash the next cairn finds those of processes that no longer
//! exist and removes them.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::state::lock;

/// Prefix of a temporary file written beside its target.
pub fn atomic_prefix() -> String {
    format!(".cairn-tmp-{}-", std::process::id())
}

/// Prefix of a shell call's working-directory file.
pub fn cwd_prefix() -> String {
    format!("cairn-cwd-{}-", std::process::id())
}

fn journal_dir() -> Option<PathBuf> {
    Some(crate::config::state_dir()?.join("tempdirs"))
}

/// Remembers that this process creates temporary files in `dir`, so a
/// crash does not leave them there for good. Best effort: a list that
/// cannot be written only costs the clean-up.
pub fn note_dir(dir: &Path) {
    static NOTED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !lock(NOTED.get_or_init(Default::default)).insert(dir.clone()) {
        return;
    }
    let Some(journal) = journal_dir() else {
        return;
    };
    let list = journal.join(format!("{}.list", std::process::id()));
    if let Ok(mut f) = crate::private::open_append(&list) {
        let _ = writeln!(f, "{}", dir.display());
    }
}

fn alive(pid: i32) -> bool {
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(e) => e == nix::errno::Errno::EPERM,
    }
}

/// The pid in a name `<prefix><pid>-…`, if it is one of ours.
fn owner(name: &str, prefix: &str) -> Option<i32> {
    let rest = name.strip_prefix(prefix)?;
    rest.split('-').next()?.parse().ok()
}

/// Removes the files in `dir` named `<prefix><pid>-…` whose process is
/// gone; returns how many.
fn sweep_dir(dir: &Path, prefix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner(&name, prefix) else {
            continue;
        };
        let is_file = e.file_type().is_ok_and(|t| t.is_file());
        if is_file && !alive(pid) && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Removes what crashed cairn processes left: call once at start-up.
pub fn sweep_stale() -> usize {
    let mut removed = sweep_dir(&std::env::temp_dir(), "cairn-cwd-");
    let Some(journal) = journal_dir() else {
        return removed;
    };
    let Ok(entries) = std::fs::read_dir(&journal) else {
        return removed;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_suffix(".list")
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if alive(pid) {
            continue;
        }
        let dirs = std::fs::read_to_string(e.path()).unwrap_or_default();
        for dir in dirs.lines() {
            removed += sweep_dir(Path::new(dir), ".cairn-tmp-");
            removed += sweep_dir(Path::new(dir), "cairn-cwd-");
        }
        let _ = std::fs::remove_file(e.path());
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that is not running: the highest possible is never ours.
        let dead = (1..).map(|n| 4_194_304 - n).find(|p| !alive(*p)).unwrap();
        let mine = std::process::id();
        let stale = dir.path().join(format!(".cairn-tmp-{dead}-abc"));
        let live = dir.path().join(format!(".cairn-tmp-{mine}-abc"));
        let other = dir.path().join(".cairn-tmp-notapid");
        for f in [&stale, &live, &other] {
            std::fs::write(f, "x").unwrap();
        }
        assert_eq!(sweep_dir(dir.path(), ".cairn-tmp-"), 1);
        assert!(!stale.exists() && live.exists() && other.exists());
    }
}
