//! cairn's own files hold conversations, commands and prompts: they are
//! created readable by their owner only (files 0600, directories 0700),
//! whatever the umask, and files from older versions are tightened when
//! opened.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

pub const FILE_MODE: u32 = 0o600;
pub const DIR_MODE: u32 = 0o700;

/// Creates `dir` and any missing parents; the directories created, and
/// `dir` itself, are 0700.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    restrict(dir, DIR_MODE)
}

/// Sets `path`'s permission bits to `mode` unless they are already no
/// wider; a missing file is fine.
pub fn restrict(path: &Path, mode: u32) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.permissions().mode() & 0o777 & !mode != 0 => {
            std::fs::set_permissions(path, Permissions::from_mode(mode))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Opens `path` for appending, creating it 0600 (its directory 0700).
pub fn open_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    restrict(path, FILE_MODE)?;
    Ok(f)
}

/// Creates the file if missing, 0600, without touching its content.
pub fn touch(path: &Path) -> io::Result<()> {
    open_append(path).map(drop)
}

/// Writes `bytes` to `path` (replacing it), the file 0600.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(FILE_MODE)
        .open(path)?;
    restrict(path, FILE_MODE)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Replaces `path` with a new 0600 file holding `bytes`, for secrets (keys,
/// tokens): written beside it and renamed over it, so a link at `path`
/// (symbolic or hard) is replaced, never written through, and a crash
/// leaves the old file or the new one whole.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    match std::fs::remove_file(&partial) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(FILE_MODE)
        .open(&partial)?;
    f.set_permissions(Permissions::from_mode(FILE_MODE))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&partial, path)
}

/// A file-size limit (`ulimit -f`) would kill cairn with SIGXFSZ in the
/// middle of saving the session; with this handler the write fails with
/// EFBIG instead, which the store reports like any refused write. A
/// handler, unlike ignoring the signal, is not inherited by the programs
/// cairn runs: they keep the usual behaviour.
pub fn survive_file_size_limit() {
    extern "C" fn note(_: libc::c_int) {}
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let action = SigAction::new(
        SigHandler::Handler(note),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler does nothing, so it is async-signal-safe.
    if let Err(e) = unsafe { sigaction(Signal::SIGXFSZ, &action) } {
        tracing::warn!("cannot handle SIGXFSZ: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_files_and_dirs_are_private_and_old_ones_tightened() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        let f = dir.join("log");
        touch(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
        let old = dir.join("old");
        std::fs::write(&old, "x").unwrap();
        std::fs::set_permissions(&old, Permissions::from_mode(0o644)).unwrap();
        write(&old, b"y").unwrap();
        assert_eq!(mode(&old), 0o600);
        assert_eq!(std::fs::read(&old).unwrap(), b"y");
    }
}
