//! `[sandbox]`: how commands are confined. The user's file sets it; a
//! project's `.cairn/config.toml` may only tighten it (a stricter mode, the
//! network off, more unreadable paths), never add writable roots.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Commands write only in the workspace, the temporary directory and the
    /// configured roots.
    #[default]
    WorkspaceWrite,
    /// Commands write nowhere but the temporary directory.
    ReadOnly,
    /// Commands run unconfined.
    Off,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }

    /// Larger is stricter.
    fn strictness(self) -> u8 {
        match self {
            SandboxMode::Off => 0,
            SandboxMode::WorkspaceWrite => 1,
            SandboxMode::ReadOnly => 2,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    pub mode: Option<SandboxMode>,
    /// Whether commands may use the network (default: no).
    pub network: Option<bool>,
    /// Whether a granted network also reaches this machine's loopback
    /// services (a local database, a dev server). Default: no, where
    /// slirp4netns can give commands a network of their own. Only from
    /// the user's file.
    pub host_loopback: Option<bool>,
    /// Extra writable roots (`~` allowed). Only from the user's file.
    #[serde(default)]
    pub writable: Vec<String>,
    /// Extra paths commands may not read (`~` allowed).
    #[serde(default)]
    pub deny_read: Vec<String>,
    /// Paths under the home directory commands may read besides the
    /// built-in toolchain allow-list (`~` allowed). Only from the user's file.
    #[serde(default)]
    pub read: Vec<String>,
    /// Unix sockets commands may connect to (`~` allowed). Naming any opens
    /// `AF_UNIX` sockets to commands. Only from the user's file.
    #[serde(default)]
    pub unix_sockets: Vec<String>,
    /// `false`: the person's own hooks run as them, unconfined (a hook
    /// that runs the repository's code, `npx prettier`, `make fmt`, then
    /// runs it outside the sandbox). They run in the sandbox unless this
    /// is set in the person's own config.
    pub user_hooks: Option<bool>,
    /// What a project's file asked for and did not get, to tell the person.
    #[serde(skip)]
    pub ignored: Vec<String>,
}

impl SandboxConfig {
    pub fn mode(&self) -> SandboxMode {
        self.mode.unwrap_or_default()
    }

    pub fn network(&self) -> bool {
        self.network.unwrap_or(false)
    }

    pub fn host_loopback(&self) -> bool {
        self.host_loopback.unwrap_or(false)
    }

    /// Whether the person's own hooks run in the sandbox (the default).
    pub fn user_hooks(&self) -> bool {
        self.user_hooks.unwrap_or(true)
    }

    /// Lays a project's section over the user's, keeping only what makes
    /// the sandbox stricter.
    pub fn tighten(&mut self, project: SandboxConfig) {
        if let Some(mode) = project.mode {
            if mode.strictness() >= self.mode().strictness() {
                self.mode = Some(mode);
            } else {
                self.ignored.push(format!(
                    "mode = \"{}\" (a project may not loosen \"{}\")",
                    mode.as_str(),
                    self.mode().as_str()
                ));
            }
        }
        match project.network {
            Some(false) => self.network = Some(false),
            Some(true) if !self.network() => self
                .ignored
                .push("network = true (a project may not turn the network on)".into()),
            _ => {}
        }
        match project.host_loopback {
            Some(false) => self.host_loopback = Some(false),
            Some(true) if !self.host_loopback() => self.ignored.push(
                "host_loopback = true (only the user's config may open this machine's loopback)"
                    .into(),
            ),
            _ => {}
        }
        match project.user_hooks {
            Some(true) => self.user_hooks = Some(true),
            Some(false) if self.user_hooks() => self.ignored.push(
                "user_hooks = false (only the user's config may run their hooks unconfined)".into(),
            ),
            _ => {}
        }
        for root in project.writable {
            self.ignored.push(format!(
                "writable \"{root}\" (only the user's config may add writable roots)"
            ));
        }
        for path in project.read {
            self.ignored.push(format!(
                "read \"{path}\" (only the user's config may widen what commands read)"
            ));
        }
        for socket in project.unix_sockets {
            self.ignored.push(format!(
                "unix_sockets \"{socket}\" (only the user's config may open sockets)"
            ));
        }
        for path in project.deny_read {
            if !self.deny_read.contains(&path) {
                self.deny_read.push(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> SandboxConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_project_only_tightens() {
        let mut user = parse(
            "mode = \"workspace-write\"\nnetwork = true\nhost_loopback = true\nwritable = [\"~/x\"]\n",
        );
        assert!(user.host_loopback());
        user.tighten(parse(
            "mode = \"read-only\"\nnetwork = false\nhost_loopback = false\ndeny_read = [\"~/secret\"]\n",
        ));
        assert!(!user.host_loopback());
        assert_eq!(user.mode(), SandboxMode::ReadOnly);
        assert!(!user.network());
        assert_eq!(user.writable, ["~/x"]);
        assert_eq!(user.deny_read, ["~/secret"]);
        assert!(user.ignored.is_empty(), "{:?}", user.ignored);
    }

    #[test]
    fn a_project_cannot_loosen_and_is_told_so() {
        let mut user = SandboxConfig::default();
        user.tighten(parse(
            "mode = \"off\"\nnetwork = true\nwritable = [\"/etc\"]\n\
             read = [\"~/.ssh\"]\nunix_sockets = [\"/run/docker.sock\"]\nuser_hooks = false\n\
             host_loopback = true\n",
        ));
        assert_eq!(user.mode(), SandboxMode::WorkspaceWrite);
        assert!(!user.network());
        assert!(!user.host_loopback());
        assert!(user.writable.is_empty());
        assert!(user.read.is_empty() && user.unix_sockets.is_empty());
        assert!(user.user_hooks());
        assert_eq!(user.ignored.len(), 7, "{:?}", user.ignored);
        assert!(user.ignored[2].contains("host_loopback"));
        assert!(user.ignored[3].contains("user_hooks"));
        assert!(user.ignored[4].contains("/etc"));
        assert!(user.ignored[5].contains("~/.ssh"));
        assert!(user.ignored[6].contains("docker.sock"));
    }

    #[test]
    fn unknown_keys_and_modes_are_errors() {
        assert!(toml::from_str::<SandboxConfig>("mode = \"loose\"\n").is_err());
        assert!(toml::from_str::<SandboxConfig>("netwrk = true\n").is_err());
    }
}
