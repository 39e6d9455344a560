//! Writers still at work. A call or a command marks its workspace when it
//! starts and again when it ends; while it runs, this process holds a
//! shared lock on a file beside the workspace's token. Another process
//! that finds the lock held counts the workspace as changing now: its
//! token is new at every look, so no trust answer given meanwhile covers
//! what the writer does next.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::sync::lock;

/// A writer at work in a workspace (see [`writing`]).
pub struct Writing {
    key: PathBuf,
}

/// Marks `root` as changed by `cause` and holds it as being written until
/// the returned guard is dropped (when the call or command is over). The
/// token is renewed when the first writer of this process starts and when
/// the last one ends; while any runs, the lock says so to every other
/// process. Without a lock, every start and end renews it.
pub fn writing(root: &Path, cause: &str) -> Writing {
    let key = super::key(root);
    super::note(&key, cause);
    let mut held = lock(held());
    let entry = held.entry(key.clone()).or_insert((0, None));
    if entry.0 == 0 || entry.1.is_none() {
        super::renew(&key);
        if entry.1.is_none() {
            entry.1 = hold_file(&key);
        }
    }
    entry.0 += 1;
    Writing { key }
}

impl Drop for Writing {
    fn drop(&mut self) {
        let mut held = lock(held());
        let Some(entry) = held.get_mut(&self.key) else {
            return;
        };
        entry.0 = entry.0.saturating_sub(1);
        let last = entry.0 == 0;
        // Renewed before the lock goes: no moment shows the workspace
        // neither changing nor changed.
        if last || entry.1.is_none() {
            super::renew(&self.key);
        }
        if last {
            held.remove(&self.key);
        }
    }
}

/// Whether a process other than this one is writing the workspace whose
/// token lies at `token_file`.
pub(super) fn elsewhere(token_file: &Path, workspace: &Path) -> bool {
    if lock(held()).contains_key(workspace) {
        return false;
    }
    let Ok(file) = File::open(live_file(token_file)) else {
        return false;
    };
    // SAFETY: flock on a descriptor this function owns; it is released
    // when the file closes at the end of the function.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    taken != 0
}

fn live_file(token_file: &Path) -> PathBuf {
    let mut name = token_file.as_os_str().to_owned();
    name.push(".live");
    PathBuf::from(name)
}

/// Opens and locks (shared) the workspace's lock file; `None` when it
/// cannot be made (the marks at start and end still hold).
fn hold_file(key: &Path) -> Option<File> {
    let path = live_file(&super::file(key)?);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .inspect_err(|e| tracing::warn!("cannot hold {}: {e}", path.display()))
        .ok()?;
    // SAFETY: flock on a descriptor kept open in `held` for as long as the
    // lock is meant to last.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH) };
    (locked == 0).then_some(file)
}

/// Per workspace: how many writers of this process are at work, and the
/// lock file they share.
type Held = BTreeMap<PathBuf, (usize, Option<File>)>;

fn held() -> &'static Mutex<Held> {
    static HELD: OnceLock<Mutex<Held>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}
