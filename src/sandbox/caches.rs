//! Build caches private to a project, and a temporary directory private to
//! a session, in cairn's own cache area — never the person's `~/.cache`,
//! `~/.cargo/registry` or `~/.npm`, which their own later builds would run.
//!
//! Toolchains are pointed there by their variables (`CARGO_HOME`,
//! `npm_config_cache`, `XDG_CACHE_HOME`, …). A private `CARGO_HOME` keeps
//! the person's cargo configuration through a link to it, but not their
//! registry token.

use std::path::{Path, PathBuf};

/// Variables pointed into the project's cache, and the folder each gets.
pub const VARIABLES: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", "xdg"),
    ("CARGO_HOME", "cargo"),
    ("npm_config_cache", "npm"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("PIP_CACHE_DIR", "pip"),
    ("UV_CACHE_DIR", "uv"),
    ("GOCACHE", "go-build"),
    ("GOMODCACHE", "go-mod"),
    ("DENO_DIR", "deno"),
];

/// Links from the private `CARGO_HOME` to the person's, read-only.
const CARGO_CONFIG: &[&str] = &["config.toml", "config"];

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Caches {
    /// `<cache area>/<project key>`: writable by commands.
    pub dir: PathBuf,
    /// This session's temporary directory (`/tmp` under bubblewrap).
    pub tmp: PathBuf,
}

/// Where session directories live: in the cache area, beside the
/// projects' folders and not in any of them, so no command can plant a
/// link where a later session's `/tmp` will be.
const SESSIONS: &str = ".sessions";

impl Caches {
    /// Creates (once) the project's cache and a fresh session directory
    /// under `area`, removing session directories of processes gone.
    ///
    /// The project's folder is writable by commands, so nothing in it is
    /// taken on trust: a folder that is a link (or a file) is replaced by
    /// a real folder, and no path in it is resolved through a link.
    pub fn create(area: &Path, workspace: &Path, home: Option<&Path>) -> std::io::Result<Caches> {
        let key = project_key(workspace);
        let dir = area.join(&key);
        // The area and the project's folder itself are cairn's alone.
        std::fs::create_dir_all(&dir)?;
        let dir = std::fs::canonicalize(&dir)?;
        for (_, sub) in VARIABLES {
            real_dir(&dir.join(sub))?;
        }
        if let Some(home) = home {
            link_cargo_config(&dir.join("cargo"), &home.join(".cargo"));
        }
        // Folders of the layout before sessions moved out of the project.
        remove_stale_sessions(&dir, "tmp-");
        let sessions = area.join(SESSIONS);
        std::fs::create_dir_all(&sessions)?;
        let sessions = std::fs::canonicalize(&sessions)?;
        remove_stale_sessions(&sessions, &format!("{key}-"));
        // One per cairn process: a second sandbox of the same session
        // (the interface and the agent) shares it.
        let tmp = sessions.join(format!("{key}-{}", std::process::id()));
        if !std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.is_dir()) {
            remove_any(&tmp);
            std::fs::create_dir(&tmp)?;
        }
        Ok(Caches { dir, tmp })
    }

    /// The variables a command gets.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        VARIABLES
            .iter()
            .map(|(name, sub)| (*name, self.dir.join(sub)))
            .collect()
    }
}

/// The list of workspaces sandboxed sessions have used, in the cache
/// area's root: commands write only inside their project's folder of the
/// area, and see nothing else of it.
const WORKSPACES: &str = ".workspaces";

/// How many workspaces the list keeps (the most recent).
const WORKSPACES_MAX: usize = 1000;

/// Adds `workspace` to the area's list of workspaces used, once.
pub fn note_workspace(area: &Path, workspace: &Path) {
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let text = workspace.to_string_lossy();
    if text.contains('\n') {
        return;
    }
    let mut known = workspaces_used(area);
    if known.contains(&workspace) {
        return;
    }
    known.push(workspace);
    let keep = known.len().saturating_sub(WORKSPACES_MAX);
    let mut out = String::new();
    for w in &known[keep..] {
        out.push_str(&w.to_string_lossy());
        out.push('\n');
    }
    if let Err(e) = crate::private::replace(&area.join(WORKSPACES), out.as_bytes()) {
        tracing::warn!("cannot note the workspace in {}: {e}", area.display());
    }
}

/// The workspaces the area's list holds.
pub fn workspaces_used(area: &Path) -> Vec<PathBuf> {
    let path = area.join(WORKSPACES);
    // Never through a link, and only a list of a sane size.
    let file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() < 4 << 20);
    if !file {
        return Vec::new();
    }
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// `<last folder name>-<hash of the whole path>`: readable and unique.
fn project_key(workspace: &Path) -> String {
    let text = workspace.to_string_lossy();
    // FNV-1a: stable across builds, unlike the standard library's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    format!("{}-{hash:016x}", name.trim_start_matches('.'))
}

/// Makes `path` a real folder: a link or a file commands put there is
/// removed (never followed) and a folder made in its place.
fn real_dir(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => {
            remove_any(path);
            std::fs::create_dir(path)
        }
        Err(_) => std::fs::create_dir(path),
    }
}

/// Removes what is at `path` without following a link.
fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

fn link_cargo_config(private: &Path, person: &Path) {
    for name in CARGO_CONFIG {
        let (link, target) = (private.join(name), person.join(name));
        if target.exists() && std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink(&target, &link);
        }
    }
}

/// `<prefix><pid>` folders whose process no longer runs.
fn remove_stale_sessions(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            remove_any(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workspaces_used_are_kept_once_each_and_bounded() {
        let area = tempfile::tempdir().unwrap();
        let a = area.path().join("a");
        std::fs::create_dir(&a).unwrap();
        super::note_workspace(area.path(), &a);
        super::note_workspace(area.path(), &a);
        super::note_workspace(area.path(), std::path::Path::new("/gone/b"));
        let a = std::fs::canonicalize(&a).unwrap();
        assert_eq!(
            super::workspaces_used(area.path()),
            [a.clone(), std::path::PathBuf::from("/gone/b")]
        );
        for i in 0..super::WORKSPACES_MAX {
            super::note_workspace(area.path(), std::path::Path::new(&format!("/w/{i}")));
        }
        let kept = super::workspaces_used(area.path());
        assert_eq!(kept.len(), super::WORKSPACES_MAX);
        assert!(!kept.contains(&a), "the oldest went first");
    }

    use super::*;

    #[test]
    fn each_project_gets_its_own_cache_and_stale_sessions_go() {
        let area = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo")).unwrap();
        std::fs::write(home.path().join(".cargo/config.toml"), "[net]\n").unwrap();
        std::fs::write(home.path().join(".cargo/credentials.toml"), "token").unwrap();
        let stale = area
            .path()
            .join(SESSIONS)
            .join(format!("{}-999999999", project_key(Path::new("/w/a"))));
        std::fs::create_dir_all(&stale).unwrap();
        let a = Caches::create(area.path(), Path::new("/w/a"), Some(home.path())).unwrap();
        let b = Caches::create(area.path(), Path::new("/x/a"), None).unwrap();
        assert_ne!(a.dir, b.dir);
        assert!(
            a.dir
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("a-")
        );
        assert!(!stale.exists());
        assert!(a.tmp.is_dir() && !a.tmp.starts_with(&a.dir));
        let cargo = a.dir.join("cargo");
        assert_eq!(
            std::fs::read_to_string(cargo.join("config.toml")).unwrap(),
            "[net]\n"
        );
        assert!(!cargo.join("credentials.toml").exists());
        let env = a.env();
        assert!(env.contains(&("CARGO_HOME", cargo)));
        assert!(env.iter().all(|(_, p)| p.is_dir()));
    }

    /// A command can write the project's cache folder: links it leaves
    /// there are replaced, never followed, and the next session's
    /// temporary folder is out of its reach.
    #[test]
    fn links_planted_in_the_cache_are_not_followed() {
        let area = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo")).unwrap();
        std::fs::write(home.path().join(".cargo/config.toml"), "[net]\n").unwrap();
        let first = Caches::create(area.path(), Path::new("/w/p"), None).unwrap();
        for (_, sub) in VARIABLES {
            std::fs::remove_dir_all(first.dir.join(sub)).unwrap();
            std::os::unix::fs::symlink(victim.path(), first.dir.join(sub)).unwrap();
        }
        for pid in [std::process::id(), std::process::id() + 1] {
            let _ = std::os::unix::fs::symlink(victim.path(), first.dir.join(format!("tmp-{pid}")));
        }
        let again = Caches::create(area.path(), Path::new("/w/p"), Some(home.path())).unwrap();
        for (_, sub) in VARIABLES {
            let m = std::fs::symlink_metadata(again.dir.join(sub)).unwrap();
            assert!(m.is_dir() && !m.file_type().is_symlink(), "{sub}");
        }
        assert!(
            std::fs::read_dir(victim.path()).unwrap().next().is_none(),
            "wrote through a link"
        );
        assert!(!again.tmp.starts_with(&again.dir));
        assert!(
            !std::fs::symlink_metadata(&again.tmp)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
