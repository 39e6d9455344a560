//! Paths: the person's home, lexical and physical normalisation, shared by
//! the services (tools, permission, sandbox) without their importing each
//! other.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// `$HOME`, when it is set and not empty.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The home folder the account's own record names (`/etc/passwd`), which
/// `HOME` may not be (`sudo -E`, a CI container's `HOME=/github/home`):
/// the sandbox hides it too.
pub fn account_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: `getpwuid_r` writes into `pwd` and `buf`, both ours and
    // large enough as told; `found` is null or points at `pwd`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        );
        if rc != 0 || found.is_null() || pwd.pw_dir.is_null() {
            return None;
        }
        let dir = CStr::from_ptr(pwd.pw_dir).to_bytes();
        use std::os::unix::ffi::OsStrExt;
        (!dir.is_empty() && dir != b"/").then(|| PathBuf::from(std::ffi::OsStr::from_bytes(dir)))
    }
}

/// Lexical normalisation: removes `.` and resolves `..` without consulting
/// the file system.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Remove `.` and resolve `..` without consulting the file system.
pub fn normalize(path: &Path) -> PathBuf {
    normalize_with(path, false)
}

/// Like [`normalize`], but a `..` climbs from where the path so far really
/// is, as the kernel does: `link/..` is the parent of `link`'s target.
/// Consults the file system only at a `..` after an absolute path.
pub fn normalize_physical(path: &Path) -> PathBuf {
    normalize_with(path, true)
}

fn normalize_with(path: &Path, physical: bool) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if physical
                    && out.is_absolute()
                    && let Ok(real) = std::fs::canonicalize(&out)
                {
                    out = real;
                }
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Where `path` really is: its longest existing ancestor with symbolic
/// links resolved (also a dangling link's target), and the rest appended.
/// None when nothing of it exists (a relative path).
pub fn physical_path(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    physical(&normalize(path), 0)
}

fn physical(path: &Path, depth: usize) -> Option<PathBuf> {
    if depth > 16 {
        return None;
    }
    let mut existing = path.to_path_buf();
    let mut rest: Vec<OsString> = Vec::new();
    let with_rest = |mut base: PathBuf, rest: &[OsString]| {
        for part in rest.iter().rev() {
            base.push(part);
        }
        base
    };
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            return Some(with_rest(real, &rest));
        }
        let is_link =
            std::fs::symlink_metadata(&existing).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && let Ok(target) = std::fs::read_link(&existing) {
            let parent = existing.parent()?.to_path_buf();
            let base = physical(&normalize(&parent.join(target)), depth + 1)?;
            return Some(with_rest(base, &rest));
        }
        rest.push(existing.file_name()?.to_os_string());
        if !existing.pop() {
            return None;
        }
    }
}

/// The repository root: the nearest ancestor holding `.git`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    // A `.git` at or above home (dotfiles) never makes home the workspace.
    let home = home_dir();
    let above_home = |d: &Path| home.as_deref().is_some_and(|h| h.starts_with(d));
    cwd.ancestors()
        .take_while(|d| *d == cwd || !above_home(d))
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The canonical path, or its existing parent's joined with the rest.
pub fn real_or_parent(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent != path => real_or_parent(parent).join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_by_text() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(lexical(Path::new("/../x")), PathBuf::from("/x"));
    }
}
