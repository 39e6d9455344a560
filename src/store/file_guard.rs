//! The database file under an open store can be deleted or replaced by
//! someone else (a clean-up script, a sync tool, a person). SQLite would go
//! on writing to the unlinked file and lose everything at exit; instead the
//! writer checks the file's identity before it writes and, when the file is
//! gone or another, writes the whole database as this connection still sees
//! it back to its path (a replacement is kept beside it, never overwritten).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{Store, StoreError, schema};

/// The device and inode of `path`, when it exists.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// What became of the file a store opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// Still there (or the store is in memory).
    Same,
    /// Deleted.
    Missing,
    /// Another file stands at the path.
    Replaced,
}

impl Store {
    /// Whether the database file is still the one this store opened.
    pub fn file_state(&self) -> FileState {
        let (Some(path), Some(opened)) = (&self.path, self.identity) else {
            return FileState::Same;
        };
        match identity(path) {
            Some(now) if now == opened => FileState::Same,
            Some(_) => FileState::Replaced,
            None => FileState::Missing,
        }
    }

    /// Writes the database this store has open back to its path, after the
    /// file there was deleted or replaced, and goes on in the new file. A
    /// replacement is first moved to `<path>.replaced-<time>`; its path is
    /// returned.
    pub fn restore_file(&mut self) -> Result<Option<PathBuf>, StoreError> {
        let Some(path) = self.path.clone() else {
            return Ok(None);
        };
        // Everything in the write-ahead log goes into the (unlinked) file
        // first, so the copy is whole and no stale log is left for the
        // new file.
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        let mut fresh = path.clone().into_os_string();
        fresh.push(".restoring");
        let fresh = PathBuf::from(fresh);
        let _ = std::fs::remove_file(&fresh);
        self.conn
            .execute("VACUUM INTO ?1", [fresh.to_string_lossy().as_ref()])?;
        crate::private::restrict(&fresh, crate::private::FILE_MODE)
            .map_err(|e| io_error(&fresh, e))?;
        let kept = if identity(&path).is_some() {
            let mut aside = path.clone().into_os_string();
            aside.push(format!(".replaced-{}", super::now_ms()));
            let aside = PathBuf::from(aside);
            std::fs::rename(&path, &aside).map_err(|e| io_error(&path, e))?;
            Some(aside)
        } else {
            None
        };
        // The old connection closes before the new file takes the path:
        // closing it removes its own log files there.
        self.conn = schema::open_memory()?;
        for suffix in ["-wal", "-shm"] {
            let mut side = path.clone().into_os_string();
            side.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(side));
        }
        std::fs::rename(&fresh, &path).map_err(|e| io_error(&path, e))?;
        self.conn = schema::open_file(&path)?;
        self.identity = identity(&path);
        Ok(kept)
    }
}

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Restore {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;
    use crate::store::MessageMeta;

    fn store_with_a_session(path: &Path) -> (Store, crate::store::SessionId) {
        let mut store = Store::open(path).expect("open");
        let id = crate::store::tests::new_session(&mut store, "/w");
        store
            .append_message(
                &id,
                &Message::user_text("kept words"),
                &MessageMeta::default(),
            )
            .expect("message");
        (store, id)
    }

    #[test]
    fn a_deleted_file_is_written_back_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sessions.db");
        let (mut store, id) = store_with_a_session(&path);
        assert_eq!(store.file_state(), FileState::Same);
        std::fs::remove_file(&path).expect("rm");
        assert_eq!(store.file_state(), FileState::Missing);
        assert_eq!(store.restore_file().expect("restore"), None);
        assert_eq!(store.file_state(), FileState::Same);
        store
            .append_message(&id, &Message::user_text("after"), &MessageMeta::default())
            .expect("write after");
        drop(store);
        let again = Store::open(&path).expect("reopen");
        let texts: Vec<String> = again
            .load_messages(&id)
            .expect("load")
            .iter()
            .map(|(_, m, _)| m.text())
            .collect();
        assert_eq!(texts, ["kept words", "after"]);
    }

    #[test]
    fn a_replacement_is_kept_aside() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sessions.db");
        let (mut store, id) = store_with_a_session(&path);
        std::fs::remove_file(&path).expect("rm");
        std::fs::write(&path, b"someone else's file").expect("write");
        assert_eq!(store.file_state(), FileState::Replaced);
        let kept = store.restore_file().expect("restore").expect("kept aside");
        assert_eq!(std::fs::read(&kept).expect("read"), b"someone else's file");
        assert_eq!(store.load_messages(&id).expect("load").len(), 1);
    }
}
