//! One session, one writer: a process recording a session holds an
//! exclusive `flock` on `locks/<session id>.lock` beside the database, with
//! its pid written inside for messages. The kernel drops the lock when the
//! process ends however it ends, so a lock left by a killed cairn is free
//! for the next one: stale locks are taken over without guessing from pids.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::SessionId;

/// Held while this process records the session; dropping it releases it.
#[derive(Debug)]
pub struct SessionLock {
    file: File,
    path: PathBuf,
}

/// Another process records the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldElsewhere {
    /// Its process id, when it wrote one.
    pub pid: Option<u32>,
}

impl std::fmt::Display for HeldElsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "it is open in another cairn (process {pid})"),
            None => write!(f, "it is open in another cairn"),
        }
    }
}

fn lock_path(db: &Path, id: &SessionId) -> PathBuf {
    let dir = db.parent().unwrap_or(Path::new("."));
    dir.join("locks").join(format!("{}.lock", id.as_str()))
}

impl SessionLock {
    /// Takes the session's lock for the database at `db`, or says who has
    /// it. Never waits.
    pub fn acquire(db: &Path, id: &SessionId) -> io::Result<Result<SessionLock, HeldElsewhere>> {
        let path = lock_path(db, id);
        if let Some(dir) = path.parent() {
            crate::private::create_dir(dir)?;
        }
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(crate::private::FILE_MODE)
                .open(&path)?;
            // SAFETY: flock on a descriptor this function owns.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let err = io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    return Ok(Err(HeldElsewhere {
                        pid: text.trim().parse().ok(),
                    }));
                }
                return Err(err);
            }
            // A releasing holder may have removed the file between our open
            // and our lock; then the lock is on a name nobody else sees.
            let same = std::fs::metadata(&path)
                .map(|m| m.ino() == file.metadata().map(|f| f.ino()).unwrap_or(0))
                .unwrap_or(false);
            if !same {
                continue;
            }
            file.set_len(0)?;
            file.rewind()?;
            write!(file, "{}", std::process::id())?;
            return Ok(Ok(SessionLock { file, path }));
        }
    }

    /// Who holds the session's lock, if anyone (a check; holds nothing).
    pub fn holder(db: &Path, id: &SessionId) -> io::Result<Option<HeldElsewhere>> {
        Ok(Self::acquire(db, id)?.err())
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        // Remove the name while still holding the lock, so nobody locks a
        // file that is about to disappear (see the inode check above).
        let _ = std::fs::remove_file(&self.path);
        // SAFETY: unlocking our own descriptor; closing would do it too.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sessions.db");
        let id = SessionId("0196-abc".into());
        let first = SessionLock::acquire(&db, &id).unwrap().unwrap();
        // flock locks belong to open file descriptions: a second open in
        // this process conflicts like another process would.
        let held = SessionLock::acquire(&db, &id).unwrap().unwrap_err();
        assert_eq!(held.pid, Some(std::process::id()));
        assert_eq!(SessionLock::holder(&db, &id).unwrap(), Some(held.clone()));
        drop(first);
        assert_eq!(SessionLock::holder(&db, &id).unwrap(), None);
        let _again = SessionLock::acquire(&db, &id).unwrap().unwrap();
    }
}
