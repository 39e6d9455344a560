//! Containment: every command cairn starts for the model runs under a
//! [`Policy`] — writable roots, paths it may not read, network on or off.
//!
//! - `policy` — the policy built from `[sandbox]`, the workspace and the home
//!   directory, and what a person's approval adds to it for one run.
//! - `linux` — enforcement with Landlock (files, TCP, signals) and seccomp
//!   (no IPv4/IPv6 sockets when the network is off; Unix sockets work).
//! - `readable` — Landlock can only allow, so "everything but `~/.ssh`" is
//!   written as an allow-list built from the file system.
//! - `seatbelt` — the same policy as a macOS Seatbelt profile.
//! - `detect` — noticing that the sandbox stopped a command.
//! - `status` — what this machine enforces, in words.
//!
//! **What is readable.** Everything the user can read, except the secrets
//! in [`policy::DEFAULT_DENY_READ`], cairn's own config, data and state
//! directories, and `[sandbox] deny_read`. The rest of the home directory
//! stays readable on purpose: toolchains (`~/.cargo`, `~/.rustup`, `~/.npm`,
//! `~/.cache`, pyenv, nvm), `~/.gitconfig` and shell start-up files are read
//! by the commands a person expects to work. The names inside a denied
//! directory can still be listed; their contents cannot be read.
//!
//! **Never cairn itself.** The restrictions are applied in the child between
//! `fork` and `exec`; cairn's own process is never restricted. tokio runs
//! many threads, so the code that runs in the child must neither allocate
//! nor lock: everything — the Landlock ruleset (an fd holding every rule),
//! the compiled seccomp program — is prepared in the parent, and the child
//! makes only raw system calls (`prctl`, `landlock_restrict_self`,
//! `seccomp`). This costs no extra `exec` and works the same from the
//! binary and from the library's tests.

pub mod detect;
#[cfg(target_os = "linux")]
mod linux;
mod parent_death;
pub mod policy;
pub mod readable;
pub mod seatbelt;
pub mod status;

#[cfg(test)]
#[path = "../../tests/support/fixture_base.rs"]
pub(crate) mod fixture_base;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use detect::Stop;
pub use parent_death::die_with_parent;
pub use policy::{Grant, Policy};
pub use status::Support;

use crate::config::{SandboxConfig, SandboxMode};

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot build the sandbox: {0}")]
    Build(String),
    #[error("cannot start the command: {0}")]
    Spawn(#[from] std::io::Error),
}

/// What the gate needs to know of the sandbox to decide what to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// A policy is applied and this machine enforces it.
    pub enforced: bool,
    /// Commands may use the network without a grant.
    pub network: bool,
    /// Commands may write in the workspace without a grant.
    pub workspace_writable: bool,
}

impl Facts {
    /// No sandbox: the gate behaves as it did before there was one.
    pub const NONE: Facts = Facts {
        enforced: false,
        network: true,
        workspace_writable: true,
    };
}

/// The sandbox settings of a session; cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Settings>,
}

#[derive(Debug)]
struct Settings {
    config: SandboxConfig,
    home: Option<PathBuf>,
    /// cairn's own config, data and state directories.
    private_dirs: Vec<PathBuf>,
    /// `--no-sandbox` was given.
    turned_off_by_flag: bool,
}

impl Sandbox {
    /// The sandbox `[sandbox]` describes, for this user.
    pub fn from_config(config: &SandboxConfig, no_sandbox_flag: bool) -> Sandbox {
        let private_dirs = [
            crate::config::global_dir(),
            crate::config::data_dir(),
            crate::config::state_dir(),
        ]
        .into_iter()
        .flatten()
        .collect();
        Sandbox::with_dirs(
            config,
            no_sandbox_flag,
            crate::paths::home_dir(),
            private_dirs,
        )
    }

    /// Same, with the home and cairn's directories given (tests).
    pub fn with_dirs(
        config: &SandboxConfig,
        no_sandbox_flag: bool,
        home: Option<PathBuf>,
        private_dirs: Vec<PathBuf>,
    ) -> Sandbox {
        Sandbox {
            inner: Arc::new(Settings {
                config: config.clone(),
                home,
                private_dirs,
                turned_off_by_flag: no_sandbox_flag,
            }),
        }
    }

    /// The default policy for this user.
    pub fn default_for_user() -> Sandbox {
        Sandbox::from_config(&SandboxConfig::default(), false)
    }

    /// No sandbox at all (the person turned it off).
    pub fn off() -> Sandbox {
        Sandbox::with_dirs(&SandboxConfig::default(), true, None, Vec::new())
    }

    pub fn mode(&self) -> SandboxMode {
        if self.inner.turned_off_by_flag {
            SandboxMode::Off
        } else {
            self.inner.config.mode()
        }
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.inner.config
    }

    pub fn turned_off_by_flag(&self) -> bool {
        self.inner.turned_off_by_flag
    }

    /// The policy commands in `workspace` run under; `None` when off.
    pub fn policy(&self, workspace: &Path) -> Option<Policy> {
        let mode = self.mode();
        if mode == SandboxMode::Off {
            return None;
        }
        Some(Policy::build(
            mode,
            &self.inner.config,
            workspace,
            self.inner.home.as_deref(),
            &self.inner.private_dirs,
        ))
    }

    /// What commands may not read in `workspace` (the home's secrets,
    /// cairn's own directories, `deny_read`), whatever the mode: cairn
    /// itself keeps these from the model too (`@path` mentions).
    pub fn unreadable(&self, workspace: &Path) -> Vec<PathBuf> {
        Policy::build(
            SandboxMode::WorkspaceWrite,
            &self.inner.config,
            workspace,
            self.inner.home.as_deref(),
            &self.inner.private_dirs,
        )
        .deny_read
    }

    pub fn facts(&self) -> Facts {
        if self.mode() == SandboxMode::Off || !Support::detect().enforces_files() {
            return Facts::NONE;
        }
        Facts {
            enforced: true,
            network: self.inner.config.network(),
            workspace_writable: self.mode() == SandboxMode::WorkspaceWrite,
        }
    }

    /// One line for the status bar and the tool pane.
    pub fn label(&self) -> String {
        match self.mode() {
            SandboxMode::Off => "sandbox off".into(),
            mode if Support::detect().enforces_files() => format!(
                "sandbox: {}, network {}",
                mode.as_str(),
                network_word(self.inner.config.network(), Support::detect())
            ),
            _ => "sandbox not enforced".into(),
        }
    }
}

/// How a command with `policy` really runs, in words: "sandbox:
/// workspace-write, network off", "sandbox off", "sandbox not enforced".
pub fn describe(policy: Option<&Policy>) -> String {
    match policy {
        None => "sandbox off".into(),
        Some(_) if !Support::detect().enforces_files() => "sandbox not enforced".into(),
        Some(p) if !p.network && !Support::detect().enforces_network() => format!(
            "sandbox: {}",
            p.describe()
                .replacen("network off", "network not filtered", 1)
        ),
        Some(p) => format!("sandbox: {}", p.describe()),
    }
}

/// "on", "off", or "not filtered" where this machine cannot turn it off.
fn network_word(on: bool, support: Support) -> &'static str {
    match (on, support.enforces_network()) {
        (true, _) => "on",
        (false, true) => "off",
        (false, false) => "not filtered",
    }
}

/// Builds the command that runs `program` under `policy` (unconfined when
/// `None`, or where this machine cannot confine it). Everything that can
/// fail is done here, in cairn's process, before the child exists.
pub fn command(
    program: &str,
    policy: Option<&Policy>,
) -> Result<tokio::process::Command, SandboxError> {
    match policy {
        Some(policy) => confine(program, policy),
        None => Ok(tokio_command(program)),
    }
}

#[cfg(target_os = "linux")]
fn confine(program: &str, policy: &Policy) -> Result<tokio::process::Command, SandboxError> {
    let mut cmd = tokio_command(program);
    if Support::detect().enforces_files() {
        let prepared = linux::prepare(policy)?;
        linux::install(cmd.as_std_mut(), prepared);
    }
    Ok(cmd)
}

#[cfg(target_os = "macos")]
fn confine(program: &str, policy: &Policy) -> Result<tokio::process::Command, SandboxError> {
    let mut cmd = tokio_command(seatbelt::SANDBOX_EXEC);
    cmd.arg("-p")
        .arg(seatbelt::profile(policy))
        .arg("--")
        .arg(program);
    Ok(cmd)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn confine(program: &str, _policy: &Policy) -> Result<tokio::process::Command, SandboxError> {
    Ok(tokio_command(program))
}

/// The same for a blocking `std` command (`cairn sandbox -- …`).
pub fn std_command(
    program: &std::ffi::OsStr,
    policy: Option<&Policy>,
) -> Result<std::process::Command, SandboxError> {
    #[cfg(target_os = "linux")]
    if let Some(policy) = policy
        && Support::detect().enforces_files()
    {
        let mut cmd = std_new(program);
        linux::install(&mut cmd, linux::prepare(policy)?);
        return Ok(cmd);
    }
    #[cfg(target_os = "macos")]
    if let Some(policy) = policy {
        let mut cmd = std_new(seatbelt::SANDBOX_EXEC);
        cmd.arg("-p")
            .arg(seatbelt::profile(policy))
            .arg("--")
            .arg(program);
        return Ok(cmd);
    }
    let _ = policy;
    Ok(std_new(program))
}

/// A new command that dies with cairn; its parent-death hook is
/// registered first, so it runs before any confinement.
fn tokio_command(program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    parent_death::die_with_parent(cmd.as_std_mut());
    cmd
}

fn std_new(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    parent_death::die_with_parent(&mut cmd);
    cmd
}

#[cfg(all(test, target_os = "linux"))]
#[path = "tests.rs"]
pub(crate) mod tests;
