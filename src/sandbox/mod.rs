//! Containment: every command cairn starts for the model runs under a
//! [`Policy`] — what it may write, read and reach — and cairn's own helper
//! processes go through [`helper_command`] under the same rules.
//! `docs/security.md` is the promise in words; this is the map:
//!
//! - `policy` — the policy built from `[sandbox]`, the workspace and the
//!   home directory, and what a person's approval adds for one run.
//! - `control` — the workspace's control files (git's, cairn's, other
//!   agents'), which nothing writes unasked.
//! - `census` — git control files a bind cannot stop (a new `commondir`,
//!   a gitlinked repository), checked after every tool call, when a job
//!   ends and at each turn, and kept between sessions (`census_record`);
//!   `nested` finds the same control files in every subfolder (inotify);
//!   `gitindex`
//!   reads the index's gitlinks without git; `gitstate` disarms an
//!   interrupted rebase's `exec` lines and finds included configs.
//! - `home` — the home directory is denied but for a tested allow-list.
//! - `caches` — build caches private per project, `/tmp` per session.
//! - `bwrap` — the namespace layer (bubblewrap), used when it works here.
//! - `netstack` — a granted network of a command's own (slirp4netns),
//!   without this machine's loopback services.
//! - `linux`, `seccomp` — the kernel layer (Landlock and seccomp) where
//!   bubblewrap is missing, and the seccomp filters both layers share.
//! - `env` — socket-locating variables withheld from commands.
//! - `classes` — each class of escape, held here or not; [`Facts`] tells
//!   the gate, which trusts the sandbox only when every class holds.
//! - `readable` — Landlock can only allow: "all but X" as an allow-list.
//! - `seatbelt` — the policy as a macOS Seatbelt profile.
//! - `detect` — noticing that the sandbox stopped a command.
//! - `status` — what this machine enforces, in words.
//! - `helper` — how cairn starts its own helper processes.
//!
//! **Never cairn itself.** The restrictions are applied in the child between
//! `fork` and `exec`; cairn's own process is never restricted. tokio runs
//! many threads, so the code that runs in the child must neither allocate
//! nor lock: everything — the Landlock ruleset (an fd holding every rule),
//! the compiled seccomp programs, bubblewrap's arguments — is prepared in
//! the parent, and the child makes only raw system calls.

#[cfg(target_os = "linux")]
pub mod bwrap;
pub mod caches;
pub mod census;
mod census_record;
pub mod classes;
pub mod control;
pub mod detect;
pub mod env;
mod gitindex;
pub mod gitstate;
pub mod group;
mod head;
pub mod helper;
pub mod home;
#[cfg(target_os = "linux")]
mod linux;
pub mod nested;
mod nested_sys;
#[cfg(target_os = "linux")]
pub mod netstack;
pub mod own_path;
mod parent_death;
pub mod policy;
pub mod readable;
pub mod seatbelt;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod status;
pub mod support;
pub mod unmoved;
pub mod workspace_changes;

#[cfg(test)]
#[path = "../../tests/support/fixture_base.rs"]
pub(crate) mod fixture_base;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use caches::Caches;
pub use classes::{Class, Holding};
pub use detect::Stop;
pub use group::{Group, kill_group};
pub use helper::{
    Helper, helper_command, helper_std_command, hook_command, output_within, user_hook_command,
};
pub use parent_death::{die_with_parent, die_with_parent_reaping, end_all};
pub use policy::{Grant, Layer, Place, Policy};
pub use support::Support;

use crate::config::{SandboxConfig, SandboxMode};

/// The folder of cairn's cache area that holds commands' private caches
/// and session temporary directories, one folder per project.
pub const CACHE_AREA: &str = "cairn-sandbox";

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
    /// Every class of escape holds on this machine (`classes::whole`);
    /// smart and auto mode trust the sandbox only then.
    pub whole: bool,
}

impl Facts {
    /// No sandbox: the gate behaves as it did before there was one.
    pub const NONE: Facts = Facts {
        enforced: false,
        network: true,
        workspace_writable: true,
        whole: false,
    };

    /// The gate may let the sandbox contain what it would otherwise ask.
    pub fn trusted(&self) -> bool {
        self.enforced && self.whole
    }
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
    /// The account's own home when `HOME` names another folder.
    account_home: Option<PathBuf>,
    /// cairn's own config, data and state directories.
    private_dirs: Vec<PathBuf>,
    /// `--no-sandbox` was given.
    turned_off_by_flag: bool,
    /// Where private caches go (`<cache dir>/cairn-sandbox`).
    cache_area: Option<PathBuf>,
    /// Made once per workspace for this session.
    caches: Mutex<Vec<(PathBuf, Caches)>>,
}

impl Sandbox {
    /// The sandbox `[sandbox]` describes, for this user.
    pub fn from_config(config: &SandboxConfig, no_sandbox_flag: bool) -> Sandbox {
        let own_cache =
            directories::ProjectDirs::from("", "", "cairn").map(|d| d.cache_dir().to_path_buf());
        let private_dirs = [
            crate::config::global_dir(),
            crate::config::data_dir(),
            crate::config::state_dir(),
            own_cache,
            // Every session's transcript for hooks (a hook reads its own).
            crate::config::data_dir().and_then(|d| d.parent().map(|p| p.join("cairn-transcripts"))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut sandbox = Sandbox::with_dirs(
            config,
            no_sandbox_flag,
            crate::paths::home_dir(),
            private_dirs,
        );
        if let Some(base) = directories::BaseDirs::new()
            && let Some(inner) = Arc::get_mut(&mut sandbox.inner)
        {
            inner.cache_area = Some(base.cache_dir().join(CACHE_AREA));
        }
        sandbox.with_account_home(crate::paths::account_home())
    }

    /// The same, also hiding `account_home` (the account's own home) where
    /// it is another folder than the home given (`Policy::build`).
    pub fn with_account_home(mut self, account_home: Option<PathBuf>) -> Sandbox {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.account_home = account_home;
        }
        self
    }

    /// Same, with the home and cairn's directories given (tests).
    pub fn with_dirs(
        config: &SandboxConfig,
        no_sandbox_flag: bool,
        home: Option<PathBuf>,
        private_dirs: Vec<PathBuf>,
    ) -> Sandbox {
        let cache_area = home.as_ref().map(|h| h.join(".cache").join(CACHE_AREA));
        Sandbox {
            inner: Arc::new(Settings {
                config: config.clone(),
                home,
                account_home: None,
                private_dirs,
                turned_off_by_flag: no_sandbox_flag,
                cache_area,
                caches: Mutex::new(Vec::new()),
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

    /// Whether a helper that runs the repository's own code (a language
    /// server loading its config and build scripts, a formatter) is held
    /// by this sandbox: it is on, and this system can enforce it. Where
    /// not, such a helper runs only for a trusted project.
    pub fn holds_helpers(&self) -> bool {
        self.mode() != SandboxMode::Off && Support::detect().enforces_files()
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
        self.policy_in(workspace, layer().unwrap_or(Layer::Kernel))
    }

    /// The same, enforced by `layer` (tests run both layers).
    pub fn policy_in(&self, workspace: &Path, layer: Layer) -> Option<Policy> {
        let mode = self.mode();
        if mode == SandboxMode::Off {
            return None;
        }
        let caches = self.caches(workspace);
        let mut place = self.place(workspace, caches.as_ref());
        place.layer = layer;
        Some(Policy::build(mode, &self.inner.config, &place))
    }

    fn place<'a>(&'a self, workspace: &'a Path, caches: Option<&'a Caches>) -> Place<'a> {
        Place {
            workspace,
            home: self.inner.home.as_deref(),
            account_home: self.inner.account_home.as_deref(),
            private_dirs: &self.inner.private_dirs,
            caches,
            layer: layer().unwrap_or(Layer::Kernel),
        }
    }

    /// Every workspace a sandboxed session on this machine has used (as
    /// far as cairn has kept count): places its commands could write.
    pub fn workspaces_used(&self) -> Vec<PathBuf> {
        (self.inner.cache_area.as_deref())
            .map(caches::workspaces_used)
            .unwrap_or_default()
    }

    /// The private caches and session directory for `workspace`, made on
    /// first use; `None` when there is nowhere to put them.
    fn caches(&self, workspace: &Path) -> Option<Caches> {
        let area = self.inner.cache_area.as_ref()?;
        let mut made = self.inner.caches.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = made.iter().find(|(w, _)| w == workspace) {
            return Some(c.clone());
        }
        let created = Caches::create(area, workspace, self.inner.home.as_deref());
        match created {
            Ok(c) => {
                made.push((workspace.to_path_buf(), c.clone()));
                caches::note_workspace(area, workspace);
                Some(c)
            }
            Err(e) => {
                tracing::warn!("no private caches for commands in {}: {e}", area.display());
                None
            }
        }
    }

    /// A directory cairn and the commands in `workspace` both see at the
    /// same path and may write: the session's own temporary directory
    /// (under bubblewrap `/tmp` is private), else the system's.
    pub fn shared_temp_dir(&self, workspace: &Path) -> PathBuf {
        match self.mode() {
            SandboxMode::Off => std::env::temp_dir(),
            _ => self
                .caches(workspace)
                .map_or_else(std::env::temp_dir, |c| c.tmp),
        }
    }

    /// What commands may not read in `workspace` (the home's secrets,
    /// cairn's own directories, `deny_read`), whatever the mode: cairn
    /// itself keeps these from the model too (`@path` mentions).
    pub fn unreadable(&self, workspace: &Path) -> Vec<PathBuf> {
        Policy::build(
            SandboxMode::WorkspaceWrite,
            &self.inner.config,
            &self.place(workspace, None),
        )
        .deny_read
    }

    /// Each class of escape, held here or not, and how.
    pub fn holdings(&self) -> Vec<Holding> {
        let support = Support::detect();
        let layer = if self.mode() == SandboxMode::Off || !support.enforces_files() {
            None
        } else {
            layer()
        };
        let sockets_named = !self.inner.config.unix_sockets.is_empty();
        classes::assess(layer, support, sockets_named)
    }

    pub fn facts(&self) -> Facts {
        if self.mode() == SandboxMode::Off || !Support::detect().enforces_files() {
            return Facts::NONE;
        }
        Facts {
            enforced: true,
            network: self.inner.config.network(),
            workspace_writable: self.mode() == SandboxMode::WorkspaceWrite,
            whole: classes::whole(&self.holdings()),
        }
    }

    /// One line for the status bar and the tool pane.
    pub fn label(&self) -> String {
        match self.mode() {
            SandboxMode::Off => "sandbox off".into(),
            mode if Support::detect().enforces_files() => format!(
                "sandbox: {}, network {}{}",
                mode.as_str(),
                network_word(self.inner.config.network(), Support::detect()),
                if self.facts().whole { "" } else { " (partial)" }
            ),
            _ => "sandbox not enforced".into(),
        }
    }
}

/// The layer commands run under on this machine: bubblewrap when it works
/// here, else the kernel's Landlock and seccomp; `None` where neither.
pub fn layer() -> Option<Layer> {
    #[cfg(target_os = "linux")]
    {
        if bwrap::available().is_some() {
            return Some(Layer::Namespace);
        }
        if Support::detect().landlock_abi > 0 {
            return Some(Layer::Kernel);
        }
    }
    None
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

/// Words for a dialog that grants the network to a command, `policy` the
/// one it will run under (the grant added): what its network will not
/// reach (empty where it is the host's own).
pub fn network_grant_words(policy: Option<&Policy>) -> &'static str {
    #[cfg(target_os = "linux")]
    if policy.and_then(netstack::private_for).is_some() {
        // Short: a dialog gives it one line.
        return " (not 127.0.0.1)";
    }
    let _ = policy;
    ""
}

/// Whether `program` names something that exists: a path, or a name found
/// on `PATH`.
pub fn resolves(program: &std::ffi::OsStr) -> bool {
    use std::ffi::OsStr;
    let path = Path::new(program);
    if path.components().count() > 1 {
        return path.exists();
    }
    own_path::for_commands()
        .map(OsStr::to_os_string)
        .or_else(|| std::env::var_os("PATH"))
        .is_some_and(|dirs| std::env::split_paths(&dirs).any(|dir| dir.join(program).is_file()))
}

/// Set once any process cairn starts runs without bubblewrap's read-only
/// binds (the sandbox off, a run approved without it, the kernel layer):
/// from then on the census can no longer tell a command's change to a
/// control file from the person's (`census::held_read_only`).
static UNBOUND_RAN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn note_unbound() {
    UNBOUND_RAN.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether a process under `policy` may write anywhere in its workspace.
pub(crate) fn writes_workspace(policy: &Policy) -> bool {
    policy.mode != crate::config::SandboxMode::ReadOnly
        || (policy.writable.iter())
            .any(|w| w.starts_with(&policy.workspace) || policy.workspace.starts_with(w))
}

/// Whether every process cairn started so far ran under bubblewrap's
/// read-only binds (and bubblewrap works here).
pub fn binds_held() -> bool {
    !UNBOUND_RAN.load(std::sync::atomic::Ordering::SeqCst) && layer() == Some(Layer::Namespace)
}

/// Builds the command that runs `program` under `policy` (unconfined when
/// `None`, or where this machine cannot confine it). Everything that can
/// fail is done here, in cairn's process, before the child exists.
pub fn command(
    program: &str,
    policy: Option<&Policy>,
) -> Result<tokio::process::Command, SandboxError> {
    std_command(program.as_ref(), policy).map(tokio::process::Command::from)
}

/// The same as a blocking `std` command (`cairn sandbox -- …`).
pub fn std_command(
    program: &std::ffi::OsStr,
    policy: Option<&Policy>,
) -> Result<std::process::Command, SandboxError> {
    let Some(policy) = policy else {
        note_unbound();
        return Ok(std_new(program));
    };
    let mut cmd = confine(program, policy)?;
    for name in env::withheld(&policy.unix_sockets) {
        cmd.env_remove(name);
    }
    for (name, value) in policy.env() {
        cmd.env(name, value);
    }
    Ok(cmd)
}

#[cfg(target_os = "linux")]
fn confine(
    program: &std::ffi::OsStr,
    policy: &Policy,
) -> Result<std::process::Command, SandboxError> {
    if !Support::detect().enforces_files() {
        note_unbound();
        return Ok(std_new(program));
    }
    match (policy.layer, bwrap::available()) {
        (Layer::Namespace, Some(bwrap)) => confine_with(bwrap, program, policy),
        (Layer::Namespace, None) => Err(SandboxError::Build(
            "bubblewrap is not available for this policy".into(),
        )),
        (Layer::Kernel, _) => {
            // Landlock cannot hold a folder of a writable workspace
            // read-only; a process that cannot write in the workspace at
            // all (cairn's own read-only `git config` calls) changes
            // nothing the census must tell from the person's edits.
            if writes_workspace(policy) {
                note_unbound();
            }
            let mut cmd = std_new(program);
            linux::install(&mut cmd, linux::prepare(policy)?);
            Ok(cmd)
        }
    }
}

/// `program` under `policy` through the bubblewrap at `bwrap`.
#[cfg(target_os = "linux")]
fn confine_with(
    bwrap: &Path,
    program: &std::ffi::OsStr,
    policy: &Policy,
) -> Result<std::process::Command, SandboxError> {
    bwrap_command(bwrap, program, policy, netstack::private_for(policy))
}

/// `program` under `policy` through `bwrap`, its granted network the
/// command's own through the launcher and `slirp` when that is given.
#[cfg(target_os = "linux")]
fn bwrap_command(
    bwrap: &Path,
    program: &std::ffi::OsStr,
    policy: &Policy,
    slirp: Option<&Path>,
) -> Result<std::process::Command, SandboxError> {
    let mut prepared = linux::prepare(policy)?;
    let launcher = slirp.and_then(|s| netstack::launcher(s, bwrap));
    let (args, bind_fds) = bwrap::args_with_fds(policy, launcher.is_some()).map_err(|e| {
        SandboxError::Build(format!("a path to bind inside the workspace changed: {e}"))
    })?;
    let mut cmd = launcher.unwrap_or_else(|| std_new(bwrap));
    cmd.args(args);
    let seccomp = prepared.filter_fds();
    prepared.keep_open(bind_fds);
    for fd in seccomp {
        cmd.arg("--add-seccomp-fd").arg(fd.to_string());
    }
    cmd.arg("--").arg(program);
    linux::install(&mut cmd, prepared);
    Ok(cmd)
}

#[cfg(target_os = "macos")]
fn confine(
    program: &std::ffi::OsStr,
    policy: &Policy,
) -> Result<std::process::Command, SandboxError> {
    note_unbound();
    let mut cmd = std_new(seatbelt::SANDBOX_EXEC);
    cmd.arg("-p")
        .arg(seatbelt::profile(policy))
        .arg("--")
        .arg(program);
    Ok(cmd)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn confine(
    program: &std::ffi::OsStr,
    _policy: &Policy,
) -> Result<std::process::Command, SandboxError> {
    note_unbound();
    Ok(std_new(program))
}

/// Marks every descriptor cairn was started with, past stdin, stdout and
/// stderr, close-on-exec: a launcher that leaks one (a socket to an
/// ssh-agent, the terminal) must not hand it to every command. Call it
/// first thing in `main`.
pub fn seal_inherited_descriptors() {
    #[cfg(target_os = "linux")]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: sets a flag on descriptors of this process only.
        let done =
            unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) }
                == 0;
        if !done {
            // Kernels before 5.11: one at a time.
            for fd in 3..1024 {
                // SAFETY: as above; an unused number just fails.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
        }
    }
}

/// A new command that dies with cairn; its parent-death hook is
/// registered first, so it runs before any confinement.
fn std_new(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    parent_death::die_with_parent(&mut cmd);
    cmd
}

#[cfg(all(test, target_os = "linux"))]
pub(crate) mod tests;
