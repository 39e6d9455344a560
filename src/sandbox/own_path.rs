//! cairn runs some programs as the person, outside the sandbox: `bwrap`
//! itself, the person's own hooks and MCP servers, their editor and
//! browser, the clipboard helper, `tic`. Found on a `PATH` that holds a
//! folder a contained command can write — an activated venv's
//! `.venv/bin`, `node_modules/.bin`, a `./bin` a direnv file added, a
//! relative entry such as `.` — one command could plant a program of that
//! name and have cairn run it as the person, with no dialog.
//!
//! So, first thing at start, cairn's own `PATH` loses relative entries and
//! every folder inside the workspace (the current folder's repository, by
//! real location) or the sandbox's cache area, the places commands write. Whatever cairn starts by name
//! from then on is found there, and inherits it. The person's full `PATH`
//! is kept for the commands the model runs ([`for_commands`]), which expect
//! their venv and are held by the sandbox (or were approved as written);
//! the shell those commands start in is still found on the cut `PATH`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

static ORIGINAL: OnceLock<Option<OsString>> = OnceLock::new();

/// cairn's own executable, resolved once (a later rename or replacement
/// of the file does not change which path is named).
pub fn own_exe() -> Option<&'static Path> {
    static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().ok()?.canonicalize().ok())
        .as_deref()
}

/// cairn's own `PATH` as cut so far: at start, then again for each
/// workspace a session opens (an editor opens sessions in folders other
/// than the one `cairn acp` started in).
static CUT: Mutex<Option<OsString>> = Mutex::new(None);

/// The places commands of a session in `cwd` can write, whose folders leave
/// cairn's own `PATH`.
fn places_for(cwd: &Path) -> Vec<PathBuf> {
    // Commands may not write a workspace that is the home folder or above
    // it (`Policy::workspace_usable`): its folders stay.
    let root = crate::paths::project_root(cwd);
    let home = crate::paths::home_dir();
    let usable = root.is_absolute() && !home.as_deref().is_some_and(|h| h.starts_with(&root));
    let mut places: Vec<PathBuf> = usable.then_some(root).into_iter().collect();
    if let Some(base) = directories::BaseDirs::new() {
        places.push(base.cache_dir().join(super::CACHE_AREA));
    }
    places
}

/// Cuts this process's `PATH` as described above and keeps the original.
///
/// # Safety
/// Changes the environment: call it while cairn has one thread.
pub unsafe fn cut_own_path() {
    let original = std::env::var_os("PATH");
    let cwd = std::env::current_dir().ok();
    if let (Some(path), Some(cwd)) = (&original, &cwd) {
        let kept = safe_path(path, &places_for(cwd));
        *CUT.lock().unwrap_or_else(|e| e.into_inner()) = Some(kept.clone());
        // SAFETY: the caller guarantees no other thread reads the
        // environment meanwhile.
        unsafe { std::env::set_var("PATH", kept) };
    }
    let _ = ORIGINAL.set(original);
}

/// A session opens the workspace holding `cwd`: its folders leave cairn's
/// own `PATH` too, before anything of the session starts. Programs cairn
/// starts as the person get that `PATH` ([`apply`]) and are found on it
/// ([`find`]).
pub fn workspace_opened(cwd: &Path) {
    if cwd.is_absolute() {
        writable_places(&places_for(cwd));
    }
}

/// Folders commands can write (a policy's writable roots) leave cairn's
/// own `PATH` too: for the launcher an editor starts in a folder of its
/// own, with its own `PATH`, to run one command (`cairn __contained`).
pub fn writable_places(places: &[PathBuf]) {
    let mut cut = CUT.lock().unwrap_or_else(|e| e.into_inner());
    let Some(now) = cut.clone().or_else(|| std::env::var_os("PATH")) else {
        return;
    };
    let places: Vec<PathBuf> = places.iter().filter(|p| p.is_absolute()).cloned().collect();
    *cut = Some(safe_path(&now, &places));
}

/// cairn's own `PATH` as cut so far.
pub fn path() -> Option<OsString> {
    let cut = CUT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    cut.or_else(|| std::env::var_os("PATH"))
}

/// Gives a program cairn starts as the person cairn's own `PATH`, so it is
/// found there and what it starts by name is found there too.
pub fn apply(cmd: &mut std::process::Command) {
    if let Some(path) = path() {
        cmd.env("PATH", path);
    }
}

/// The `PATH` the person started cairn with, for the model's commands.
pub fn for_commands() -> Option<&'static OsStr> {
    match ORIGINAL.get() {
        Some(original) => original.as_deref(),
        None => None,
    }
}

/// `program` found on cairn's own (cut) `PATH`; a path is itself.
pub fn find(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&path()?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `path` without relative entries and without folders inside one of
/// `places` (compared by real location too, so a link to them is dropped).
pub fn safe_path(path: &OsStr, places: &[PathBuf]) -> OsString {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let places: Vec<PathBuf> = places.iter().flat_map(|p| [p.clone(), real(p)]).collect();
    let kept: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .filter(|dir| {
            let at = real(dir);
            !places
                .iter()
                .any(|place| dir.starts_with(place) || at.starts_with(place))
        })
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_cache_and_relative_folders_are_cut() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        let tmp = d.path().join("tmp");
        for p in [
            ws.join(".venv/bin"),
            ws.join("sub"),
            tmp.join("x"),
            d.path().join("tools"),
        ] {
            std::fs::create_dir_all(p).unwrap();
        }
        std::os::unix::fs::symlink(ws.join("sub"), d.path().join("via-link")).unwrap();
        let path = std::env::join_paths([
            ws.join(".venv/bin"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("."),
            PathBuf::from(""),
            PathBuf::from("node_modules/.bin"),
            tmp.join("x"),
            d.path().join("via-link"),
            d.path().join("tools"),
            PathBuf::from("/bin"),
        ])
        .unwrap();
        let kept = safe_path(&path, &[ws.clone(), tmp.clone()]);
        let kept: Vec<PathBuf> = std::env::split_paths(&kept).collect();
        assert_eq!(
            kept,
            [
                PathBuf::from("/usr/bin"),
                d.path().join("tools"),
                PathBuf::from("/bin")
            ]
        );
    }
}
