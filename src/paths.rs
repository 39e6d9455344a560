//! Paths as text: the person's home and lexical normalisation, shared by
//! the services (tools, permission, sandbox) without their importing each
//! other.

use std::path::{Component, Path, PathBuf};

/// `$HOME`, when it is set and not empty.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_by_text() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(lexical(Path::new("/../x")), PathBuf::from("/x"));
    }
}
