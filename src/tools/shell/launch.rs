//! The launcher behind an editor's terminal: `cairn __contained SPEC`.
//!
//! An editor's `terminal/create` starts a process itself, in its own
//! process tree and with its own environment, so cairn cannot hand it the
//! confinement it sets up for its own children (descriptors, filters). It
//! asks the editor to start cairn's own executable instead, with the hidden
//! subcommand and the path of a spec file: the call's policy (the gate's
//! grant for this call included), the shell, the script, the directory and
//! the scrubbed environment, all as cairn worked them out in-process. The
//! launcher builds the command with the same function the in-process path
//! uses (`jobs::shell_command`), so the same bubblewrap binds, Landlock
//! rules and seccomp filters apply; it replaces the editor's environment by
//! the spec's.
//!
//! The spec is written in cairn's own cache folder (which commands can
//! neither read nor write), mode 0600, under a fresh name; the launcher
//! reads it only from there, without following a link, when it is the
//! person's and private. Neither the model nor the workspace chooses the
//! program, its arguments or the spec. Just before the start the launcher
//! leaves a `.started` file beside the spec (then the process group in
//! it): without it cairn knows nothing ran and runs the command itself;
//! with it the command is never run twice.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sandbox::Policy;

/// The hidden subcommand the editor is asked to start.
pub const SUBCOMMAND: &str = "__contained";

/// What the launcher runs, exactly as the in-process path would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    pub program: PathBuf,
    pub script: String,
    pub cwd: PathBuf,
    pub policy: Option<Policy>,
    /// The whole environment the command gets (already scrubbed).
    pub env: Vec<(OsString, OsString)>,
}

pub use crate::sandbox::own_path::own_exe;

/// Where specs are written: `<cache>/cairn/launch`.
pub fn spec_dir() -> Option<PathBuf> {
    let cache = directories::ProjectDirs::from("", "", "cairn")?;
    Some(cache.cache_dir().join("launch"))
}

/// A written spec; dropping it removes the spec and its `.started` mark.
pub struct Written {
    pub path: PathBuf,
}

impl Written {
    fn started_path(&self) -> PathBuf {
        started_path(&self.path)
    }

    /// Whether the launcher got as far as starting the command (it may
    /// have run, even if its start then failed).
    pub fn began(&self) -> bool {
        std::fs::symlink_metadata(self.started_path()).is_ok()
    }

    /// The process group the launcher started, once it did.
    pub fn group(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.started_path()).ok()?;
        text.trim().parse().ok().filter(|g: &i32| *g > 1)
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(self.started_path());
    }
}

fn started_path(spec: &Path) -> PathBuf {
    let mut name = spec.as_os_str().to_os_string();
    name.push(".started");
    PathBuf::from(name)
}

/// Writes `spec` under a fresh name in `dir` (made private if new).
pub fn write_in(dir: &Path, spec: &Spec) -> std::io::Result<Written> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let json = serde_json::to_vec(spec).map_err(std::io::Error::other)?;
    // `tempfile` creates the file new (O_EXCL) and 0600.
    let mut file = tempfile::Builder::new().prefix("spec-").tempfile_in(dir)?;
    file.write_all(&json)?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(Written { path })
}

/// Reads the spec at `path`: only inside `dir`, never through a link, and
/// only a regular file of this user that nobody else may read or write.
pub fn read_in(dir: &Path, path: &Path) -> Result<Spec, String> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let parent = path.parent().unwrap_or(Path::new(""));
    if parent != dir {
        return Err(format!(
            "{} is not in cairn's launch folder {}",
            path.display(),
            dir.display()
        ));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a private file of this user",
            path.display()
        ));
    }
    let mut text = Vec::new();
    file.take(64 << 20)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&text).map_err(|e| format!("{} is not a spec: {e}", path.display()))
}

/// Records, just before the start, that the command may run from now on;
/// [`record_group`] adds its process group once it runs.
pub fn begin(spec: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(started_path(spec))
}

pub fn record_group(mark: &mut std::fs::File, pgid: i32) -> std::io::Result<()> {
    mark.write_all(pgid.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            program: "/bin/sh".into(),
            script: "echo hi".into(),
            cwd: "/".into(),
            policy: None,
            env: vec![("A".into(), "b".into())],
        }
    }

    #[test]
    fn a_written_spec_reads_back_and_is_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let launch = dir.path().join("launch");
        let written = write_in(&launch, &spec()).unwrap();
        assert_eq!(read_in(&launch, &written.path).unwrap(), spec());
        assert!(!written.began());
        let mut mark = begin(&written.path).unwrap();
        assert!(written.began());
        assert_eq!(written.group(), None);
        record_group(&mut mark, 4242).unwrap();
        assert_eq!(written.group(), Some(4242));
        // Only once.
        assert!(begin(&written.path).is_err());
        let path = written.path.clone();
        drop(written);
        assert!(!path.exists());
    }

    #[test]
    fn a_spec_elsewhere_shared_or_linked_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let launch = dir.path().join("launch");
        let written = write_in(&launch, &spec()).unwrap();
        // Outside the launch folder.
        let other = dir.path().join("spec-x");
        std::fs::copy(&written.path, &other).unwrap();
        assert!(read_in(&launch, &other).is_err());
        // Readable by others.
        let open = launch.join("spec-open");
        std::fs::copy(&written.path, &open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_in(&launch, &open).unwrap_err();
        assert!(err.contains("private"), "{err}");
        // A link, even to a good spec.
        let link = launch.join("spec-link");
        std::os::unix::fs::symlink(&written.path, &link).unwrap();
        assert!(read_in(&launch, &link).is_err());
    }
}
