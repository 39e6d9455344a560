//! Control files below the workspace's root. cairn started in `sub/`
//! loads the skills of every folder up to the root and the instruction
//! files on the way; another agent, an editor, direnv or the person's
//! shell prompt started there obeys `sub/.claude/settings.json`,
//! `sub/.vscode/tasks.json`, `sub/.envrc` or `sub/.git/config`. So the
//! census watches the same list ([`AGENT_CONTROL`] and [`NESTED_ONLY`])
//! relative to every folder of the workspace, not only its root.
//!
//! Finding a new one without walking the whole tree after every tool
//! call: an inotify watch on every folder (made once, with one walk, when
//! the session starts) reports which folders gained or lost an entry, and
//! only those are looked at again. Where inotify is missing or its watch
//! limit is reached, or its queue overflowed, the tree is walked again —
//! correct, only slower. `.git` folders are not entered: a repository's
//! own control files are covered by its identity (`census::ident`).
//!
//! What the census knew at its last check is bound read-only for the next
//! commands, as at the root ([`published`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::control::{AGENT_CONTROL, NESTED_ONLY};
use super::nested_sys as sys;

/// Each name, relative to a folder below the root, that the census watches.
fn names() -> impl Iterator<Item = &'static str> {
    AGENT_CONTROL.iter().chain(NESTED_ONLY).copied()
}

/// The first components, looked up for every entry of the first walk.
static FIRSTS: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
    std::sync::LazyLock::new(|| names().map(first).collect());

/// The first component of each watched name (`.claude`, `AGENTS.md`…).
fn first(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

pub struct Tree {
    root: PathBuf,
    /// The inotify instance; `None`: walk again at every refresh.
    inotify: Option<OwnedFd>,
    /// Watch descriptor → the folder it watches (relative).
    folders: HashMap<i32, PathBuf>,
    /// Folder (relative, below the root) → the watched paths found there.
    found: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree")
            .field("root", &self.root)
            .field("watching", &self.inotify.is_some())
            .field("found", &self.found)
            .finish()
    }
}

impl Tree {
    /// Walks `root` once, watching every folder.
    pub fn take(root: &Path) -> Tree {
        let mut t = Tree {
            root: root.to_path_buf(),
            inotify: sys::init(),
            folders: HashMap::new(),
            found: BTreeMap::new(),
        };
        t.walk(Path::new(""));
        t
    }

    /// The watched paths below the root (relative), as of the last refresh.
    pub fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.found.values().flatten()
    }

    /// Brings `paths` up to date with what changed since the last refresh.
    pub fn refresh(&mut self) {
        let Some(fd) = self.inotify.as_ref().map(AsRawFd::as_raw_fd) else {
            self.found.clear();
            self.walk(Path::new(""));
            return;
        };
        let mut dirty = BTreeSet::new();
        let mut buf = vec![0u8; 64 * 1024];
        // `fd` is only good while the descriptor is held: running out of
        // watches on the way drops it (below).
        while self.inotify.is_some()
            && let Some(n) = sys::read(fd, &mut buf)
        {
            let events = sys::events(&buf[..n]);
            if !self.take_events(events, &mut dirty) {
                // The queue overflowed: what was lost is unknown.
                *self = Tree::take(&self.root.clone());
                return;
            }
        }
        if self.inotify.is_none() {
            // The watches ran out on the way: events were dropped with
            // them, so the whole tree is looked at now.
            self.found.clear();
            self.walk(Path::new(""));
            return;
        }
        for folder in dirty {
            self.look_at(&folder);
            if let Some(parent) = folder.parent() {
                self.look_at(parent);
            }
        }
    }

    /// Takes a buffer's events; the folders that gained or lost an entry
    /// go into `dirty`. False when the kernel's queue overflowed.
    fn take_events(&mut self, events: Vec<sys::Event>, dirty: &mut BTreeSet<PathBuf>) -> bool {
        for ev in events {
            match ev {
                sys::Event::Overflow => return false,
                sys::Event::Gone(wd) => {
                    self.folders.remove(&wd);
                }
                sys::Event::Entry {
                    wd,
                    name,
                    dir,
                    came,
                } => {
                    let Some(folder) = self.folders.get(&wd).cloned() else {
                        continue;
                    };
                    let child = folder.join(&name);
                    match (dir, came) {
                        (true, true) => self.walk(&child),
                        (true, false) => self.forget(&child),
                        _ => {}
                    }
                    dirty.insert(folder);
                }
            }
        }
        true
    }

    /// Watches and looks at `rel` and every folder under it (not `.git`
    /// folders, not through links).
    fn walk(&mut self, rel: &Path) {
        let mut stack = vec![rel.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let path = self.root.join(&dir);
            if let Some(fd) = &self.inotify {
                match sys::watch(fd.as_raw_fd(), &path) {
                    Ok(wd) => {
                        self.folders.insert(wd, dir.clone());
                    }
                    Err(Some(sys::OutOfWatches)) => {
                        // Walk at every refresh instead.
                        self.inotify = None;
                        self.folders.clear();
                    }
                    Err(_) => {}
                }
            }
            let entries = match std::fs::read_dir(&path) {
                Ok(entries) => entries,
                Err(_) => {
                    // A folder that cannot be listed (`chmod 311`) still
                    // lets a tool reach a control file in it by name.
                    self.look_at(&dir);
                    continue;
                }
            };
            let mut any = false;
            for e in entries.flatten() {
                let name = e.file_name();
                // The entry's type comes with the listing: no stat.
                if e.file_type().is_ok_and(|t| t.is_dir()) && name != ".git" {
                    stack.push(dir.join(&name));
                }
                any = any || name.to_str().is_some_and(|n| FIRSTS.contains(n));
            }
            // Listable but not searchable (`chmod 600`): what is below is
            // out of sight, so the folder itself is looked at (a finding).
            if any || !searchable(&path) {
                self.look_at(&dir);
            }
        }
    }

    /// Stops watching `rel` and what is under it (deleted or moved away).
    fn forget(&mut self, rel: &Path) {
        let gone: Vec<i32> = (self.folders.iter())
            .filter(|(_, d)| d.starts_with(rel))
            .map(|(wd, _)| *wd)
            .collect();
        for wd in gone {
            self.folders.remove(&wd);
            if let Some(fd) = &self.inotify {
                sys::unwatch(fd.as_raw_fd(), wd);
            }
        }
        self.found.retain(|d, _| !d.starts_with(rel));
    }

    /// Finds the watched names in folder `rel` (never the root itself,
    /// which the census covers with its own list). A first component that
    /// is a link (`sub/.claude -> elsewhere`) counts as itself: it would
    /// lead a tool to files the census does not follow.
    fn look_at(&mut self, rel: &Path) {
        if rel.as_os_str().is_empty() {
            return;
        }
        let base = self.root.join(rel);
        let mut here = BTreeSet::new();
        for name in names() {
            let head = first(name);
            let head_meta = std::fs::symlink_metadata(base.join(head));
            if head_meta.as_ref().is_ok_and(|m| m.file_type().is_symlink()) {
                here.insert(rel.join(head));
            } else if head_meta.is_ok() && std::fs::symlink_metadata(base.join(name)).is_ok() {
                here.insert(rel.join(name));
            }
        }
        // A folder cairn cannot look into, which someone else may (the
        // person's tools, as root, or once its mode changes back), is
        // itself a finding.
        let is_dir = std::fs::symlink_metadata(&base).is_ok_and(|m| m.is_dir());
        if here.is_empty() && is_dir && !searchable(&base) {
            here.insert(rel.to_path_buf());
        }
        if here.is_empty() {
            self.found.remove(rel);
        } else {
            self.found.insert(rel.to_path_buf(), here);
        }
    }
}

/// Whether this process may list and enter `dir`.
fn searchable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path; access(2) only reads it.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::X_OK) == 0 }
}

/// What the census of each workspace last knew below its root, for the
/// policy to bind read-only (absolute paths, keyed by the real workspace).
static PUBLISHED: Mutex<Vec<(PathBuf, Vec<PathBuf>)>> = Mutex::new(Vec::new());

/// Keeps `paths` (relative to `workspace`) for [`published`]. A nested
/// repository is bound by the parts that run or redirect its git.
pub fn publish<'a>(workspace: &Path, paths: impl Iterator<Item = &'a PathBuf>) {
    let real = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
    let mut binds = Vec::new();
    for rel in paths {
        let path = real.join(rel);
        if rel.file_name() == Some(OsStr::new(".git")) {
            for part in ["config", "hooks", "info", "commondir", "worktrees"] {
                binds.push(path.join(part));
            }
        } else {
            binds.push(path);
        }
    }
    let mut all = PUBLISHED.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|(w, _)| *w != real);
    all.push((real, binds));
}

/// The paths below `workspace`'s root to bind read-only (see [`publish`]).
pub fn published(workspace: &Path) -> Vec<PathBuf> {
    let all = PUBLISHED.lock().unwrap_or_else(|e| e.into_inner());
    (all.iter())
        .filter(|(w, _)| w == workspace)
        .flat_map(|(_, b)| b.iter().cloned())
        .collect()
}
