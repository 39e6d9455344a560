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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caches {
    /// `<cache area>/<project key>`: writable by commands.
    pub dir: PathBuf,
    /// This session's temporary directory (`/tmp` under bubblewrap).
    pub tmp: PathBuf,
}

impl Caches {
    /// Creates (once) the project's cache and a fresh session directory
    /// under `area`, removing session directories of processes gone.
    pub fn create(area: &Path, workspace: &Path, home: Option<&Path>) -> std::io::Result<Caches> {
        let dir = area.join(project_key(workspace));
        for (_, sub) in VARIABLES {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        if let Some(home) = home {
            link_cargo_config(&dir.join("cargo"), &home.join(".cargo"));
        }
        remove_stale_sessions(&dir);
        // One per cairn process: a second sandbox of the same session
        // (the interface and the agent) shares it.
        let tmp = dir.join(format!("tmp-{}", std::process::id()));
        std::fs::create_dir_all(&tmp)?;
        Ok(Caches {
            dir: std::fs::canonicalize(&dir)?,
            tmp: std::fs::canonicalize(&tmp)?,
        })
    }

    /// The variables a command gets.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        VARIABLES
            .iter()
            .map(|(name, sub)| (*name, self.dir.join(sub)))
            .collect()
    }
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

fn link_cargo_config(private: &Path, person: &Path) {
    for name in CARGO_CONFIG {
        let (link, target) = (private.join(name), person.join(name));
        if target.exists() && std::fs::symlink_metadata(&link).is_err() {
            let _ = std::os::unix::fs::symlink(&target, &link);
        }
    }
}

/// `tmp-<pid>` folders whose process no longer runs.
fn remove_stale_sessions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("tmp-"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
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
            .join(project_key(Path::new("/w/a")))
            .join("tmp-999999999");
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
        assert!(a.tmp.is_dir() && a.tmp.starts_with(&a.dir));
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
}
