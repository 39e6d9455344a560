//! Holds seen by every cairn, not only this one. A server outside the
//! sandbox that another cairn runs from a workspace must be gone before a
//! call here writes that workspace, as one of this process's own must
//! ([`super::outside_gone`]).
//!
//! Each hold is a file in `holds/` beside the marks, named by process,
//! time and number, listing the folders the server loads from (its workspace and
//! the folders that reaches through links), and locked (exclusively) by
//! the process that runs the server for as long as it may run. A writing
//! call waits until every such lock of another process whose folders
//! overlap its workspace is free. The process that holds one watches the
//! marks folder (inotify): a writing call's fresh mark wakes it, it finds
//! that its server's workspace changed elsewhere, kills the server and
//! everything it started, and lets the lock go.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// A hold's file, locked while it exists; removed when dropped.
pub(super) struct SharedHold {
    path: PathBuf,
    _file: File,
}

impl Drop for SharedHold {
    fn drop(&mut self) {
        // Removed before the lock goes (when the file closes), so no other
        // process takes an unlocked file for a live hold.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Makes the hold `id` of this process for a server loading from `roots`:
/// written under a temporary name, locked, then moved into place, so no
/// process ever sees it unlocked. `None` when it cannot be made (the
/// holds of this process still apply here; another cairn then learns of
/// the change only at the server's next call, as before).
pub(super) fn make(id: u64, roots: &[PathBuf]) -> Option<SharedHold> {
    // Unit tests run in the person's own home: they leave its data folder
    // alone (the front-door tests, each with a home of its own, cover this).
    if cfg!(test) {
        return None;
    }
    let dir = dir()?;
    crate::private::create_dir(&dir).ok()?;
    watch_marks();
    // The time too: a process id is reused, and a file a killed cairn
    // left must never share a name with a live hold.
    let name = format!("{}-{}-{id}", std::process::id(), super::now_nanos());
    let path = dir.join(&name);
    let partial = dir.join(format!("{name}.partial"));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&partial)
        .inspect_err(|e| tracing::warn!("cannot make {}: {e}", partial.display()))
        .ok()?;
    // SAFETY: flock on a descriptor kept open in the returned hold.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        let _ = std::fs::remove_file(&partial);
        return None;
    }
    let text: String = roots.iter().map(|r| format!("{}\n", r.display())).collect();
    if file.write_all(text.as_bytes()).is_err() || std::fs::rename(&partial, &path).is_err() {
        let _ = std::fs::remove_file(&partial);
        return None;
    }
    Some(SharedHold { path, _file: file })
}

/// Whether another process holds a server that loads from a folder
/// overlapping `root`. A hold file no one has locked is left over from a
/// process that is gone: it is removed.
pub(super) fn elsewhere(root: &Path) -> bool {
    let Some(dir) = dir() else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return false;
    };
    let mine = format!("{}-", std::process::id());
    let mut waiting = false;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.contains('.') || name.starts_with(&mine) {
            continue;
        }
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        let Ok(text) = std::io::read_to_string(&file) else {
            continue;
        };
        if !text.lines().any(|r| super::overlaps(Path::new(r), root)) {
            continue;
        }
        // SAFETY: flock on a descriptor this function owns; released when
        // `file` closes.
        let free = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0;
        if free {
            let _ = std::fs::remove_file(entry.path());
        } else {
            waiting = true;
        }
    }
    waiting
}

fn dir() -> Option<PathBuf> {
    super::folder().map(|d| d.join("holds"))
}

/// Ticks this process's watchers whenever the marks folder changes, from
/// the first hold on: another cairn's writing call marks there before it
/// runs, and this process's servers outside the sandbox are stopped on
/// that tick when their workspace changed.
fn watch_marks() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        #[cfg(target_os = "linux")]
        {
            use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
            let Some(folder) = super::folder() else {
                return;
            };
            let watched = Inotify::init(InitFlags::IN_CLOEXEC).and_then(|ino| {
                let mask = AddWatchFlags::IN_MOVED_TO
                    | AddWatchFlags::IN_CLOSE_WRITE
                    | AddWatchFlags::IN_CREATE;
                ino.add_watch(&folder, mask).map(|_| ino)
            });
            let ino = match watched {
                Ok(ino) => ino,
                Err(e) => {
                    tracing::warn!("cannot watch {}: {e}", folder.display());
                    return;
                }
            };
            let spawned = std::thread::Builder::new()
                .name("cairn-marks".into())
                .spawn(move || {
                    while ino.read_events().is_ok() {
                        super::ticks().send_modify(|n| *n += 1);
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("cannot watch {}: {e}", folder.display());
            }
        }
    });
}
