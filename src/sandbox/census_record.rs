//! The census kept between sessions (in cairn's state folder), so that a
//! new session compares the control files against what the last one knew
//! instead of taking whatever is there as normal.
//!
//! Who changed a control file while no cairn watched? cairn's own jobs die
//! with it: a session that ended cleanly killed its jobs first and then
//! checked once more ([`super::census::Census::finish`]), so what changed
//! after that end (its change time is later) is the person's own doing and
//! is taken as it is. A session that did not end cleanly (killed, crashed,
//! or still running in another window) may have had a job writing until
//! it died; then every difference is moved to the quarantine and reported
//! — nothing is lost, and the message says how to put it back.
//!
//! Each session keeps its own record (`<workspace's hash>/<session>.json`)
//! and holds a lock beside it while it runs, so two cairns in one
//! workspace never overwrite each other's: a new session reads them all —
//! a running one, or one that died without ending cleanly, means any
//! difference may be a job's — and removes those of sessions that are
//! gone once it has taken them in.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a watched entry is. What a file or folder holds is known by
/// [`strong`], which no command can match on purpose: with a weak hash a
/// command could swap in a file of its own that hashes as the person's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ident {
    File(u128),
    /// A folder: its inode, and what its config and hooks hold.
    Dir(u64, u128),
    Other(u64),
}

/// The form of [`Record`] this build writes; a record of another form
/// (an older build's, with weaker idents) is not compared with.
const VERSION: u32 = 2;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Record {
    /// [`VERSION`] when this build wrote it (0 in older records).
    #[serde(default)]
    pub version: u32,
    /// The session that wrote it last (a random number per session).
    pub owner: u64,
    /// When that session ended cleanly (nanoseconds since the epoch).
    pub ended: Option<i128>,
    pub seen: Vec<(PathBuf, Ident)>,
    /// What its final check moved, for the next session to say.
    pub unreported: Vec<String>,
}

/// Another session's record, and whether that session still runs.
pub struct Other {
    pub file: PathBuf,
    pub record: Record,
    pub alive: bool,
}

/// The folder of the per-session records beside the (older, shared)
/// record file `legacy`.
pub fn sessions_dir(legacy: &Path) -> PathBuf {
    legacy.with_extension("")
}

/// Claims `<dir>/<owner>.json` for this session: the lock beside it is held
/// until the returned file is dropped (or the process dies).
pub fn claim(dir: &Path, owner: u64) -> Option<(PathBuf, std::fs::File)> {
    std::fs::create_dir_all(dir).ok()?;
    let file = dir.join(format!("{owner:016x}.json"));
    let lock = std::fs::File::create(file.with_extension("lock")).ok()?;
    flock(&lock).then_some((file, lock))
}

/// Takes the lock of `file` without waiting.
fn flock(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain system call on an open descriptor.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether the session whose lock is `lock` still runs: its lock is held.
fn alive(lock: &Path) -> bool {
    match std::fs::File::open(lock) {
        // Taken here means nobody holds it; dropping the file releases it.
        Ok(f) => !flock(&f),
        Err(_) => false,
    }
}

/// Every other session's record in `dir`, and the older shared record at
/// `legacy` (as a session that is gone).
pub fn others(dir: &Path, legacy: &Path, own: &Path) -> Vec<Other> {
    let mut out = Vec::new();
    if let Some(record) = load(legacy) {
        out.push(Other {
            file: legacy.to_path_buf(),
            record,
            alive: false,
        });
    }
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = e.path();
        if file == own || file.extension().is_none_or(|x| x != "json") {
            continue;
        }
        if let Some(record) = load(&file) {
            let alive = alive(&file.with_extension("lock"));
            out.push(Other {
                file,
                record,
                alive,
            });
        }
    }
    out
}

/// Removes the record of a session that is gone.
pub fn remove(other: &Other) {
    let _ = std::fs::remove_file(&other.file);
    let _ = std::fs::remove_file(other.file.with_extension("lock"));
}

/// Whether a difference found at start-up was made while a job of one of
/// the sessions in `others` could still write: one still runs or did not
/// end cleanly, or the change is not later than the last clean end.
pub fn made_while_any_unwatched(others: &[Other], changed: i128) -> bool {
    if others.iter().any(|o| o.alive) {
        return true;
    }
    others
        .iter()
        .any(|o| made_while_unwatched(&o.record, changed))
}

/// Where the record of `workspace` is kept under `state`.
pub fn file_for(state: &Path, workspace: &Path) -> PathBuf {
    let name = format!(
        "{:016x}.json",
        fnv(workspace.as_os_str().as_encoded_bytes())
    );
    state.join("census").join(name)
}

pub fn load(file: &Path) -> Option<Record> {
    let bytes = super::head::head(file);
    serde_json::from_slice::<Record>(&bytes)
        .ok()
        .filter(|r| r.version == VERSION)
}

/// Writes `record` whole (a new file renamed over the old one).
pub fn save(file: &Path, record: &Record) {
    let Some(dir) = file.parent() else {
        return;
    };
    let record = Record {
        version: VERSION,
        owner: record.owner,
        ended: record.ended,
        seen: record.seen.clone(),
        unreported: record.unreported.clone(),
    };
    let Ok(text) = serde_json::to_vec(&record) else {
        return;
    };
    let fresh = file.with_extension("json.new");
    let _ = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&fresh, text))
        .and_then(|_| std::fs::rename(&fresh, file));
}

/// The first 128 bits of SHA-256: the same across processes and releases
/// (what is kept on disk must compare equal tomorrow), and no command can
/// make two contents hash alike.
pub fn strong(bytes: &[u8]) -> u128 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    u128::from_le_bytes(first)
}

/// A quick hash that stays the same across processes and releases, for
/// names and numbers no one can profit from matching (never for what a
/// file holds: [`strong`]).
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The latest change time of `path` and, for a folder, of what its
/// identity covers (config, commondir, worktree config, hooks).
pub fn changed_at(path: &Path) -> i128 {
    use std::os::unix::fs::MetadataExt;
    let at = |p: &Path| {
        std::fs::symlink_metadata(p)
            .map(|m| i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()))
            .unwrap_or(0)
    };
    let mut latest = at(path);
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && path.file_name().is_some_and(|n| n != ".git")
    {
        for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
            latest = latest.max(at(&e.path()));
        }
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        for inside in ["config", "commondir", "config.worktree", "hooks"] {
            latest = latest.max(at(&path.join(inside)));
        }
        for e in std::fs::read_dir(path.join("hooks"))
            .into_iter()
            .flatten()
            .flatten()
        {
            latest = latest.max(at(&e.path()));
        }
    }
    latest
}

pub fn now() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// Whether a difference found at start-up was made while one of cairn's
/// jobs could still write: the last session did not end cleanly, or the
/// change is not later than its clean end.
pub fn made_while_unwatched(record: &Record, changed: i128) -> bool {
    match record.ended {
        None => true,
        Some(end) => changed <= end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fixed_and_the_record_round_trips() {
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
        // SHA-256 of nothing begins e3 b0 c4 42 98 fc 1c 14 …
        assert_eq!(strong(b"") & 0xffff_ffff, 0x42c4_b0e3);
        assert_ne!(strong(b"a"), strong(b"b"));
        let d = tempfile::tempdir().unwrap();
        let file = file_for(d.path(), Path::new("/w/app"));
        assert_ne!(file, file_for(d.path(), Path::new("/w/app2")));
        let r = Record {
            version: 0,
            owner: 7,
            ended: Some(5),
            seen: vec![(PathBuf::from(".git/hooks"), Ident::Dir(1, 2))],
            unreported: vec!["moved".into()],
        };
        save(&file, &r);
        let back = load(&file).unwrap();
        assert_eq!((back.owner, back.ended), (7, Some(5)));
        assert_eq!(back.seen, r.seen);
        assert!(made_while_unwatched(&back, 5) && !made_while_unwatched(&back, 6));
        assert!(made_while_unwatched(&Record::default(), 6));
        // An older build's record is not compared with.
        let mut old = serde_json::to_value(&r).unwrap();
        old.as_object_mut().unwrap().remove("version");
        std::fs::write(&file, old.to_string()).unwrap();
        assert!(load(&file).is_none());
    }
}
