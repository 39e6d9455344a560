//! The file tools run in cairn's own process, outside the sandbox, so a
//! path inside a workspace must not lead them out of it: not through a
//! link that was there when the gate looked (`key.txt -> ~/.ssh/id_rsa`),
//! nor through one a sandboxed background job swaps in a moment later.
//!
//! Every workspace a session works in is registered here ([`guard`]). A
//! path under one is opened relative to a descriptor of that workspace with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: the kernel resolves
//! every component, links included, and refuses in the same step any that
//! would leave the workspace, so there is no window between a check and the
//! open. Where `openat2` is missing (an older kernel, a seccomp filter,
//! another system) components are walked one by one with `O_NOFOLLOW`,
//! which refuses every link. Writes pin the parent directory the same way
//! and rename into it by descriptor, so the final rename replaces whatever
//! entry is there and follows nothing. A path outside every workspace was
//! judged (and asked about) by the gate as itself and opens normally.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Holds the file tools inside `workspace` from now on (for this process).
pub fn guard(workspace: &Path) {
    let mut roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    let canonical = std::fs::canonicalize(workspace).ok();
    for root in std::iter::once(workspace.to_path_buf()).chain(canonical) {
        if root.is_absolute() && !roots.contains(&root) {
            roots.push(root);
        }
    }
}

/// The registered workspace `path` lies in (the deepest one) and the path
/// relative to it; `..` components are kept for the kernel to judge.
fn split(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .map(|r| {
            let rel = path.strip_prefix(r).unwrap_or(Path::new("")).to_path_buf();
            (r.clone(), rel)
        })
}

fn cstr(p: &OsStr) -> io::Result<CString> {
    CString::new(p.as_bytes()).map_err(|_| io::Error::other("the path holds a NUL byte"))
}

fn raw_open(at: i32, path: &OsStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let c = cstr(path)?;
    // SAFETY: a valid C string and flags; the result is checked.
    let fd = unsafe { libc::openat(at, c.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just returned to us and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(target_os = "linux")]
fn openat2(at: i32, rel: &Path, flags: i32, mode: u32) -> Option<io::Result<OwnedFd>> {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let c = match cstr(rel.as_os_str()) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: if flags & libc::O_CREAT != 0 {
            mode as u64
        } else {
            0
        },
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: openat2(2) with a valid path, a valid `open_how` and its size.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            at,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOSYS | libc::EPERM | libc::E2BIG) => None,
            Some(libc::EAGAIN) => None,
            _ => Some(Err(e)),
        };
    }
    // SAFETY: a descriptor just returned to us and owned by nobody else.
    Some(Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) }))
}

#[cfg(not(target_os = "linux"))]
fn openat2(_: i32, _: &Path, _: i32, _: u32) -> Option<io::Result<OwnedFd>> {
    None
}

/// Component by component, refusing every link and every `..`.
/// `rel`'s names, refusing `..` and absolute parts (EXDEV: they lead out).
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(Ok(p)),
            Component::CurDir => None,
            _ => Some(Err(())),
        })
        .collect::<Result<_, _>>()
        .map_err(|_| io::Error::from_raw_os_error(libc::EXDEV))
}

fn walk(root: &OwnedFd, rel: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let parts = names(rel)?;
    let Some((last, dirs)) = parts.split_last() else {
        return raw_open(root.as_raw_fd(), OsStr::new("."), flags, mode);
    };
    let mut here: Option<OwnedFd> = None;
    for dir in dirs {
        let at = here.as_ref().unwrap_or(root).as_raw_fd();
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        here = Some(raw_open(at, dir, flags, 0)?);
    }
    let at = here.as_ref().unwrap_or(root).as_raw_fd();
    raw_open(at, last, flags | libc::O_NOFOLLOW, mode)
}

/// Opens `path` with `flags` (and `mode` when creating): beneath its
/// workspace when it lies in one, normally otherwise.
pub fn open_fd(path: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let Some((root, rel)) = split(path) else {
        return raw_open(libc::AT_FDCWD, path.as_os_str(), flags, mode);
    };
    let dir_flags = libc::O_RDONLY | libc::O_DIRECTORY;
    let root_fd = raw_open(libc::AT_FDCWD, root.as_os_str(), dir_flags, 0)?;
    open_under(&root_fd, &rel, flags, mode).map_err(|e| explain(e, path, &root))
}

/// `rel` opened beneath the folder `root`: by `openat2` where the kernel
/// has it, else component by component refusing every link.
fn open_under(root: &OwnedFd, rel: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    match openat2(root.as_raw_fd(), rel, flags, mode) {
        Some(result) => result,
        None => walk(root, rel, flags, mode),
    }
}

/// A read-only [`File`] of `path` (non-blocking open, so a FIFO swapped in
/// does not hang the tool).
pub fn open(path: &Path) -> io::Result<File> {
    open_fd(path, libc::O_RDONLY | libc::O_NONBLOCK, 0).map(File::from)
}

/// Opens many files under one folder for reading, as [`open`] does, with
/// the workspace's descriptor opened once instead of once per file: for
/// the tools that read every file of a walk (`grep`). Shareable between
/// threads.
pub struct Reader {
    root: Option<(PathBuf, OwnedFd)>,
}

impl Reader {
    /// A reader for files under `path`'s workspace (or, outside every
    /// workspace, one that opens normally, as [`open`] does).
    pub fn new(path: &Path) -> io::Result<Reader> {
        // A workspace registered inside this one would hold its own files
        // tighter: then each file is opened as [`open`] opens it.
        let nested = |root: &Path| {
            let roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
            roots.iter().any(|r| r != root && r.starts_with(root))
        };
        let root = match split(path) {
            Some((root, _)) if !nested(&root) => {
                let flags = libc::O_RDONLY | libc::O_DIRECTORY;
                let fd = raw_open(libc::AT_FDCWD, root.as_os_str(), flags, 0)?;
                Some((root, fd))
            }
            _ => None,
        };
        Ok(Reader { root })
    }

    /// `path` read-only and non-blocking, beneath the workspace.
    pub fn open(&self, path: &Path) -> io::Result<File> {
        let flags = libc::O_RDONLY | libc::O_NONBLOCK;
        let Some((root, fd)) = &self.root else {
            return open(path);
        };
        let Ok(rel) = path.strip_prefix(root) else {
            return open(path);
        };
        open_under(fd, rel, flags, 0)
            .map(File::from)
            .map_err(|e| explain(e, path, root))
    }
}

/// Opens the real path `real` (links already resolved and judged by the
/// caller) read-only and non-blocking, and makes sure the descriptor is
/// that very file: a link swapped into one of its folders after the check
/// fails the open instead of reading what the link names.
pub fn open_exact(real: &Path) -> io::Result<File> {
    let fd = open_fd(real, libc::O_RDONLY | libc::O_NONBLOCK, 0)?;
    // Where the kernel names a descriptor (/proc), compare; elsewhere the
    // walk beneath the workspace followed no link at all.
    if cfg!(target_os = "linux") {
        let at = fd_path(&fd)?;
        if at != real {
            return Err(io::Error::other(format!(
                "it changed while being read (now {})",
                at.display()
            )));
        }
    }
    Ok(File::from(fd))
}

/// A path that names the open `file` itself (Linux), so a std call taking a
/// path reaches that file and no other; `fallback` where there is none.
pub fn named_by_descriptor(file: &impl AsRawFd, fallback: &Path) -> PathBuf {
    if cfg!(target_os = "linux") {
        PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
    } else {
        fallback.to_path_buf()
    }
}

/// Creates `rel` beneath the folder `root` with `flags` and `mode`, making
/// the folders on the way (0755): no component, existing or made, is
/// followed through a link, and nothing `..` leads out.
pub fn create_under(root: &Path, rel: &Path, flags: i32, mode: u32) -> io::Result<File> {
    let parts = names(rel)?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    };
    let dir_flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    let mut here = raw_open(
        libc::AT_FDCWD,
        root.as_os_str(),
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )?;
    for dir in dirs {
        here = match raw_open(here.as_raw_fd(), dir, dir_flags, 0) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let c = cstr(dir)?;
                // SAFETY: a valid descriptor and C string.
                if unsafe { libc::mkdirat(here.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        return Err(e);
                    }
                }
                raw_open(here.as_raw_fd(), dir, dir_flags, 0)?
            }
            other => other?,
        };
    }
    raw_open(here.as_raw_fd(), last, flags | libc::O_NOFOLLOW, mode).map(File::from)
}

/// Fails, naming where it leads, when the directory `path` leaves its
/// workspace through a link: for the tools that list or walk a folder.
pub fn check_dir(path: &Path) -> io::Result<()> {
    open_fd(path, libc::O_RDONLY | libc::O_DIRECTORY, 0).map(|_| ())
}

/// A link that leaves the workspace, said so the model can act on it: the
/// real target, which the gate judges as itself if the model asks for it.
fn explain(e: io::Error, path: &Path, root: &Path) -> io::Error {
    if !matches!(e.raw_os_error(), Some(libc::EXDEV | libc::ELOOP)) {
        return e;
    }
    let target = std::fs::canonicalize(path)
        .map(|t| t.display().to_string())
        .unwrap_or_else(|_| "a place it cannot name".to_string());
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} leads out of the workspace {} through a link (it points to {target}); the file \
             tools do not follow it. Name the real path instead if it is needed (that asks)",
            path.display(),
            root.display()
        ),
    )
}

/// The real path of `path` when it lies in a workspace: where its links
/// lead, refused when that is outside the workspace.
pub fn real_path(path: &Path) -> io::Result<PathBuf> {
    if split(path).is_none() {
        return std::fs::canonicalize(path);
    }
    let fd = open_fd(path, path_flags(), 0)?;
    fd_path(&fd).or_else(|_| std::fs::canonicalize(path))
}

#[cfg(target_os = "linux")]
fn path_flags() -> i32 {
    libc::O_PATH
}

#[cfg(not(target_os = "linux"))]
fn path_flags() -> i32 {
    libc::O_RDONLY
}

/// The path the kernel knows a descriptor by.
fn fd_path(fd: &OwnedFd) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// The directory `dir`, created with its missing parents, pinned by a
/// descriptor opened beneath its workspace; and a path that names it
/// through that descriptor (on Linux), for the std calls that want a path.
pub fn pinned_dir(dir: &Path) -> io::Result<(OwnedFd, PathBuf)> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY;
    let fd = match open_fd(dir, flags, 0) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
            let (Some(parent), Some(name)) = (parent, dir.file_name()) else {
                return Err(e);
            };
            let (parent_fd, _) = pinned_dir(parent)?;
            let c = cstr(name)?;
            // SAFETY: a valid directory descriptor and C string.
            let made = unsafe { libc::mkdirat(parent_fd.as_raw_fd(), c.as_ptr(), 0o777) };
            if made < 0 {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::AlreadyExists {
                    return Err(err);
                }
            }
            raw_open(parent_fd.as_raw_fd(), name, flags | libc::O_NOFOLLOW, 0)?
        }
        other => other?,
    };
    let by_fd = named_by_descriptor(&fd, dir);
    Ok((fd, by_fd))
}

/// Refuses a write (or removal) that would reach one of the workspace's
/// control files (`sandbox::control`: git's, cairn's, other agents') by
/// another name than its own — through a link, perhaps one a background
/// job swapped in after the gate judged the path. `real` is where the
/// write really lands (the pinned directory's own path and the name). A
/// control file named by its own path was asked about by the gate.
pub fn check_control(asked: &Path, real: &Path) -> io::Result<()> {
    let Some((root, real_rel)) = split(real) else {
        return Ok(());
    };
    let Some(what) = crate::sandbox::control::control_file_in(&root, &real_rel) else {
        return Ok(());
    };
    let asked_rel = split(&crate::paths::lexical(asked)).map(|(_, rel)| rel);
    if asked_rel.as_deref() == Some(real_rel.as_path()) {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} leads to {} through a link, and that is {what}; the file tools change such \
             files only by their own path (which always asks). Nothing was written",
            asked.display(),
            real_rel.display()
        ),
    ))
}

/// Where a write into the pinned directory `pin` under `name` lands.
pub fn landing(pin: &OwnedFd, name: &OsStr) -> io::Result<PathBuf> {
    Ok(fd_path(pin)?.join(name))
}

/// Removes the file `path` without following a link in its directories
/// (a link as the last component is removed itself, as unlink does).
pub fn remove_file(path: &Path) -> io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other("not a file path"));
    };
    let (fd, _) = match open_fd(dir, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
        Ok(fd) => (fd, ()),
        Err(e) => return Err(e),
    };
    if cfg!(target_os = "linux") {
        check_control(path, &landing(&fd, name)?)?;
    }
    let c = cstr(name)?;
    // SAFETY: a valid directory descriptor and C string.
    if unsafe { libc::unlinkat(fd.as_raw_fd(), c.as_ptr(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
