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
//! into cairn's quarantine folder (nothing is lost) and reported. Other
//! `.git` entries deeper in the workspace are repositories the person only
//! obeys by going into them (docs/security.md).

use std::collections::BTreeMap;
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
    ".git/commondir",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info",
    ".git/worktrees",
    ".cairn/commands",
    ".cairn/skills",
    ".cairn/agents",
];

use super::census_record::Ident;

/// Whether commands cannot change `rel` while it exists: bubblewrap binds
/// it read-only (`policy::READ_ONLY_IN_WORKSPACE`, `AGENT_CONTROL`). Under
/// Landlock alone a subfolder of the writable workspace cannot be made
/// read-only, so there every change counts.
fn held_read_only(rel: &Path) -> bool {
    use super::policy::{AGENT_CONTROL, Layer, READ_ONLY_IN_WORKSPACE};
    super::layer() == Some(Layer::Namespace)
        && (AGENT_CONTROL.iter().any(|c| rel == Path::new(c))
            || READ_ONLY_IN_WORKSPACE.iter().any(|c| rel.starts_with(c)))
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
            ..Census::default()
        };
        c.refresh_gitlinks();
        c.seen = c.current();
        c
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
        let included = super::gitstate::included_configs(&self.workspace);
        // A submodule's own commondir or worktree config redirects the
        // person's git as the top-level one does.
        let submodules = super::policy::submodule_dirs(&self.workspace)
            .into_iter()
            .filter_map(|d| d.strip_prefix(&self.workspace).ok().map(Path::to_path_buf))
            .flat_map(|d| [d.join("commondir"), d.join("config.worktree")]);
        for rel in watched.chain(links).chain(submodules).chain(included) {
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
        let mut said = Vec::new();
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
        let now = self.current();
        for path in accepted {
            let Ok(rel) = path.strip_prefix(&self.workspace) else {
                continue;
            };
            for (watched, id) in &now {
                if rel.starts_with(watched) {
                    self.seen.insert(watched.clone(), id.clone());
                }
            }
        }
        for (rel, id) in &now {
            let before = self.seen.get(rel);
            if before == Some(id) || (before.is_some() && held_read_only(rel)) {
                continue;
            }
            let from = self.workspace.join(rel);
            match move_out(&from, rel, quarantine) {
                Ok(to) => said.push(format!(
                    "`{}` appeared or changed during the command; your own git (or cairn, or \
                     another agent) would obey it outside the sandbox, so cairn moved it to {}",
                    rel.display(),
                    to.display()
                )),
                Err(e) => said.push(format!(
                    "`{}` appeared or changed during the command and your own git (or cairn, \
                     or another agent) would obey it; cairn could not move it away ({e}): \
                     remove it before you run git or an agent here",
                    rel.display()
                )),
            }
        }
        if let Some(git) = self.git_dir() {
            let mut away = |path: &Path| {
                let rel = path.strip_prefix(&self.workspace).unwrap_or(path);
                move_out(path, rel, quarantine)
            };
            said.extend(super::gitstate::disarm(&git, accepted, &mut away));
        }
        // Read again only when something was moved; written only when
        // something changed.
        let seen = if said.is_empty() { now } else { self.current() };
        if seen != self.seen {
            self.seen = seen;
            self.save(None, &[]);
        }
        said
    }

    /// What is there now, compared with what the last session in this
    /// workspace knew (kept in `record`): a difference made while one of
    /// cairn's jobs could still write is moved into `quarantine`
    /// (`census_record`). Returns what it moved, and what the last
    /// session's final check moved.
    pub fn resume(workspace: &Path, record: &Path, quarantine: &Path) -> (Census, Vec<String>) {
        use super::census_record as r;
        let mut c = Census::take(workspace);
        c.record = Some(record.to_path_buf());
        c.owner = r::fnv(&r::now().to_le_bytes()) ^ u64::from(std::process::id());
        let mut said = Vec::new();
        if let Some(last) = r::load(record) {
            said.extend(last.unreported.iter().cloned());
            let known: BTreeMap<PathBuf, Ident> = last.seen.iter().cloned().collect();
            for (rel, id) in &c.seen {
                let path = workspace.join(rel);
                if known.get(rel) == Some(id)
                    || !r::made_while_unwatched(&last, r::changed_at(&path))
                {
                    continue;
                }
                said.push(match move_out(&path, rel, quarantine) {
                    Ok(to) => format!(
                        "`{}` appeared or changed after cairn's last check in this workspace, \
                         while a command of its last session may still have been running \
                         (that session did not end cleanly); your own git (or another agent) \
                         would obey it, so cairn moved it to {} — if you made it yourself, \
                         move it back",
                        rel.display(),
                        to.display()
                    ),
                    Err(e) => format!(
                        "`{}` appeared or changed after cairn's last check, while a command of \
                         its last session may still have been running, and cairn could not \
                         move it ({e}): check it before you run git or an agent here",
                        rel.display()
                    ),
                });
            }
            c.seen = c.current();
        }
        c.save(None, &[]);
        (c, said)
    }

    /// The session's end, after its jobs were killed: one last check, and
    /// the record marked as ended cleanly, with what this check moved for
    /// the next session to say.
    pub fn finish(&mut self, quarantine: &Path) {
        let said = self.check(quarantine, &[]);
        self.save(Some(super::census_record::now()), &said);
    }

    /// Keeps the census for the next session, unless a newer session took
    /// the record over.
    fn save(&self, ended: Option<i128>, unreported: &[String]) {
        use super::census_record as r;
        let Some(file) = &self.record else {
            return;
        };
        if let Some(last) = r::load(file)
            && last.owner != self.owner
            && last.ended.is_none()
            && ended.is_some()
        {
            return;
        }
        let record = r::Record {
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

/// Where the census of `workspace` is kept under cairn's state folder.
pub fn record_file(state: &Path, workspace: &Path) -> PathBuf {
    super::census_record::file_for(state, workspace)
}

fn ident(path: &Path) -> Option<Ident> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    // Kept on disk between sessions: a hash that never changes.
    let hash = super::census_record::fnv;
    Some(if meta.is_file() {
        Ident::File(hash(&head(path)) ^ meta.len())
    } else if meta.is_dir() {
        // A git folder: what redirects or runs — its config, commondir,
        // worktree config and each hook, by name and content.
        let mut inside = head(&path.join("config"));
        inside.extend(head(&path.join("commondir")));
        inside.extend(head(&path.join("config.worktree")));
        if let Ok(hooks) = std::fs::read_dir(path.join("hooks")) {
            let mut names: Vec<_> = hooks.flatten().map(|e| e.file_name()).collect();
            names.sort();
            for n in names {
                inside.extend_from_slice(n.as_encoded_bytes());
                inside.extend(head(&path.join("hooks").join(&n)));
            }
        }
        Ident::Dir(meta.ino(), hash(&inside))
    } else {
        Ident::Other(meta.ino())
    })
}

/// Moves `from` into a new folder under `quarantine`; where that is on
/// another file system, renames it beside itself to a name git ignores.
fn move_out(from: &Path, rel: &Path, quarantine: &Path) -> std::io::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let flat = rel.to_string_lossy().replace('/', "%");
    let dir = quarantine.join(format!("{stamp}"));
    let to = dir.join(&flat);
    let moved = std::fs::create_dir_all(&dir).and_then(|_| std::fs::rename(from, &to));
    match moved {
        Ok(()) => Ok(to),
        Err(_) => {
            let name = from
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let beside = from.with_file_name(format!("{name}.quarantined-by-cairn-{stamp}"));
            std::fs::rename(from, &beside)?;
            Ok(beside)
        }
    }
}

#[cfg(test)]
#[path = "census_tests.rs"]
mod tests;
