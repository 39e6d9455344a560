//! The policy a command runs under, and what an approval adds for one run.

use std::path::{Path, PathBuf};

use crate::config::{SandboxConfig, SandboxMode};

/// Secrets no command may read, relative to the home directory.
pub const DEFAULT_DENY_READ: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
];

/// Caches toolchains write to while building offline, relative to home.
/// `~/.cargo/bin` and `~/.rustup` stay read-only: a command that could
/// replace `cargo` would run unconfined the next time the person types it.
pub const TOOL_CACHES: &[&str] = &[
    ".cache",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/.package-cache",
    ".cargo/.package-cache-mutate",
    ".npm",
];

/// Devices every program expects to write to.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
    "/dev/random",
    "/dev/urandom",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: SandboxMode,
    pub workspace: PathBuf,
    /// Where commands may write (and read), existing paths only.
    pub writable: Vec<PathBuf>,
    /// What commands may not read, existing paths only.
    pub deny_read: Vec<PathBuf>,
    pub network: bool,
}

/// What approving one run adds to the policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    pub network: bool,
    /// Extra writable paths (the workspace itself in read-only mode).
    pub write: Vec<PathBuf>,
}

impl Grant {
    pub fn is_empty(&self) -> bool {
        !self.network && self.write.is_empty()
    }

    /// "the network and writing /etc/hosts", for dialogs and messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.network {
            parts.push("the network".to_string());
        }
        if !self.write.is_empty() {
            let paths: Vec<String> = self.write.iter().map(|p| p.display().to_string()).collect();
            parts.push(format!("writing {}", paths.join(", ")));
        }
        parts.join(" and ")
    }
}

/// `~/x` → `<home>/x`; relative paths are taken from `base`.
pub fn expand(path: &str, home: Option<&Path>, base: &Path) -> Option<PathBuf> {
    let path = path.trim();
    if path.is_empty() {
        return None;
    }
    if path == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    Some(base.join(path))
}

fn push_existing(list: &mut Vec<PathBuf>, path: PathBuf) {
    // Landlock rules hold on inodes: a path that does not exist cannot be
    // named. Its real location is what counts when it is a link.
    if let Ok(real) = std::fs::canonicalize(&path)
        && !list.contains(&real)
    {
        list.push(real);
    }
}

impl Policy {
    pub fn build(
        mode: SandboxMode,
        config: &SandboxConfig,
        workspace: &Path,
        home: Option<&Path>,
        private_dirs: &[PathBuf],
    ) -> Policy {
        let mut writable = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            push_existing(&mut writable, workspace.to_path_buf());
            for extra in &config.writable {
                if let Some(p) = expand(extra, home, workspace) {
                    push_existing(&mut writable, p);
                }
            }
        }
        push_existing(&mut writable, std::env::temp_dir());
        push_existing(&mut writable, PathBuf::from("/tmp"));
        for device in DEVICES {
            push_existing(&mut writable, PathBuf::from(device));
        }
        if let Some(home) = home {
            for cache in TOOL_CACHES {
                push_existing(&mut writable, home.join(cache));
            }
        }
        let mut deny_read = Vec::new();
        if let Some(home) = home {
            for secret in DEFAULT_DENY_READ {
                push_existing(&mut deny_read, home.join(secret));
            }
        }
        for dir in private_dirs {
            push_existing(&mut deny_read, dir.clone());
        }
        for extra in &config.deny_read {
            if let Some(p) = expand(extra, home, workspace) {
                push_existing(&mut deny_read, p);
            }
        }
        // A denied path inside the workspace stays denied; a writable root
        // inside a denied one is dropped.
        writable.retain(|w| !deny_read.iter().any(|d| w.starts_with(d)));
        Policy {
            mode,
            workspace: workspace.to_path_buf(),
            writable,
            deny_read,
            network: config.network(),
        }
    }

    /// This policy with `grant` added, for one run.
    pub fn with_grant(&self, grant: &Grant) -> Policy {
        let mut p = self.clone();
        p.network |= grant.network;
        for path in &grant.write {
            // The nearest existing ancestor: a new file needs its directory.
            let mut at = Some(path.as_path());
            while let Some(candidate) = at {
                if candidate.exists() {
                    push_existing(&mut p.writable, candidate.to_path_buf());
                    break;
                }
                at = candidate.parent();
            }
        }
        p
    }

    /// "workspace-write, network off" — shown wherever a command runs.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{}, network {}",
            self.mode.as_str(),
            if self.network { "on" } else { "off" }
        );
        let extra: Vec<String> = self
            .writable
            .iter()
            .filter(|w| {
                !w.starts_with(&self.workspace) && w.starts_with("/") && !is_default_writable(w)
            })
            .map(|w| w.display().to_string())
            .collect();
        if !extra.is_empty() {
            text.push_str(&format!(", also writes {}", extra.join(", ")));
        }
        text
    }
}

fn is_default_writable(path: &Path) -> bool {
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| "/tmp".into());
    path.starts_with(&tmp)
        || path.starts_with("/tmp")
        || path.starts_with("/dev")
        || TOOL_CACHES.iter().any(|c| path.ends_with(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_private_dirs_are_denied_and_extra_roots_writable() {
        // Not under the temporary directory, which is writable anyway.
        let base = crate::sandbox::fixture_base::fixture_base(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("target/sandbox-fixtures"),
        );
        let home = tempfile::tempdir_in(base).unwrap();
        let h = std::fs::canonicalize(home.path()).unwrap();
        for d in [
            ".ssh",
            ".aws",
            "project",
            "extra",
            ".cargo/registry",
            "cairn-data",
        ] {
            std::fs::create_dir_all(h.join(d)).unwrap();
        }
        std::fs::write(h.join(".netrc"), "machine x").unwrap();
        let config = SandboxConfig {
            writable: vec!["~/extra".into()],
            deny_read: vec!["~/project/private".into(), "~/missing".into()],
            ..Default::default()
        };
        std::fs::create_dir_all(h.join("project/private")).unwrap();
        let p = Policy::build(
            SandboxMode::WorkspaceWrite,
            &config,
            &h.join("project"),
            Some(&h),
            &[h.join("cairn-data")],
        );
        for d in [".ssh", ".aws", ".netrc", "cairn-data", "project/private"] {
            assert!(p.deny_read.contains(&h.join(d)), "{d}: {:?}", p.deny_read);
        }
        assert!(!p.deny_read.iter().any(|d| d.ends_with("missing")));
        assert!(p.writable.contains(&h.join("project")));
        assert!(p.writable.contains(&h.join("extra")));
        assert!(p.writable.contains(&h.join(".cargo/registry")));
        assert!(!p.network);
        assert_eq!(
            p.describe(),
            format!(
                "workspace-write, network off, also writes {}",
                h.join("extra").display()
            )
        );
        let ro = Policy::build(
            SandboxMode::ReadOnly,
            &config,
            &h.join("project"),
            Some(&h),
            &[],
        );
        assert!(!ro.writable.contains(&h.join("project")));
        assert!(!ro.writable.contains(&h.join("extra")));
    }

    #[test]
    fn a_grant_adds_the_network_and_the_nearest_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        let p = Policy::build(
            SandboxMode::WorkspaceWrite,
            &SandboxConfig::default(),
            &d.join("ws"),
            None,
            &[],
        );
        let g = Grant {
            network: true,
            write: vec![d.join("out/new/file.txt")],
        };
        let granted = p.with_grant(&g);
        assert!(granted.network);
        assert!(granted.writable.contains(&d));
        assert_eq!(
            g.describe(),
            format!(
                "the network and writing {}",
                d.join("out/new/file.txt").display()
            )
        );
        assert!(Grant::default().is_empty());
    }
}
