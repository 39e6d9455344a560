//! What the sandbox's read-only binds cannot stop: git control files that
//! did not exist when a command started. A bind needs something to bind
//! over, and git writes its locks beside `.git/config`, so `.git` itself
//! stays writable. Two routes remain by which a command makes the person's
//! own `git status` (at the top of the workspace, outside cairn) obey a
//! config the command wrote:
//!
//! - a new `.git/commondir` (or `.git/config.worktree`): git then reads its
//!   config and hooks from the folder it names;
//! - a gitlink in the index (`git update-index --cacheinfo 160000,…`) at a
//!   folder holding a repository (`git init`) or a `.git` file: `git
//!   status` runs `git status` in that submodule, with its config
//!   (`core.fsmonitor`).
//!
//! [`Census`] notes these at the start of a session and checks them after
//! every tool call: what appeared or changed is moved out of the workspace
//! into cairn's quarantine folder (nothing is lost) and reported. The same
//! list is watched in every subfolder (`nested`): another repository, and
//! what an agent, editor or shell started there obeys.

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::gitindex;
use super::head::head;

/// Control files that redirect git (in `.git` itself) or that other agents
/// obey; a command cannot create them while they exist (they are bound
/// read-only) but can while they do not. `.cairn/config.toml` is not among
/// them: cairn writes it itself ("always" rules), and what a new one
/// loosens waits for the person's trust. `.cairn`'s commands, skills and
/// agents are: `.cairn` is bound read-only only where it exists, and a
/// command that makes a new one could otherwise plant a command that
/// replaces the person's own of the same name.
/// Besides these, every [`super::policy::AGENT_CONTROL`] file.
///
/// A change to one that was already there is the person's own (their
/// editor saving `.vscode/settings.json`, their `pre-commit install`) when
/// bubblewrap binds it read-only for every command: only its appearance is
/// a command's. See [`held_read_only`].
const WATCHED: &[&str] = &[
    // Bound read-only under bubblewrap (a change is the person's); where
    // only Landlock holds, a command approved once or by an "Always" rule
    // (`npm install` with the network) could write it, so it is watched.
    ".git/config",
    ".git/commondir",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info",
    ".git/worktrees",
    ".git/remotes",
    ".git/branches",
    ".cairn/commands",
    ".cairn/skills",
    ".cairn/agents",
];

use super::census_record::Ident;

/// Whether commands cannot change `rel` while it exists: bubblewrap binds
/// it read-only (`policy::READ_ONLY_IN_WORKSPACE` at the root,
/// `AGENT_CONTROL` in any folder: the census's own list below the root is
/// bound too, `nested::published`). A nested repository's `.git` is not:
/// its `commondir` or worktree config can still be created. Under Landlock
/// alone, or with no sandbox, a subfolder of the writable workspace cannot
/// be made read-only, so there every change counts.
/// And only while every process cairn started ran under those binds: one
/// that ran without them (the sandbox off, a run approved without it)
/// could have changed the file as well as the person (`binds_held`).
fn held_read_only(rel: &Path, bound: bool) -> bool {
    use super::policy::{AGENT_CONTROL, READ_ONLY_IN_WORKSPACE};
    // The bind holds a file only while no folder above it can be renamed
    // away and replaced: bubblewrap binds the folders in between in place
    // (`bwrap::holding_folders`), but only dot-folders and those inside
    // `.git`, not ordinary ones (`packages/app`), which people delete and
    // rename. Below an ordinary folder every change counts.
    if !bound || !super::policy::pinnable_chain(rel) {
        return false;
    }
    let parts: Vec<_> = rel.components().collect();
    (0..parts.len()).any(|i| {
        let tail: PathBuf = parts[i..].iter().collect();
        AGENT_CONTROL.iter().any(|c| tail == Path::new(c))
            || (i == 0 && READ_ONLY_IN_WORKSPACE.iter().any(|c| tail.starts_with(c)))
            || (i > 0 && tail.starts_with(".cairn"))
    })
}

#[derive(Debug, Default)]
pub struct Census {
    workspace: PathBuf,
    /// Workspace-relative path → what was there.
    seen: BTreeMap<PathBuf, Ident>,
    /// The index's (length, modified time, inode, change time) when last
    /// read. The change time is the kernel's own: a command that rewrites
    /// the index in place and sets its modified time back still moves it.
    index_stamp: Option<(u64, i64, u64, i64)>,
    gitlinks: Vec<PathBuf>,
    /// Where this census is kept between sessions (`census_record`), and
    /// this session's mark in it.
    record: Option<PathBuf>,
    owner: u64,
    /// Held while this session runs (`census_record::claim`).
    lock: Option<std::fs::File>,
    /// The control files below the root (`nested`).
    tree: Option<super::nested::Tree>,
    /// When each entry of `seen` was last taken in: bound read-only only
    /// for commands that began after that.
    seen_at: BTreeMap<PathBuf, std::time::Instant>,
    /// When the oldest command still running, or ended since the last
    /// check, began (`tools::jobs`).
    oldest_running: Option<std::time::Instant>,
    /// When the last check began.
    checked_at: Option<std::time::Instant>,
    /// For an approved write into a part too large to know entry by entry:
    /// the part (workspace-relative) → the approved path and the part's
    /// hash without it, taken right before the write (`before_writing`).
    pre_write: BTreeMap<PathBuf, (PathBuf, u128)>,
    /// Entries a command could have reached while they were not bound for
    /// it (it began before they were taken in), or that had another name:
    /// by inode. A command that linked one then could write it through
    /// the link later, long after the link is gone, so a change to one is
    /// never taken for the person's.
    exposed: BTreeMap<PathBuf, u64>,
    /// What git config names inside the workspace, read once: files the
    /// configs include, and hooks folders `core.hooksPath` names. The
    /// configs themselves are read-only to commands (bound, watched under
    /// Landlock, or outside the workspace), so this is fixed while a
    /// session runs.
    included: Vec<PathBuf>,
    hooks_dirs: Vec<PathBuf>,
    /// For each folder entry of `seen` (`.cursor`, `.claude/skills`), what
    /// each thing directly in it was when the folder was taken in: a write
    /// the person approved into the folder takes in that file only.
    parts: BTreeMap<PathBuf, Parts>,
    /// What a file tool wrote at an approved path (workspace-relative), as
    /// the next check must find it: anything else there was swapped in
    /// after the write and is not taken in (`expect_written`).
    written: BTreeMap<PathBuf, Ident>,
    /// Tests set whether bubblewrap's binds held, instead of asking.
    #[cfg(test)]
    pub(super) bound: Option<bool>,
}

impl Census {
    /// What is there now, in the repository at `workspace` (nothing when
    /// `.git` is not a folder).
    pub fn take(workspace: &Path) -> Census {
        // The folders the binds need are made first, so that they are not
        // taken for a command's.
        super::policy::make_bind_points(workspace);
        let mut c = Census {
            workspace: workspace.to_path_buf(),
            // What ended before is in what is taken now.
            checked_at: Some(std::time::Instant::now()),
            included: super::gitstate::included_configs(workspace),
            hooks_dirs: super::gitstate::hooks_dirs(workspace),
            ..Census::default()
        };
        c.refresh_gitlinks();
        c.tree = Some(super::nested::Tree::take(workspace));
        let now = c.current();
        c.take_in(now);
        // What already has another name (linked in an earlier session).
        let linked: Vec<PathBuf> = (c.seen.keys())
            .filter(|rel| linked_elsewhere(&c.workspace.join(rel)))
            .cloned()
            .collect();
        for rel in linked {
            c.expose(&rel);
        }
        c.publish();
        c
    }

    /// Notes `rel` as exposed, as the inode it is now.
    fn expose(&mut self, rel: &Path) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::symlink_metadata(self.workspace.join(rel)) {
            self.exposed.insert(rel.to_path_buf(), m.ino());
        }
    }

    /// Notes what a command could reach unbound now: every entry taken in
    /// after the oldest command still running (or ended since the last
    /// check) began, and every file with another name.
    fn note_exposed(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let reachable: Vec<PathBuf> = (self.seen.keys())
            .filter(|rel| {
                !self.bound_for_all(rel)
                    || std::fs::symlink_metadata(self.workspace.join(rel))
                        .is_ok_and(|m| m.is_file() && m.nlink() > 1)
            })
            .cloned()
            .collect();
        for rel in reachable {
            self.expose(&rel);
        }
        let seen = &self.seen;
        self.exposed.retain(|rel, _| seen.contains_key(rel));
    }

    /// Whether `rel` is, as it is now, an entry noted as exposed.
    fn is_exposed(&self, rel: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.exposed.get(rel).is_some_and(|ino| {
            std::fs::symlink_metadata(self.workspace.join(rel)).is_ok_and(|m| m.ino() == *ino)
        })
    }

    /// The next check takes in the approved `path` only if it holds what
    /// the file tool wrote there.
    pub fn expect_written(&mut self, path: &Path, written: &Written) {
        let Ok(rel) = path.strip_prefix(&self.workspace) else {
            return;
        };
        self.written.insert(rel.to_path_buf(), written.0.clone());
    }

    /// Whether the approved `rel` holds what was written there, when that
    /// is known (`expect_written`).
    pub(super) fn holds_written(&self, rel: &Path, now: Option<&Ident>) -> bool {
        match self.written.get(rel) {
            Some(expected) => now == Some(expected),
            None => true,
        }
    }

    /// Tells the next check when the oldest command still running began:
    /// a file taken in after that was not bound for it, so a change to it
    /// may be that command's, not the person's.
    pub fn set_oldest_running(&mut self, at: Option<std::time::Instant>) {
        self.oldest_running = at;
    }

    /// When the last check began (`None` before the first): a command
    /// that ended before then was counted by it.
    pub fn last_checked(&self) -> Option<std::time::Instant> {
        self.checked_at
    }

    /// Whether every command still running began after `rel` was taken in
    /// (and so had it bound read-only, where bubblewrap binds).
    fn bound_for_all(&self, rel: &Path) -> bool {
        match (self.seen_at.get(rel), self.oldest_running) {
            (Some(at), Some(oldest)) => *at < oldest,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// Keeps `seen` as `now`, noting when each new entry came (a bind
    /// holds the path: a later change by the person, even by a rename,
    /// does not make it writable to a command that had it bound).
    fn take_in(&mut self, now: BTreeMap<PathBuf, Ident>) {
        let at = std::time::Instant::now();
        for rel in now.keys() {
            if !self.seen_at.contains_key(rel) {
                self.seen_at.insert(rel.clone(), at);
            }
        }
        self.seen_at.retain(|rel, _| now.contains_key(rel));
        for (rel, id) in &now {
            let known = self.seen.get(rel) == Some(id) && self.parts.contains_key(rel);
            if matches!(id, Ident::Dir(..)) && !known {
                let parts = parts_of(&self.workspace.join(rel));
                self.parts.insert(rel.clone(), parts);
            }
        }
        self.parts.retain(|rel, _| now.contains_key(rel));
        self.seen = now;
    }

    /// What the next commands get bound read-only below the root: what
    /// this census knows there now.
    fn publish(&self) {
        if let Some(t) = &self.tree {
            super::nested::publish(&self.workspace, t.paths());
        }
        let named = self
            .included
            .iter()
            .chain(&self.hooks_dirs)
            .cloned()
            .collect();
        super::control::publish_git_named(&self.workspace, named);
    }

    /// Every git folder in the workspace whose to-do lists the person's
    /// git may carry on with: the repository's, its linked worktrees' and
    /// submodules' (`.git/worktrees/*`, `.git/modules/**`), and the nested
    /// repositories' the census knows.
    fn git_dirs(&self) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = self.git_dir().into_iter().collect();
        if let Ok(entries) = std::fs::read_dir(self.workspace.join(".git/worktrees")) {
            all.extend((entries.flatten()).map(|e| e.path()));
        }
        all.extend(super::policy::submodule_dirs(&self.workspace));
        let nested = (self.tree.iter().flat_map(|t| t.paths()))
            .chain(self.gitlinks.iter())
            .map(|rel| match rel.file_name() {
                Some(n) if n == ".git" => self.workspace.join(rel),
                _ => self.workspace.join(rel).join(".git"),
            });
        all.extend(nested);
        all.retain(|d| {
            std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()) && self.plainly_inside(d)
        });
        all.sort();
        all.dedup();
        all
    }

    fn git_dir(&self) -> Option<PathBuf> {
        let git = self.workspace.join(".git");
        std::fs::symlink_metadata(&git)
            .is_ok_and(|m| m.is_dir())
            .then_some(git)
    }

    /// Reads the index's gitlinks again when it changed. `true` when it
    /// changed and cannot be read (too large, damaged): cairn cannot know
    /// which nested repositories the person's git would enter.
    fn refresh_gitlinks(&mut self) -> bool {
        let Some(git) = self.git_dir() else {
            self.gitlinks.clear();
            return false;
        };
        let index = git.join("index");
        let stamp = std::fs::symlink_metadata(&index).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (
                m.len(),
                m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                m.ino(),
                m.ctime() * 1_000_000_000 + m.ctime_nsec(),
            )
        });
        if stamp == self.index_stamp {
            return false;
        }
        self.index_stamp = stamp;
        match gitindex::gitlinks(&git) {
            Some(links) => {
                self.gitlinks = links;
                false
            }
            None => stamp.is_some(),
        }
    }

    fn current(&self) -> BTreeMap<PathBuf, Ident> {
        let mut out = BTreeMap::new();
        let watched = (WATCHED.iter())
            .chain(super::policy::AGENT_CONTROL)
            .map(PathBuf::from);
        let links = self.gitlinks.iter().map(|g| g.join(".git"));
        // Files the repository's config includes from the workspace.
        let included = self.included.iter().cloned();
        // A submodule's own commondir or worktree config redirects the
        // person's git as the top-level one does.
        let submodules = super::policy::submodule_dirs(&self.workspace)
            .into_iter()
            .filter_map(|d| d.strip_prefix(&self.workspace).ok().map(Path::to_path_buf))
            .flat_map(|d| [d.join("commondir"), d.join("config.worktree")]);
        let nested = self.tree.iter().flat_map(|t| t.paths().cloned());
        // A hooks folder the config names in the workspace, and each
        // script in it: a new or changed one is a plant.
        let hooks: Vec<PathBuf> = (self.hooks_dirs.iter())
            .flat_map(|dir| {
                let mut all = vec![dir.clone()];
                if let Ok(entries) = std::fs::read_dir(self.workspace.join(dir)) {
                    all.extend(entries.flatten().map(|e| dir.join(e.file_name())));
                }
                all
            })
            .collect();
        for rel in (watched.chain(links).chain(submodules))
            .chain(included)
            .chain(nested)
            .chain(hooks)
        {
            let path = self.workspace.join(&rel);
            if self.plainly_inside(&path)
                && let Some(id) = ident(&path)
            {
                out.insert(rel, id);
            }
        }
        // An index that is a link is read by git but not by cairn's
        // gitlink reader; a `.claude` or `.agents` that is a link leads
        // other agents to settings and skills the checks above do not
        // follow (they never go through links). Each is taken for a plant
        // when it appears; the link itself is moved, never what it names.
        for rel in [
            ".git/index",
            ".claude",
            ".agents",
            ".vscode",
            ".gemini",
            ".idea",
        ] {
            let path = self.workspace.join(rel);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
                && self.plainly_inside(&path)
                && let Some(id) = ident(&path)
            {
                out.insert(PathBuf::from(rel), id);
            }
        }
        out
    }

    /// Whether the folder holding `path` is where its name says, with no
    /// link on the way: a link (`vendor/x -> ~/other`, `.claude -> ~/.claude`)
    /// must never make cairn move the person's own files.
    fn plainly_inside(&self, path: &Path) -> bool {
        let (Some(parent), Ok(ws)) = (path.parent(), std::fs::canonicalize(&self.workspace)) else {
            return false;
        };
        let Ok(rel) = parent.strip_prefix(&self.workspace) else {
            return false;
        };
        std::fs::canonicalize(parent).is_ok_and(|real| real == ws.join(rel))
    }

    /// Moves what appeared or changed since the last check into
    /// `quarantine` and says what, for the model and the person. What the
    /// person approved a file tool to write (`accepted`, absolute paths)
    /// is taken as it is now.
    pub fn check(&mut self, quarantine: &Path, accepted: &[PathBuf]) -> Vec<String> {
        self.check_deferring(quarantine, accepted, &[])
    }

    /// [`Census::check`], leaving alone (neither moved nor taken in) what
    /// holds a path in `deferred`: a file tool's write still running or
    /// waiting for the person. A command's plant beside it is judged when
    /// the write is over — taken in with it only if the write was done.
    pub fn check_deferring(
        &mut self,
        quarantine: &Path,
        accepted: &[PathBuf],
        deferred: &[PathBuf],
    ) -> Vec<String> {
        let mut said = Vec::new();
        self.checked_at = Some(std::time::Instant::now());
        self.note_exposed();
        // Folders that lost a planted part, with the parts they are known
        // by from now on.
        let mut settle_parts: Vec<(PathBuf, Parts)> = Vec::new();
        if self.refresh_gitlinks() {
            // Changed by a command and unreadable: the gitlinks it may
            // hide are unknown, so the index goes (git rebuilds one from
            // HEAD with `git reset`; the original is kept).
            let index = self.workspace.join(".git/index");
            said.push(
                match move_out(&index, Path::new(".git/index"), quarantine) {
                    Ok(to) => format!(
                        "`.git/index` changed during the command and is too large or damaged for \
                     cairn to check which nested repositories your own git would enter; \
                     cairn moved it to {} (`git reset` makes a new one from HEAD)",
                        to.display()
                    ),
                    Err(e) => format!(
                        "`.git/index` changed during the command and cannot be checked, and \
                     cairn could not move it ({e}): run `git reset` before you run git here"
                    ),
                },
            );
            self.index_stamp = None;
            self.gitlinks.clear();
        }
        if let Some(t) = &mut self.tree {
            t.refresh();
        }
        let known_before = self.seen.clone();
        // What is watched now, read once for all the approved paths.
        let watched: Vec<PathBuf> = match accepted.is_empty() {
            true => Vec::new(),
            false => self.current().into_keys().collect(),
        };
        for path in accepted {
            let Ok(rel) = path.strip_prefix(&self.workspace) else {
                continue;
            };
            for w in watched.iter().filter(|w| rel.starts_with(w)) {
                self.accept(w, rel, quarantine, &mut said);
            }
        }
        self.written.clear();
        self.pre_write.clear();
        let now = self.current();
        #[cfg(test)]
        let bound = self.bound.unwrap_or_else(super::binds_held);
        #[cfg(not(test))]
        let bound = super::binds_held();
        let deferred: Vec<PathBuf> = (deferred.iter())
            .filter_map(|p| p.strip_prefix(&self.workspace).ok())
            .map(Path::to_path_buf)
            .collect();
        let waiting = |rel: &Path| deferred.iter().any(|d| d.starts_with(rel));
        let mut moving: Vec<(PathBuf, Ident)> = (now.iter())
            .filter(|(rel, _)| !waiting(rel))
            .filter(|(rel, id)| {
                let before = self.seen.get(*rel);
                if before == Some(*id) {
                    return false;
                }
                // A change to what a bind held is the person's — unless a
                // file in it has another name a command could write
                // through (a hard link made before the bind).
                let held = before.is_some()
                    && held_read_only(rel, bound)
                    && self.bound_for_all(rel)
                    && !self.is_exposed(rel)
                    && !linked_elsewhere(&self.workspace.join(rel));
                !held
            })
            .filter(|(rel, id)| !runs_nothing(&self.workspace.join(rel), rel, id))
            .map(|(r, i)| (r.clone(), i.clone()))
            .collect();
        if !moving.is_empty() {
            self.known_elsewhere(&mut moving);
        }
        // A folder that is still the same folder (`.claude/skills`) loses
        // only what in it appeared or changed: the person's skills beside
        // a planted one stay where they are.
        let mut moving_parts = Vec::new();
        // A folder that changed while none of its parts did (nor went
        // away) is not taken in: it keeps its old identity and the next
        // check judges it again.
        let mut unexplained: Vec<PathBuf> = Vec::new();
        moving.retain(|(rel, id)| {
            let Some((parts, lost)) = self.changed_parts(rel, known_before.get(rel), id) else {
                return true;
            };
            if parts.is_empty() && !lost {
                unexplained.push(rel.clone());
            }
            moving_parts.extend(parts.into_iter().map(|p| (rel.clone(), p)));
            false
        });
        // What goes: the changed parts of folders that stay, and whole
        // entries.
        let going: Vec<PathBuf> = (moving_parts.iter().map(|(_, p)| p.clone()))
            .chain(moving.iter().map(|(r, _)| r.clone()))
            .collect();
        said.extend(move_and_say(&self.workspace, &going, quarantine));
        let mut away = |path: &Path| {
            let rel = path.strip_prefix(&self.workspace).unwrap_or(path);
            move_out(path, rel, quarantine)
        };
        for git in self.git_dirs() {
            said.extend(super::gitstate::disarm(&git, accepted, &mut away));
        }
        // Read again only when something was moved; written only when
        // something changed.
        let mut seen = if said.is_empty() {
            now
        } else {
            super::policy::make_bind_points(&self.workspace);
            if let Some(t) = &mut self.tree {
                t.refresh();
            }
            let moved: BTreeSet<PathBuf> = moving.into_iter().map(|(r, _)| r).collect();
            // A folder that lost a planted part is taken in as it is now
            // only when nothing in it is new since it was judged: its
            // identity is read first, then its parts, so a part planted
            // meanwhile is either in neither or makes the parts differ;
            // then the folder keeps its old identity and the next check
            // judges it again.
            let judged_again: BTreeSet<PathBuf> = (moving_parts.iter())
                .map(|(watched, _)| watched.clone())
                .collect();
            let mut now = now;
            for rel in &judged_again {
                let folder = self.workspace.join(rel);
                let before = self.parts.get(rel).cloned().unwrap_or_default();
                // What went from this folder, as paths below it.
                let lost: BTreeSet<PathBuf> = (moving_parts.iter())
                    .filter(|(w, _)| w == rel)
                    .filter_map(|(_, p)| p.strip_prefix(rel).ok().map(Path::to_path_buf))
                    .collect();
                let id = ident(&folder);
                let parts = parts_of(&folder);
                let known = parts.nothing_new(&before, &lost);
                match (id, known) {
                    (Some(id), true) => {
                        now.insert(rel.clone(), id);
                        settle_parts.push((rel.clone(), parts));
                    }
                    _ => {
                        match known_before.get(rel) {
                            Some(old) => now.insert(rel.clone(), old.clone()),
                            None => now.remove(rel),
                        };
                        settle_parts.push((rel.clone(), before.without(&lost)));
                    }
                }
            }
            settled(self.current(), &now, &moved, &self.seen)
        };
        for rel in &unexplained {
            match known_before.get(rel) {
                Some(id) => seen.insert(rel.clone(), id.clone()),
                None => seen.remove(rel),
            };
        }
        // What waits for a write is judged later against what was known.
        let waiting: Vec<PathBuf> = seen.keys().filter(|r| waiting(r)).cloned().collect();
        for rel in waiting {
            match known_before.get(&rel) {
                Some(id) => seen.insert(rel, id.clone()),
                None => seen.remove(&rel),
            };
        }
        self.publish();
        let changed = seen != known_before;
        self.take_in(seen);
        for (rel, parts) in settle_parts {
            if self.seen.contains_key(&rel) {
                self.parts.insert(rel, parts);
            }
        }
        // What was taken in now while a command that began before ran.
        self.note_exposed();
        if changed {
            self.save(None, &[]);
        }
        said
    }

    /// What is there now, compared with what the sessions before in this
    /// workspace knew (their records beside `record`, `census_record`): a
    /// difference made while one of cairn's jobs could still write — any
    /// session still running here, or one that did not end cleanly — is
    /// moved into `quarantine`. Returns what it moved, and what earlier
    /// sessions' final checks moved.
    pub fn resume(workspace: &Path, record: &Path, quarantine: &Path) -> (Census, Vec<String>) {
        use super::census_record as r;
        let mut c = Census::take(workspace);
        c.owner = r::fnv(&r::now().to_le_bytes()) ^ u64::from(std::process::id());
        let dir = r::sessions_dir(record);
        if let Some((own, lock)) = r::claim(&dir, c.owner) {
            c.record = Some(own);
            c.lock = Some(lock);
        }
        let own = c.record.clone().unwrap_or_default();
        let others = r::others(&dir, record, &own);
        let mut said = Vec::new();
        if !others.is_empty() {
            for o in &others {
                said.extend(o.record.unreported.iter().cloned());
            }
            let known: Vec<(PathBuf, Ident)> = others
                .iter()
                .flat_map(|o| o.record.seen.iter().cloned())
                .collect();
            let mut moved = BTreeSet::new();
            for (rel, id) in &c.seen {
                let path = workspace.join(rel);
                if known.iter().any(|(k, i)| k == rel && i == id)
                    || !r::made_while_any_unwatched(&others, r::changed_at(&path))
                    || runs_nothing(&path, rel, id)
                {
                    continue;
                }
                said.push(moved_at_start(&path, rel, quarantine));
                moved.insert(rel.clone());
            }
            // A moved `.git/hooks` or `.git/info` is a bind point the
            // next command's sandbox needs.
            super::policy::make_bind_points(workspace);
            if let Some(t) = &mut c.tree {
                t.refresh();
            }
            let judged = c.seen.clone();
            let mut known = judged.clone();
            known.retain(|rel, _| !moved.contains(rel));
            let now = settled(c.current(), &judged, &moved, &known);
            c.take_in(now);
            c.publish();
            // What the sessions that are gone knew is taken in now.
            for o in others.iter().filter(|o| !o.alive) {
                r::remove(o);
            }
        }
        c.save(None, &[]);
        (c, said)
    }

    /// What in the watched folder `rel` appeared or changed since it was
    /// taken in, when it is still the same folder (same inode, not a git
    /// folder, its parts known), and whether a part known before is gone
    /// (not a plant: it stays gone); `None` when the whole entry must go.
    fn changed_parts(
        &self,
        rel: &Path,
        before: Option<&Ident>,
        now: &Ident,
    ) -> Option<(Vec<PathBuf>, bool)> {
        let (Some(Ident::Dir(was, _)), Ident::Dir(is, _)) = (before, now) else {
            return None;
        };
        if was != is || rel.file_name().is_some_and(|n| n == ".git") {
            return None;
        }
        let known = self.parts.get(rel)?;
        let folder = self.workspace.join(rel);
        // Only a folder reached without a link: a part moved must be the
        // one judged.
        if !self.plainly_inside(&folder.join("x")) {
            return None;
        }
        let (changed, lost) = known.changes(&parts_of(&folder));
        Some((changed.into_iter().map(|p| rel.join(p)).collect(), lost))
    }

    /// Of `moving`, what another cairn running in this workspace knows as
    /// it is now (its approved write, its person's change): taken as known
    /// here too instead of moved.
    fn known_elsewhere(&mut self, moving: &mut Vec<(PathBuf, Ident)>) {
        use super::census_record as r;
        let Some(own) = &self.record else {
            return;
        };
        let Some(dir) = own.parent() else {
            return;
        };
        let others = r::others(dir, Path::new(""), own);
        moving.retain(|(rel, id)| {
            let known = (others.iter().filter(|o| o.alive))
                .any(|o| o.record.seen.iter().any(|(k, i)| k == rel && i == id));
            if known {
                self.seen.insert(rel.clone(), id.clone());
                (self.seen_at)
                    .entry(rel.clone())
                    .or_insert_with(std::time::Instant::now);
            }
            !known
        });
    }

    /// The session's end, after its jobs were killed: one last check, and
    /// the record marked as ended cleanly, with what this check moved for
    /// the next session to say.
    pub fn finish(&mut self, quarantine: &Path) {
        let said = self.check(quarantine, &[]);
        self.save(Some(super::census_record::now()), &said);
    }

    /// Keeps this session's census for the next session.
    fn save(&self, ended: Option<i128>, unreported: &[String]) {
        use super::census_record as r;
        let Some(file) = &self.record else {
            return;
        };
        let record = r::Record {
            version: 0,
            owner: self.owner,
            ended,
            seen: self
                .seen
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            unreported: unreported.to_vec(),
        };
        r::save(file, &record);
    }
}

/// Whether the entry at `path` (the workspace's `rel`), judged as `id`,
/// can make nothing run, as a fresh `git init` makes it: a `.git/hooks`
/// folder holding only git's sample hooks (which git never runs), a
/// `.git/info` holding only an `exclude` list of comments (a pattern could
/// hide a plant from the person's `git status`), an empty `.git/branches`.
/// Told from the same read its identity comes from, which must be `id`: a
/// folder swapped for a clean twin while it is read again is not it.
/// Whether a file at `path`, or in the folder at `path`, has another name
/// (a hard link) or is a link: what a read-only bind holds is the name,
/// not the file, so a command that linked it before it was bound writes it
/// through the other name, and what a link names lies outside the bind. A
/// folder too large to walk counts as linked.
fn linked_elsewhere(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if meta.is_symlink() {
        return true;
    }
    if !meta.is_dir() {
        return meta.is_file() && meta.nlink() > 1;
    }
    let mut budget = NESTED_ENTRIES;
    let mut level = vec![path.to_path_buf()];
    for _ in 0..=NESTED_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let Some(left) = budget.checked_sub(1) else {
                    return true;
                };
                budget = left;
                match std::fs::symlink_metadata(e.path()) {
                    Ok(m) if m.is_dir() => next.push(e.path()),
                    // What a link names is bound by no bind of the entry.
                    Ok(m) if m.is_symlink() => return true,
                    Ok(m) if m.is_file() && m.nlink() > 1 => return true,
                    _ => {}
                }
            }
        }
        if next.is_empty() {
            return false;
        }
        level = next;
    }
    true
}

fn runs_nothing(path: &Path, rel: &Path, id: &Ident) -> bool {
    let allowed = |name: &[u8]| match rel.to_str() {
        Some(".git/hooks") => name.ends_with(b".sample"),
        Some(".git/info") => name == b"exclude",
        _ => false,
    };
    if ![".git/hooks", ".git/info", ".git/branches"]
        .iter()
        .any(|r| rel == Path::new(r))
    {
        return false;
    }
    let mut noted = Some(Vec::new());
    // A real folder only (`ident` does not follow a link): a link's folder
    // could fill later, unseen.
    if !matches!(ident_noting(path, &mut noted), Some(read @ Ident::Dir(..)) if read == *id) {
        return false;
    }
    noted.unwrap_or_default().iter().all(|(name, content)| {
        let comments_only = |text: &[u8]| {
            (text.len() < super::head::HEAD_BYTES as usize)
                && (text.split(|b| *b == b'\n'))
                    .all(|l| l.trim_ascii().is_empty() || l.starts_with(b"#"))
        };
        allowed(name.as_encoded_bytes())
            && content
                .as_deref()
                .is_some_and(|c| rel != Path::new(".git/info") || comments_only(c))
    })
}

/// What a census knows after it moved things: of `after` (read again),
/// what is as it was judged (`judged`) and was not moved. Anything else —
/// a moved thing back already, a change made since it was judged (a job
/// still running may plant again at once) — keeps what was known of it
/// (`known`), or stays unknown, so the next check judges it: it is never
/// taken in as found.
fn settled(
    after: BTreeMap<PathBuf, Ident>,
    judged: &BTreeMap<PathBuf, Ident>,
    moved: &BTreeSet<PathBuf>,
    known: &BTreeMap<PathBuf, Ident>,
) -> BTreeMap<PathBuf, Ident> {
    (after.into_iter())
        .filter_map(|(rel, id)| {
            if !moved.contains(&rel) && judged.get(&rel) == Some(&id) {
                return Some((rel, id));
            }
            known.get(&rel).map(|k| (rel, k.clone()))
        })
        .collect()
}

fn moved_at_start(path: &Path, rel: &Path, quarantine: &Path) -> String {
    match move_out(path, rel, quarantine) {
        Ok(to) => format!(
            "`{}` appeared or changed after cairn's last check in this workspace, while a \
             command of an earlier session may still have been running (it did not end \
             cleanly, or another cairn still runs here); your own git (or another agent) \
             would obey it, so cairn moved it to {} — if you made it yourself, move it back",
            rel.display(),
            to.display()
        ),
        Err(e) => format!(
            "`{}` appeared or changed after cairn's last check, while a command of an earlier \
             session may still have been running, and cairn could not move it ({e}): check \
             it before you run git or an agent here",
            rel.display()
        ),
    }
}

/// Where the census of `workspace` is kept under cairn's state folder.
pub fn record_file(state: &Path, workspace: &Path) -> PathBuf {
    super::census_record::file_for(state, workspace)
}

/// What a file tool wrote, as the census identifies a file: kept for the
/// check after the call ([`Census::expect_written`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written(Ident);

impl Written {
    /// What [`ident`] finds for a regular file holding `bytes` (one
    /// larger than it reads whole matches nothing: its change time is
    /// part of its identity).
    pub fn of(bytes: &[u8]) -> Written {
        if bytes.len() as u64 > super::head::WHOLE_BYTES {
            return Written(Ident::Other(u64::MAX));
        }
        Written(Ident::File(file_hash(bytes, bytes.len() as u64)))
    }
}

/// A file's identity from what it holds and its length.
fn file_hash(bytes: &[u8], len: u64) -> u128 {
    super::census_record::strong(bytes) ^ u128::from(len)
}

/// `bytes` after their length: what is framed so can never read as
/// another split of the same bytes (a config's end as a commondir).
fn frame(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn ident(path: &Path) -> Option<Ident> {
    ident_noting(path, &mut None)
}

/// What a folder directly holds, as [`ident`] read it: each name, with
/// what it holds when it is a regular file.
type Noted = Vec<(std::ffi::OsString, Option<Vec<u8>>)>;

/// [`ident`], noting in `noted` (when given) what a watched folder other
/// than a git folder directly holds, from the same read.
fn ident_noting(path: &Path, noted: &mut Option<Noted>) -> Option<Ident> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    // Kept on disk between sessions: a hash that never changes.
    let hash = super::census_record::strong;
    Some(if meta.is_file() {
        if meta.len() <= super::head::WHOLE_BYTES {
            let whole = super::head::up_to(path, super::head::WHOLE_BYTES);
            Ident::File(file_hash(&whole, meta.len()))
        } else {
            // Too large to read at every check: its start and its
            // metadata (a write past the start changes the change time).
            let mut known = head(path);
            push_meta(&mut known, &meta);
            Ident::File(hash(&known))
        }
    } else if meta.is_dir() {
        // A git folder: what redirects or runs — its config, commondir,
        // worktree config and each hook, by name and content.
        let mut inside = Vec::new();
        for name in ["config", "commondir", "config.worktree"] {
            frame(&mut inside, &head(&path.join(name)));
        }
        if let Ok(hooks) = std::fs::read_dir(path.join("hooks")) {
            let mut names: Vec<_> = hooks.flatten().map(|e| e.file_name()).collect();
            names.sort();
            for n in names {
                frame(&mut inside, n.as_encoded_bytes());
                frame(&mut inside, &head(&path.join("hooks").join(&n)));
            }
        }
        if path.file_name().is_some_and(|n| n != ".git") {
            // Any other watched folder (`.git/remotes`, `.claude/skills`,
            // `.cursor`): what it holds directly, by name and content.
            inside.extend(listing(path, noted));
        }
        Ident::Dir(meta.ino(), hash(&inside))
    } else if meta.is_symlink() {
        // A link by itself and by what it names (agents follow it; what
        // it names may lie where commands write, unbound).
        let mut known = meta.ino().to_le_bytes().to_vec();
        if let Ok(t) = std::fs::metadata(path) {
            push_meta(&mut known, &t);
            if t.is_dir() {
                nested_listing(path, &mut known);
            }
        }
        Ident::Other(hash(&known) as u64)
    } else {
        Ident::Other(meta.ino())
    })
}

/// The names of a folder's entries, sorted, each with the start of its
/// content when it is a file.
fn listing(dir: &Path, noted: &mut Option<Noted>) -> Vec<u8> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        out.extend_from_slice(n.as_encoded_bytes());
        out.push(0);
        let p = dir.join(&n);
        let meta = std::fs::symlink_metadata(&p);
        // Every entry by its inode, size and change time too: a link
        // pointed elsewhere, or a large file grown past what `head` reads,
        // changes it.
        if let Ok(m) = &meta {
            push_meta(&mut out, m);
        }
        if let Some(noted) = noted.as_mut() {
            let content = meta.as_ref().is_ok_and(|m| m.is_file()).then(|| head(&p));
            noted.push((n.clone(), content));
        }
        match meta {
            Ok(m) if m.is_symlink() => {
                // What the link names, as a part of its own.
                if let Ok(t) = std::fs::metadata(&p) {
                    push_meta(&mut out, &t);
                    if t.is_dir() {
                        nested_listing(&p, &mut out);
                    }
                }
            }
            Ok(m) if m.is_file() => frame(&mut out, &head(&p)),
            // Each part (a skill) walked on its own budget: a large tree
            // in one never hides a change in another.
            Ok(m) if m.is_dir() => nested_listing(&p, &mut out),
            _ => {}
        }
    }
    out
}

/// The most entries below one part of a watched folder (one skill) that
/// count toward its identity; a part holding more (a vendored
/// `node_modules`) is judged by its shallowest ones.
const NESTED_ENTRIES: usize = 50_000;
/// How deep below a watched folder's part the walk goes.
const NESTED_DEPTH: usize = 16;

/// What lies below a watched folder's part (a skill's `SKILL.md` and its
/// scripts), shallowest first: each entry's name, inode, size and change
/// time (a folder's changes when an entry is added, removed or renamed in
/// it). The kernel sets the change time on every write and no one can set
/// it back, so a command that rewrites a file in place changes it; reading
/// only the metadata keeps the check cheap.
fn nested_listing(part: &Path, out: &mut Vec<u8>) {
    nested_listing_without(part, out, None);
}

/// [`nested_listing`], leaving out the entry `skip` (a path below `part`)
/// and the metadata of the folders it is in (writing it changes their
/// change times).
fn nested_listing_without(part: &Path, out: &mut Vec<u8>, skip: Option<&Path>) {
    let mut budget = NESTED_ENTRIES;
    let mut level = vec![PathBuf::new()];
    // As deep as it goes, within the budget: a file rewritten in place
    // far down changes no folder above it.
    loop {
        let mut next = Vec::new();
        for sub in &level {
            let mut entries: Vec<_> = (std::fs::read_dir(part.join(sub)).into_iter())
                .flatten()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            entries.sort();
            out.push(b'{');
            for n in entries {
                let rel = sub.join(&n);
                if skip == Some(rel.as_path()) {
                    continue;
                }
                if budget == 0 {
                    out.extend_from_slice(b"\0cut");
                    return;
                }
                budget -= 1;
                out.extend_from_slice(n.as_encoded_bytes());
                out.push(0);
                let p = part.join(&rel);
                let Ok(m) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                let above_skip = skip.is_some_and(|s| s.starts_with(&rel));
                if !above_skip {
                    push_meta(out, &m);
                }
                // A link counts as what it names too: agents follow it,
                // and what it names may lie where commands write.
                let mut is_dir = m.is_dir();
                if m.is_symlink()
                    && let Ok(t) = std::fs::metadata(&p)
                {
                    if !above_skip {
                        push_meta(out, &t);
                    }
                    is_dir = t.is_dir();
                }
                if is_dir {
                    next.push(rel);
                }
            }
            out.push(b'}');
        }
        if next.is_empty() {
            return;
        }
        level = next;
    }
}

/// An entry's inode, length and change time, appended to `out`: what
/// changes when anything is written to it or it is replaced.
fn push_meta(out: &mut Vec<u8>, meta: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    for v in [
        meta.ino(),
        meta.len(),
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// How many entries moved at once are named one by one.
const SAID_ONE_BY_ONE: usize = 5;

/// Moves the workspace's `rels` to the quarantine and says what went
/// where: a few one by one, many (a command planting in a loop) into one
/// folder, said in one line with the first names, plus one line for what
/// could not be moved.
fn move_and_say(workspace: &Path, rels: &[PathBuf], quarantine: &Path) -> Vec<String> {
    moved_and_said(workspace, rels, quarantine, "during the command")
}

/// [`move_and_say`] for what changed in a watched folder beside a write
/// the person approved there.
fn move_and_say_beside(workspace: &Path, rels: &[PathBuf], quarantine: &Path) -> Vec<String> {
    moved_and_said(workspace, rels, quarantine, "beside a file you approved")
}

fn moved_and_said(
    workspace: &Path,
    rels: &[PathBuf],
    quarantine: &Path,
    when: &str,
) -> Vec<String> {
    if rels.len() <= SAID_ONE_BY_ONE {
        return (rels.iter())
            .map(
                |rel| match move_out(&workspace.join(rel), rel, quarantine) {
                    Ok(to) => format!(
                        "`{}` appeared or changed {when}; your own git (or cairn, or another agent) \
                     would obey it outside the sandbox, so cairn moved it to {} — if you made it \
                     yourself, move it back",
                        rel.display(),
                        to.display()
                    ),
                    Err(e) => format!(
                        "`{}` appeared or changed {when} and your own git (or cairn, or another \
                     agent) would obey it; cairn could not move it away ({e}): remove it before \
                     you run git or an agent here",
                        rel.display()
                    ),
                },
            )
            .collect();
    }
    let dir = stamped(quarantine);
    let (mut moved, mut stuck) = (Vec::new(), Vec::new());
    for rel in rels {
        match move_into(&workspace.join(rel), rel, &dir) {
            Ok(_) => moved.push(rel),
            Err(_) => stuck.push(rel),
        }
    }
    let names = |list: &[&PathBuf]| {
        let shown: Vec<String> = list
            .iter()
            .take(3)
            .map(|p| format!("`{}`", p.display()))
            .collect();
        let more = list.len().saturating_sub(3);
        match more {
            0 => shown.join(", "),
            n => format!("{} and {n} more", shown.join(", ")),
        }
    };
    let mut said = Vec::new();
    if !moved.is_empty() {
        said.push(format!(
            "{} entries appeared or changed {when} in folders your own git (or cairn, or \
             another agent) obeys outside the sandbox ({}); cairn moved them to {} — if you \
             made them yourself, move them back",
            moved.len(),
            names(&moved),
            dir.display()
        ));
    }
    if !stuck.is_empty() {
        said.push(format!(
            "{} entries appeared or changed {when} that your own git (or cairn, or another \
             agent) would obey, and cairn could not move them ({}): remove them before you run \
             git or an agent here",
            stuck.len(),
            names(&stuck)
        ));
    }
    said
}

/// Moves `from` (the workspace's `rel`) into a new folder under
/// `quarantine`, said as where it went.
fn move_out(from: &Path, rel: &Path, quarantine: &Path) -> std::io::Result<PathBuf> {
    move_into(from, rel, &stamped(quarantine))
}

/// A new folder under `quarantine`; none (empty) when there is no
/// quarantine folder, and the workspace's own is used.
fn stamped(quarantine: &Path) -> PathBuf {
    match quarantine.as_os_str().is_empty() {
        true => PathBuf::new(),
        false => quarantine.join(format!("{}", stamp())),
    }
}

fn stamp() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Moves `from` — the workspace's `rel` — into the folder `dir` (made when
/// missing), named by its path with `/` as `%`. The folder holding it is
/// opened from the workspace one part at a time without following a link
/// and the move is made from that descriptor (`renameat`), so a folder on
/// the way swapped for a link while cairn works never makes cairn move
/// anything outside the workspace. Where `dir` is on another file system,
/// it goes to `.cairn-quarantine/` at the workspace's root instead (out of
/// every folder an agent obeys). A path outside the workspace (a linked
/// worktree's git folder) is moved by its path.
fn move_into(from: &Path, rel: &Path, dir: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let flat = rel.to_string_lossy().replace('/', "%");
    let Some(workspace) = (rel.is_relative())
        .then(|| from.ancestors().nth(rel.components().count()))
        .flatten()
        .filter(|ws| ws.join(rel) == from)
    else {
        if dir.as_os_str().is_empty() {
            return Err(std::io::Error::other("no quarantine folder"));
        }
        crate::private::create_dir(dir)?;
        let to = dir.join(&flat);
        std::fs::rename(from, &to)?;
        return Ok(to);
    };
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(std::io::Error::other("nothing to move"));
    };
    let held =
        super::bwrap::open_without_links(workspace, &workspace.join(parent)).map_err(|_| {
            std::io::Error::other(format!(
                "`{}` is not a plain folder of the workspace (a link, or gone), and cairn moves \
             nothing through a link",
                parent.display()
            ))
        })?;
    if super::bwrap::file_type(&held) != Some(libc::S_IFDIR) {
        return Err(std::io::Error::other(format!(
            "{} is no longer a folder",
            parent.display()
        )));
    }
    let cstr = |s: &std::ffi::OsStr| {
        std::ffi::CString::new(s.as_bytes()).map_err(|_| std::io::Error::other("a NUL byte"))
    };
    let name_c = cstr(name)?;
    let flat_c = cstr(std::ffi::OsStr::new(&flat))?;
    let rename = |to_dir: &OwnedFd| -> std::io::Result<()> {
        // SAFETY: valid descriptors and C strings; the result is checked.
        let r = unsafe {
            libc::renameat(
                held.as_raw_fd(),
                name_c.as_ptr(),
                to_dir.as_raw_fd(),
                flat_c.as_ptr(),
            )
        };
        match r {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    };
    if !dir.as_os_str().is_empty() {
        crate::private::create_dir(dir)?;
        let target = open_dir(dir)?;
        match rename(&target) {
            Ok(()) => return Ok(dir.join(&flat)),
            Err(e) if e.raw_os_error() != Some(libc::EXDEV) => return Err(e),
            Err(_) => {}
        }
    }
    // Another file system: a folder of the workspace's own, made without
    // following a link.
    let root = super::bwrap::open_without_links(workspace, workspace)?;
    let beside = format!(".cairn-quarantine/{}", stamp());
    let mut at = root;
    for part in Path::new(&beside).components() {
        let c = cstr(part.as_os_str())?;
        // SAFETY: a valid descriptor and C string; an existing one is fine.
        unsafe { libc::mkdirat(at.as_raw_fd(), c.as_ptr(), 0o700) };
        at = open_at_dir(&at, &c)?;
    }
    rename(&at)?;
    Ok(workspace.join(&beside).join(&flat))
}

/// A folder of cairn's own opened to move into.
fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)?;
    Ok(OwnedFd::from(f))
}

/// `name` in `at`, a folder, opened without following a link.
fn open_at_dir(at: &OwnedFd, name: &std::ffi::CStr) -> std::io::Result<OwnedFd> {
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid descriptor and C string; the result is checked.
    let fd = unsafe { libc::openat(at.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

mod parts;
use parts::{Parts, parts_of};

#[cfg(test)]
mod tests;
