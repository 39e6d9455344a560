//! Writing a file so that a crash or a failed rename never leaves it half
//! written: the bytes go to a temporary file beside it, are flushed to disk,
//! and only then replace the original in one rename.

use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::path::Path;

use tempfile::NamedTempFile;

/// Replaces (or creates) `path` with `bytes`. An existing file keeps its
/// permission bits; a new one gets what the umask allows (0644 under 022),
/// as any editor would give it. On any error the original is untouched and
/// the temporary file is removed (dropping a `NamedTempFile` deletes it).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // Renaming over a symlink would replace the link with a plain file;
    // write the file it points to instead — when it stays in the workspace
    // (`beneath::real_path` refuses a link out of it).
    let asked = path;
    let target;
    let path = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            target = super::beneath::real_path(path)?;
            target.as_path()
        }
        _ => path,
    };
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(d), Some(n)) if !d.as_os_str().is_empty() => (d, n),
        (_, Some(n)) => (Path::new("."), n),
        _ => return Err(io::Error::other("not a file path")),
    };
    // The directory is pinned by a descriptor opened beneath the
    // workspace, and the rename into it replaces whatever entry is there
    // by then (a link swapped in is replaced, not followed).
    let (pin, pinned) = super::beneath::pinned_dir(dir)?;
    if cfg!(target_os = "linux") {
        // Where it lands now, links in the directories resolved: a
        // control file reached by another name is refused.
        super::beneath::check_control(asked, &super::beneath::landing(&pin, name)?)?;
    }
    let path_in_pin = pinned.join(name);
    let perms: Option<Permissions> = fs::symlink_metadata(&path_in_pin)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions());
    // Created 0666 less the umask; an existing file's bits replace that below.
    super::tempfiles::note_dir(dir);
    let mut tmp = tempfile::Builder::new()
        .prefix(&super::tempfiles::atomic_prefix())
        .permissions(new_file_permissions())
        .tempfile_in(&pinned)?;
    tmp.write_all(bytes)?;
    tmp.flush()?;
    if let Some(p) = perms {
        tmp.as_file().set_permissions(p)?;
    }
    tmp.as_file().sync_all()?;
    persist(tmp, &path_in_pin)
}

fn new_file_permissions() -> Permissions {
    use std::os::unix::fs::PermissionsExt;
    Permissions::from_mode(0o666)
}

fn persist(tmp: NamedTempFile, path: &Path) -> io::Result<()> {
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_content_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, Permissions::from_mode(0o751)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    #[test]
    fn a_new_file_follows_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.txt");
        // SAFETY: umask only swaps the process's mask; restored below.
        let old = unsafe { libc::umask(0o022) };
        let written = write_atomic(&p, b"x");
        unsafe { libc::umask(old) };
        written.unwrap();
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }

    #[test]
    fn writes_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn failed_rename_leaves_original_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory cannot be replaced by a file rename.
        let target = dir.path().join("target");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside.txt"), "keep me").unwrap();
        let err = write_atomic(&target, b"new");
        assert!(err.is_err());
        assert_eq!(
            fs::read_to_string(target.join("inside.txt")).unwrap(),
            "keep me"
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("target")]);
    }
}
