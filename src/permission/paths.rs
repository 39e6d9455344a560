//! Path handling shared by the inspectors: resolving shell words to paths
//! and telling whether a path lies in the workspace. Mostly lexical; the
//! file system is consulted for `..` after a directory (which the kernel
//! resolves from a symbolic link's target), for symbolic links inside the
//! workspace that lead out of it, and by `looks_like_root_path`.

use std::path::{Component, Path, PathBuf};

use crate::shell::{HARMLESS_DEVICES, ShellAnalysis};

/// Directories whose contents belong to the operating system.
pub const SYSTEM_DIRS: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/libx32", "/sys",
    "/proc", "/dev",
];

/// Directories whose recursive removal is catastrophic (besides the system
/// directories and the home directory).
pub const CRITICAL_DIRS: &[&str] = &[
    "/",
    "/var",
    "/home",
    "/root",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/snap",
    "/nix",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
    "/private",
];

pub use crate::paths::home_dir;

pub use crate::paths::{normalize, normalize_physical, physical_path};

/// The path a shell word names, when that can be known before it runs:
/// literal words, and `~`, `$HOME`, `${HOME}` prefixes.
pub fn resolve_word(word: &str, literal: bool, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let text = if literal {
        word.to_string()
    } else {
        word.replace('"', "")
    };
    let home_rest = ["${HOME}", "$HOME", "~"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix));
    if let Some(rest) = home_rest {
        if !rest.is_empty() && !rest.starts_with('/') {
            return None; // `~user`, `$HOMEDIR`
        }
        let rest = rest.trim_start_matches('/');
        if !literal && (rest.contains('$') || rest.contains('`')) {
            return None;
        }
        let home = home?;
        return Some(normalize_physical(&home.join(rest)));
    }
    if !literal {
        return None;
    }
    let path = Path::new(&text);
    Some(normalize_physical(&if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }))
}

/// Where `path` really is when a symbolic link takes it out of `dir` while
/// its text stays inside (`dir/link/x` with `link` → `/etc`). `real_dir`
/// is `dir` canonicalised.
pub fn escapes_through_link(path: &Path, real_dir: &Path) -> Option<PathBuf> {
    let real = physical_path(path)?;
    (!real.starts_with(real_dir)).then_some(real)
}

/// Whether `path` lies in `dir`, by its text and, when `dir` exists, also
/// where it really is (a symbolic link in `dir` may lead out of it).
pub fn is_within(path: &Path, dir: &Path) -> bool {
    if !normalize(path).starts_with(normalize(dir)) {
        return false;
    }
    let Ok(real_dir) = std::fs::canonicalize(dir) else {
        return true;
    };
    physical_path(path).is_some_and(|real| real.starts_with(real_dir))
}

pub fn is_harmless_device(path: &Path) -> bool {
    HARMLESS_DEVICES.iter().any(|d| path == Path::new(d))
        || path.starts_with("/dev/fd")
        || path == Path::new("/dev/stdin")
}

/// The system directory `path` lies in, if any.
pub fn system_dir_of(path: &Path) -> Option<&'static str> {
    if is_harmless_device(path) {
        return None;
    }
    SYSTEM_DIRS
        .iter()
        .copied()
        .find(|dir| path.starts_with(dir))
}

/// A word starting with `/` is treated as a path only when its first
/// component exists, so regex and URL fragments like `/api/` in a grep
/// pattern are not mistaken for files outside the workspace.
pub fn looks_like_root_path(path: &Path) -> bool {
    let mut components = path.components();
    match (components.next(), components.next()) {
        (Some(Component::RootDir), None) => true,
        (Some(Component::RootDir), Some(first)) => Path::new("/").join(first).exists(),
        _ => false,
    }
}

/// The directory each command of `analysis` runs in, following `cd` within
/// each shell (a `cd` in a subshell does not outlast it). A `cd` to a place
/// only known at run time (`cd "$X"`, `cd -`) leaves the directory
/// unchanged here; the gate asks about such a `cd` separately.
pub fn command_dirs(analysis: &ShellAnalysis, start: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut scope_dirs: Vec<Option<PathBuf>> = vec![None; analysis.scopes.len()];
    let mut out = Vec::with_capacity(analysis.commands.len());
    for cmd in &analysis.commands {
        let dir = dir_of_scope(analysis, &scope_dirs, cmd.scope, start);
        out.push(dir.clone());
        if cmd.name() == Some("cd") {
            let target = match (cmd.words.get(1), cmd.literal.get(1)) {
                (None, _) => home.map(Path::to_path_buf),
                (Some(word), Some(literal)) if word != "-" => {
                    resolve_word(word, *literal, &dir, home)
                }
                _ => None,
            };
            if let Some(target) = target
                && let Some(slot) = scope_dirs.get_mut(cmd.scope)
            {
                *slot = Some(target);
            }
        }
    }
    out
}

fn dir_of_scope(
    analysis: &ShellAnalysis,
    dirs: &[Option<PathBuf>],
    scope: usize,
    start: &Path,
) -> PathBuf {
    let mut current = Some(scope);
    let mut steps = 0;
    while let Some(s) = current {
        if let Some(Some(dir)) = dirs.get(s) {
            return dir.clone();
        }
        current = analysis.scopes.get(s).copied().flatten();
        steps += 1;
        if steps > dirs.len() {
            break;
        }
    }
    normalize(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_words() {
        let cwd = Path::new("/w/p");
        let home = Some(Path::new("/home/u"));
        let r = |w: &str, lit: bool| resolve_word(w, lit, cwd, home);
        assert_eq!(r("src/../a", true), Some(PathBuf::from("/w/p/a")));
        assert_eq!(r("../../etc", true), Some(PathBuf::from("/etc")));
        assert_eq!(r("/", true), Some(PathBuf::from("/")));
        assert_eq!(r("~", false), Some(PathBuf::from("/home/u")));
        assert_eq!(r("~/", false), Some(PathBuf::from("/home/u")));
        assert_eq!(r("\"$HOME\"/x", false), Some(PathBuf::from("/home/u/x")));
        assert_eq!(r("${HOME}", false), Some(PathBuf::from("/home/u")));
        assert_eq!(r("$HOMEDIR", false), None);
        assert_eq!(r("$X", false), None);
    }

    #[test]
    fn cd_is_followed_within_its_shell_only() {
        let a = crate::shell::parse("cd src && ls; (cd a; ls); ls; cd; ls");
        let dirs = command_dirs(&a, Path::new("/w"), Some(Path::new("/h")));
        let dirs: Vec<_> = dirs.iter().map(|d| d.display().to_string()).collect();
        assert_eq!(
            dirs,
            [
                "/w", "/w/src", "/w/src", "/w/src/a", "/w/src", "/w/src", "/h"
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_followed_where_the_kernel_follows_them() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let Ok(root) = std::fs::canonicalize(dir.path()) else {
            panic!("no canonical temporary directory");
        };
        let ws = root.join("ws");
        let made = std::fs::create_dir_all(ws.join("src"))
            .and_then(|()| std::os::unix::fs::symlink("/etc", ws.join("link")))
            .and_then(|()| std::os::unix::fs::symlink("../..", ws.join("src/up")));
        assert!(made.is_ok(), "{made:?}");
        assert!(is_within(&ws.join("src/a.rs"), &ws));
        assert!(is_within(&ws.join("new/file"), &ws));
        assert!(!is_within(&ws.join("link/hosts"), &ws));
        assert!(!is_within(&ws.join("src/up/x"), &ws));
        // `link/..` is the parent of `/etc`, not the workspace.
        assert_eq!(normalize_physical(&ws.join("link/../x")), Path::new("/x"));
        assert_eq!(normalize_physical(&ws.join("src/../x")), ws.join("x"));
    }

    #[test]
    fn system_dirs() {
        assert_eq!(system_dir_of(Path::new("/etc/hosts")), Some("/etc"));
        assert_eq!(system_dir_of(Path::new("/dev/null")), None);
        assert_eq!(system_dir_of(Path::new("/dev/sda")), Some("/dev"));
        assert_eq!(system_dir_of(Path::new("/etcetera")), None);
        assert_eq!(system_dir_of(Path::new("/tmp/x")), None);
    }
}
