//! Reading a file a repository supplies (its `.cairn/config.toml`, its
//! AGENTS.md) without letting the repository choose what cairn really reads.
//!
//! A repository can ship a symbolic link: `AGENTS.md -> /proc/self/environ`
//! would put cairn's own environment, keys included, into the prompt, and a
//! config file linked there would print it in the parse error. So a project
//! file is read only when, after every link, it is a regular file inside the
//! project and outside `/proc`, `/sys` and `/dev`; and never more than a cap,
//! so a link to `/dev/zero` or a huge file cannot exhaust memory.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Pseudo-file systems whose "files" are the machine's or a process's state.
const SYSTEM_TREES: [&str; 3] = ["/proc", "/sys", "/dev"];

#[derive(Debug, thiserror::Error)]
pub enum ProjectFileError {
    #[error(
        "{path} leads outside the project (to {target}); cairn does not read it. Replace the link with a copy of the file"
    )]
    Outside { path: PathBuf, target: PathBuf },
    #[error("{path} is not a regular file; cairn does not read it")]
    NotAFile { path: PathBuf },
    #[error("{path} is larger than {max} bytes; cairn does not read it")]
    TooLarge { path: PathBuf, max: u64 },
    #[error("could not read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was read of a project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// At most the cap's worth.
    pub bytes: Vec<u8>,
    /// The file's whole length (more than `bytes` when it was cut).
    pub len: u64,
}

/// How to treat a file longer than the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// Refuse it (a config file is all or nothing).
    Refuse,
    /// Read the first `max` bytes (instructions are cut to a budget anyway).
    Cut,
}

/// Reads `path`, which should lie in the project at `root`: `Ok(None)` when
/// it does not exist. With `root` absent (the person's own directory) the
/// file may lead anywhere except the system trees.
pub fn read(
    root: Option<&Path>,
    path: &Path,
    max: u64,
    over: Over,
) -> Result<Option<Contents>, ProjectFileError> {
    let io = |source: std::io::Error| ProjectFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let real = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let inside = match root {
        Some(root) => std::fs::canonicalize(root).is_ok_and(|r| real.starts_with(r)),
        None => true,
    };
    if !inside || SYSTEM_TREES.iter().any(|t| real.starts_with(t)) {
        return Err(ProjectFileError::Outside {
            path: path.to_path_buf(),
            target: real,
        });
    }
    let file = open_no_follow(&real).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ProjectFileError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > max && over == Over::Refuse {
        return Err(ProjectFileError::TooLarge {
            path: path.to_path_buf(),
            max,
        });
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).map_err(io)?;
    Ok(Some(Contents {
        len: meta.len().max(bytes.len() as u64),
        bytes,
    }))
}

/// Writes a file cairn creates in the project (an export) without following
/// a symbolic link the repository put at that name: its name may be
/// guessable, and a link would aim the write at any file of the person's.
/// The file is private (0600), like the database it comes from.
pub fn write_no_follow(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)?;
    // An existing file is made private too: an export is a conversation.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    (&file).write_all(bytes)
}

/// Opens the resolved path without following a link put there since.
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_file_inside_is_read_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "hello").unwrap();
        let got = read(
            Some(dir.path()),
            &dir.path().join("a.md"),
            100,
            Over::Refuse,
        )
        .unwrap()
        .unwrap();
        assert_eq!(got.bytes, b"hello");
        let missing = read(
            Some(dir.path()),
            &dir.path().join("b.md"),
            100,
            Over::Refuse,
        );
        assert!(missing.unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_project_or_into_proc_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("secret"), "key").unwrap();
        std::fs::write(dir.path().join("real.md"), "fine").unwrap();
        let link = |name: &str, to: &Path| {
            std::os::unix::fs::symlink(to, dir.path().join(name)).unwrap();
            dir.path().join(name)
        };
        let out = link("out.md", &other.path().join("secret"));
        let env = link("env.md", Path::new("/proc/self/environ"));
        let inside = link("in.md", Path::new("real.md"));
        for path in [&out, &env] {
            let err = read(Some(dir.path()), path, 100, Over::Cut).unwrap_err();
            assert!(
                matches!(err, ProjectFileError::Outside { .. }),
                "{path:?}: {err}"
            );
        }
        // The person's own directory may link elsewhere, but not into /proc.
        assert!(read(None, &out, 100, Over::Cut).unwrap().is_some());
        assert!(read(None, &env, 100, Over::Cut).is_err());
        let got = read(Some(dir.path()), &inside, 100, Over::Cut).unwrap();
        assert_eq!(got.unwrap().bytes, b"fine");
    }

    #[test]
    fn a_large_file_is_refused_or_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, "x".repeat(50)).unwrap();
        let err = read(Some(dir.path()), &path, 10, Over::Refuse).unwrap_err();
        assert!(matches!(err, ProjectFileError::TooLarge { .. }), "{err}");
        let cut = read(Some(dir.path()), &path, 10, Over::Cut)
            .unwrap()
            .unwrap();
        assert_eq!((cut.bytes.len(), cut.len), (10, 50));
    }

    #[cfg(unix)]
    #[test]
    fn a_write_does_not_follow_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "the person's file").unwrap();
        let planted = dir.path().join("cairn-session-0190aaaa.md");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(write_no_follow(&planted, b"export").is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"the person's file");
        let fresh = dir.path().join("cairn-session-0190bbbb.md");
        write_no_follow(&fresh, b"export").unwrap();
        write_no_follow(&fresh, b"again").unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"again");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read(Some(dir.path()), &path, 10, Over::Cut).unwrap_err();
        assert!(matches!(err, ProjectFileError::NotAFile { .. }), "{err}");
    }
}
