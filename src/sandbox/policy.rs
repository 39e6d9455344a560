//! The policy a command runs under, and what an approval adds for one run.

use std::path::{Path, PathBuf};

use super::caches::Caches;
use crate::config::{SandboxConfig, SandboxMode};

pub use super::home::SECRETS as DEFAULT_DENY_READ;

/// Devices every program expects to use. `/dev/tty` and the terminals are
/// not among them: commands have no terminal.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/shm",
    "/dev/random",
    "/dev/urandom",
];

/// Inside the workspace, read-only to commands: what the person's own git
/// and cairn run or obey later; [`AGENT_CONTROL`] is read-only too. The
/// rest of `.claude/` stays writable: hooks people publish keep their logs
/// there.
pub const READ_ONLY_IN_WORKSPACE: &[&str] = &[
    ".git/config",
    ".git/hooks",
    ".git/info",
    ".git/commondir",
    // A linked worktree's own `commondir` and config live here.
    ".git/worktrees",
    // Old-style remotes: a file here adds a remote whose URL the file
    // names (`ext::sh -c …` runs where the person allows `ext`).
    ".git/remotes",
    ".git/branches",
    ".cairn",
];

pub use super::control::AGENT_CONTROL;

/// How a policy is enforced on Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Layer {
    /// bubblewrap: a private mount, PID, IPC and (network off) network
    /// namespace, with seccomp.
    Namespace,
    /// Landlock and seccomp in the command's own process.
    Kernel,
}

/// Where a policy applies: the places it is built from.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub workspace: &'a Path,
    pub home: Option<&'a Path>,
    /// The account's own home when `HOME` names another folder: hidden
    /// as `home` is, with the same allow-list.
    pub account_home: Option<&'a Path>,
    /// cairn's own config, data, state and cache directories.
    pub private_dirs: &'a [PathBuf],
    pub caches: Option<&'a Caches>,
    pub layer: Layer,
}

/// Serialisable so the launcher behind an editor's terminal
/// (`tools::shell::launch`) rebuilds exactly this policy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Policy {
    pub mode: SandboxMode,
    pub workspace: PathBuf,
    /// The workspace is neither the home directory nor above it; when it
    /// is, commands may neither read nor write it.
    pub workspace_usable: bool,
    /// Hidden from commands but for `read` (canonical): `HOME`, and the
    /// account's own home when that is another folder.
    pub homes: Vec<PathBuf>,
    /// Where commands may write (and read), existing paths only.
    pub writable: Vec<PathBuf>,
    /// Readable under the hidden home: the allow-list and `[sandbox] read`.
    pub read: Vec<PathBuf>,
    /// What commands may not read, existing paths only.
    pub deny_read: Vec<PathBuf>,
    /// Inside the workspace, readable but not writable.
    pub read_only: Vec<PathBuf>,
    /// Single files readable although a denied folder holds them (a hook's
    /// own transcript among cairn's private ones).
    pub reveal: Vec<PathBuf>,
    /// Unix sockets commands may connect to (`[sandbox] unix_sockets`).
    pub unix_sockets: Vec<PathBuf>,
    /// (copy, real): a configuration file commands read as a copy without
    /// its credentials (`home::CONFIG_WITH_SECRETS`); the real one is in
    /// `deny_read`.
    pub redacted: Vec<(PathBuf, PathBuf)>,
    pub caches: Option<Caches>,
    pub network: bool,
    /// A granted network also reaches this machine's loopback services
    /// (`[sandbox] host_loopback`); otherwise, where slirp4netns works, it
    /// is the command's own (`netstack`).
    #[serde(default)]
    pub host_loopback: bool,
    pub layer: Layer,
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

/// Like [`push_existing`], for a path inside the workspace that commands
/// could have made a link: only where it really lies inside the
/// workspace. A link out of it (`.cairn -> ../..`) must never become a
/// bind of what it points at; the place it points at keeps its own rule.
fn push_inside(list: &mut Vec<PathBuf>, path: PathBuf, workspace: &Path) {
    if let Ok(real) = std::fs::canonicalize(&path)
        && real.starts_with(workspace)
        && !list.contains(&real)
    {
        list.push(real);
    }
}

impl Policy {
    pub fn build(mode: SandboxMode, config: &SandboxConfig, at: &Place<'_>) -> Policy {
        let workspace = std::fs::canonicalize(at.workspace).unwrap_or(at.workspace.into());
        // Each home the same way: `HOME` first, then the account's own
        // when it is another folder.
        let real = |h: &Path| std::fs::canonicalize(h).ok();
        let home = at.home.and_then(real);
        let account_home = at
            .account_home
            .filter(|a| real(a).is_some() && real(a) != home);
        let given: Vec<&Path> = at.home.iter().chain(&account_home).copied().collect();
        let homes: Vec<PathBuf> = given.iter().filter_map(|h| real(h)).collect();
        let workspace_usable = homes.iter().all(|h| !h.starts_with(&workspace));
        let mut writable = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            if workspace_usable {
                push_existing(&mut writable, workspace.clone());
            }
            for extra in &config.writable {
                if let Some(p) = expand(extra, at.home, &workspace) {
                    push_existing(&mut writable, p);
                }
            }
        }
        if at.layer == Layer::Kernel {
            push_existing(&mut writable, std::env::temp_dir());
        }
        push_existing(&mut writable, PathBuf::from("/tmp"));
        for device in DEVICES {
            push_existing(&mut writable, PathBuf::from(device));
        }
        if let Some(c) = at.caches {
            push_existing(&mut writable, c.dir.clone());
            // The session's temporary folder, beside the project's caches.
            push_existing(&mut writable, c.tmp.clone());
        }
        let mut read = Vec::new();
        for h in &given {
            for allowed in super::home::ALLOW {
                push_existing(&mut read, h.join(allowed));
            }
        }
        for extra in &config.read {
            if let Some(p) = expand(extra, at.home, &workspace) {
                push_existing(&mut read, p);
            }
        }
        if workspace_usable {
            push_existing(&mut read, workspace.clone());
        }
        let mut deny_read = Vec::new();
        for h in &given {
            for secret in DEFAULT_DENY_READ {
                push_existing(&mut deny_read, h.join(secret));
            }
        }
        // The same secrets where a variable puts them, outside home too,
        // and what any variable named like a secret points to; never a
        // folder that holds the workspace or a home folder (hiding it
        // would hide them).
        let (placed, placed_configs) = super::home::placed_by_env(|k| std::env::var(k).ok());
        let named = super::home::named_by_secret_variables(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        );
        let holds_ours =
            |p: &Path| workspace.starts_with(p) || given.iter().any(|h| h.starts_with(p));
        for secret in placed.into_iter().chain(named) {
            if !holds_ours(&secret) {
                push_existing(&mut deny_read, secret);
            }
        }
        for dir in at.private_dirs {
            push_existing(&mut deny_read, dir.clone());
        }
        for extra in &config.deny_read {
            if let Some(p) = expand(extra, at.home, &workspace) {
                push_existing(&mut deny_read, p);
            }
        }
        let redacted = redacted_configs_into(
            given.iter().copied(),
            &placed_configs,
            at.caches,
            &mut deny_read,
        );
        // A denied path inside the workspace stays denied; a writable root
        // inside a denied one is dropped.
        writable.retain(|w| !deny_read.iter().any(|d| w.starts_with(d)));
        let mut read_only = Vec::new();
        if workspace_usable {
            make_bind_points(&workspace);
            // A linked worktree's `.git` is a file naming its git folder:
            // rewritten, it would send the person's git anywhere.
            let gitfile = workspace.join(".git");
            if std::fs::symlink_metadata(&gitfile).is_ok_and(|m| m.is_file()) {
                push_inside(&mut read_only, gitfile, &workspace);
            }
            for inside in READ_ONLY_IN_WORKSPACE.iter().chain(AGENT_CONTROL) {
                push_inside(&mut read_only, workspace.join(inside), &workspace);
            }
            read_only.extend(submodule_git_dirs(&workspace));
            // What the repository's config includes from the workspace is
            // config too (`[include] path = ../.gitconfig`).
            for rel in super::gitstate::included_configs(&workspace) {
                push_inside(&mut read_only, workspace.join(rel), &workspace);
            }
            // Hooks folders `core.hooksPath` names in the workspace.
            for rel in super::gitstate::hooks_dirs(&workspace) {
                push_inside(&mut read_only, workspace.join(rel), &workspace);
            }
            // The same control files in subfolders, as the census last
            // found them (`nested`): a walk per command would cost too much.
            for path in super::nested::published(&workspace) {
                push_inside(&mut read_only, path, &workspace);
            }
        }
        let unix_sockets = config
            .unix_sockets
            .iter()
            .filter_map(|s| expand(s, at.home, &workspace))
            .collect();
        Policy {
            mode,
            workspace,
            workspace_usable,
            homes,
            writable,
            read,
            deny_read,
            read_only,
            reveal: Vec::new(),
            unix_sockets,
            redacted,
            caches: at.caches.cloned(),
            network: config.network(),
            host_loopback: config.host_loopback(),
            layer: at.layer,
        }
    }

    /// A policy of just these parts, in the kernel layer (tests).
    #[cfg(test)]
    pub fn bare(
        workspace: PathBuf,
        writable: Vec<PathBuf>,
        deny_read: Vec<PathBuf>,
        network: bool,
    ) -> Policy {
        Policy {
            mode: SandboxMode::WorkspaceWrite,
            workspace,
            workspace_usable: true,
            homes: Vec::new(),
            writable,
            read: Vec::new(),
            deny_read,
            read_only: Vec::new(),
            reveal: Vec::new(),
            unix_sockets: Vec::new(),
            redacted: Vec::new(),
            caches: None,
            network,
            host_loopback: false,
            layer: Layer::Kernel,
        }
    }

    /// The variables commands get: the private caches and `TMPDIR`.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        let Some(c) = &self.caches else {
            return Vec::new();
        };
        let mut env = c.env();
        let tmp = match self.layer {
            Layer::Namespace => PathBuf::from("/tmp"),
            Layer::Kernel => c.tmp.clone(),
        };
        env.push(("TMPDIR", tmp));
        env
    }

    /// This policy, also reading `extra` (existing paths): what lies in a
    /// denied folder stays denied — a wide entry such as `~/.config` never
    /// opens cairn's own folders or the credential list — but for a single
    /// file, which is revealed alone.
    pub fn reading(mut self, extra: &[PathBuf]) -> Policy {
        for path in extra.iter().filter(|p| p.exists()) {
            let denied = self.deny_read.iter().any(|d| path.starts_with(d));
            if !denied {
                push_existing(&mut self.read, path.clone());
            } else if path.is_file() && !self.reveal.contains(path) {
                self.reveal.push(path.clone());
            }
        }
        self
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

impl Policy {
    /// The folders beside the workspace a contained command may write in
    /// which another project may lie: `[sandbox] writable` folders, a
    /// run's granted ones, and, under the kernel's layer (where they are
    /// not private), the shared temporary folders. Not devices, nor
    /// cairn's own cache area.
    pub fn writable_elsewhere(&self) -> Vec<PathBuf> {
        let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| "/tmp".into());
        (self.writable.iter())
            .filter(|w| w.is_absolute() && !w.starts_with(&self.workspace))
            .filter(|w| !w.starts_with("/dev"))
            .filter(|w| !w.ancestors().any(|a| a.ends_with(super::CACHE_AREA)))
            .filter(|w| {
                self.layer == Layer::Kernel || !(w.starts_with(&tmp) || w.starts_with("/tmp"))
            })
            .cloned()
            .collect()
    }
}

fn is_default_writable(path: &Path) -> bool {
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| "/tmp".into());
    path.starts_with(&tmp)
        || path.starts_with("/tmp")
        || path.starts_with("/dev")
        || path.ancestors().any(|a| a.ends_with(super::CACHE_AREA))
}

/// Creates `.git/hooks` and `.git/info` when a repository lacks them (as
/// `git init` would have), so that they are bound read-only: a bind needs
/// something to bind over, and a missing folder could be created with a
/// hook in it. Only in a real `.git` folder of the workspace itself.
/// For each of the person's configuration files that holds a credential:
/// the real file is denied, and a copy without those lines is written
/// where commands cannot write (`<cache area>/.redacted`, beside the
/// projects' folders) for bubblewrap to show in its place.
fn redacted_configs_into<'a>(
    homes: impl Iterator<Item = &'a Path>,
    placed: &[PathBuf],
    caches: Option<&super::caches::Caches>,
    deny_read: &mut Vec<PathBuf>,
) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let from_home = homes.flat_map(|home| {
        (super::home::CONFIG_WITH_SECRETS.iter())
            .map(|rel| home.join(rel))
            .chain(super::gitstate::persons_configs(home))
    });
    for file in from_home.chain(placed.iter().cloned()) {
        if !files.contains(&file) {
            files.push(file);
        }
    }
    for real in files {
        // The person's own file, read through a link (dotfiles managers
        // link it): commands cannot write the home folder.
        let mut bytes = Vec::new();
        let opened = {
            use std::os::unix::fs::OpenOptionsExt;
            // Non-blocking: a FIFO there never stalls cairn.
            (std::fs::OpenOptions::new().read(true))
                .custom_flags(libc::O_NONBLOCK)
                .open(&real)
        };
        if let Ok(f) = opened
            && f.metadata().is_ok_and(|m| m.is_file())
        {
            use std::io::Read;
            let _ = f.take(1 << 20).read_to_end(&mut bytes);
        }
        let Some(clean) = super::home::redact(&String::from_utf8_lossy(&bytes)) else {
            continue;
        };
        push_existing(deny_read, real.clone());
        if let Ok(target) = std::fs::canonicalize(&real) {
            push_existing(deny_read, target);
        }
        let Some(area) = caches.and_then(|c| c.dir.parent()) else {
            continue;
        };
        let name = format!(
            "{:016x}",
            super::census_record::fnv(real.as_os_str().as_encoded_bytes())
        );
        let copy = area.join(".redacted").join(name);
        // Written when it differs: a policy is built for every command.
        let same = std::fs::read(&copy).is_ok_and(|now| now == clean.as_bytes());
        let written = if same {
            Ok(())
        } else {
            std::fs::create_dir_all(area.join(".redacted"))
                .and_then(|_| crate::private::write(&copy, clean.as_bytes()))
        };
        if written.is_ok() {
            out.push((copy, real));
        }
    }
    out
}

/// Whether every folder above `rel` (workspace-relative) is one the
/// sandbox binds in place so it cannot be renamed away: a dot-folder
/// (`.claude`, `.vscode`) or anything inside `.git`. Ordinary folders are
/// not bound (people delete and rename them), so a file below one is held
/// by its own bind only as long as nobody renames the folder.
pub(crate) fn pinnable_chain(rel: &Path) -> bool {
    let folders: Vec<_> = rel
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .collect();
    let in_git = folders.first().is_some_and(|c| c.as_os_str() == ".git");
    in_git
        || folders
            .iter()
            .all(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
}

pub(crate) fn make_bind_points(workspace: &Path) {
    let git = workspace.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        return;
    }
    for dir in ["hooks", "info"] {
        let path = git.join(dir);
        if std::fs::symlink_metadata(&path).is_err() {
            let _ = std::fs::create_dir(&path);
        }
    }
}

/// The config, hooks, info and commondir of each submodule under
/// `.git/modules`.
fn submodule_git_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in submodule_dirs(workspace) {
        for inside in ["config", "hooks", "info", "commondir", "config.worktree"] {
            push_inside(&mut out, dir.join(inside), workspace);
        }
    }
    out
}

/// The git folders of the submodules under `.git/modules` (nested too),
/// not through links.
pub(crate) fn submodule_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![workspace.join(".git/modules")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if path.join("HEAD").is_file() {
                out.push(path.clone());
                stack.push(path.join("modules"));
            } else {
                stack.push(path);
            }
        }
    }
    out
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
            ".config/git",
            ".mozilla",
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
        std::fs::write(h.join(".cargo/credentials.toml"), "token").unwrap();
        std::fs::create_dir_all(h.join("project/.git/hooks")).unwrap();
        std::fs::write(h.join("project/.git/config"), "[core]\n").unwrap();
        let private = [h.join("cairn-data")];
        fn place<'a>(ws: &'a Path, h: &'a Path, private: &'a [PathBuf]) -> Place<'a> {
            Place {
                workspace: ws,
                home: Some(h),
                account_home: None,
                private_dirs: private,
                caches: None,
                layer: Layer::Kernel,
            }
        }
        let project = h.join("project");
        let p = Policy::build(
            SandboxMode::WorkspaceWrite,
            &config,
            &place(&project, &h, &private),
        );
        for d in [
            ".ssh",
            ".aws",
            ".netrc",
            "cairn-data",
            "project/private",
            ".cargo/credentials.toml",
        ] {
            assert!(p.deny_read.contains(&h.join(d)), "{d}: {:?}", p.deny_read);
        }
        assert!(!p.deny_read.iter().any(|d| d.ends_with("missing")));
        assert!(p.writable.contains(&h.join("project")));
        assert!(p.writable.contains(&h.join("extra")));
        // The person's caches are not writable; home is hidden but for
        // the allow-list; git's and cairn's own files are read-only.
        assert!(!p.writable.iter().any(|w| w.starts_with(h.join(".cargo"))));
        assert_eq!(p.homes, std::slice::from_ref(&h));
        assert!(p.read.contains(&h.join(".cargo")) && p.read.contains(&h.join(".config/git")));
        assert!(!p.read.contains(&h.join(".mozilla")));
        assert_eq!(
            p.read_only,
            [
                h.join("project/.git/config"),
                h.join("project/.git/hooks"),
                h.join("project/.git/info")
            ]
        );
        assert!(p.workspace_usable);
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
            &place(&project, &h, &private),
        );
        assert!(!ro.writable.contains(&h.join("project")));
        assert!(!ro.writable.contains(&h.join("extra")));
        // Home, or above it, is never a workspace commands may use.
        for above in [h.as_path(), h.parent().unwrap()] {
            let p = Policy::build(
                SandboxMode::WorkspaceWrite,
                &config,
                &place(above, &h, &private),
            );
            assert!(!p.workspace_usable, "{}", above.display());
            assert!(
                !p.writable.iter().any(|w| h.starts_with(w)),
                "{:?}",
                p.writable
            );
            assert!(!p.read.iter().any(|r| h.starts_with(r)), "{:?}", p.read);
            assert!(p.read_only.is_empty());
        }
    }

    #[test]
    fn a_wide_read_keeps_denied_folders_denied_but_reveals_one_file() {
        let d = tempfile::tempdir().unwrap();
        let h = std::fs::canonicalize(d.path()).unwrap();
        for f in [
            ".config/cairn/config.toml",
            ".config/tool/x",
            ".local/t/own.jsonl",
        ] {
            std::fs::create_dir_all(h.join(f).parent().unwrap()).unwrap();
            std::fs::write(h.join(f), "x").unwrap();
        }
        let mut p = Policy::bare(h.join("ws"), Vec::new(), Vec::new(), false);
        p.deny_read = vec![h.join(".config/cairn"), h.join(".local/t")];
        let p = p.reading(&[
            h.join(".config"),
            h.join(".config/cairn"),
            h.join(".local/t/own.jsonl"),
        ]);
        assert_eq!(p.read, [h.join(".config")]);
        assert_eq!(p.reveal, [h.join(".local/t/own.jsonl")]);
        assert_eq!(p.deny_read.len(), 2);
    }

    /// `HOME` names one folder and the account's own record another
    /// (`sudo -E`, a CI container): both are hidden, each with the same
    /// allow-list and secrets, and a workspace above either is unusable.
    #[test]
    fn the_accounts_own_home_is_hidden_as_home_is() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        let (env_home, own) = (d.join("ci-home"), d.join("root"));
        for sub in [".ssh", ".cargo", ".mozilla"] {
            std::fs::create_dir_all(own.join(sub)).unwrap();
        }
        std::fs::create_dir_all(env_home.join("ws")).unwrap();
        std::fs::write(own.join(".netrc"), "machine x").unwrap();
        let build = |ws: &Path| {
            Policy::build(
                SandboxMode::WorkspaceWrite,
                &SandboxConfig::default(),
                &Place {
                    workspace: ws,
                    home: Some(&env_home),
                    account_home: Some(&own),
                    private_dirs: &[],
                    caches: None,
                    layer: Layer::Kernel,
                },
            )
        };
        let p = build(&env_home.join("ws"));
        assert_eq!(p.homes, [env_home.clone(), own.clone()]);
        assert!(p.read.contains(&own.join(".cargo")), "{:?}", p.read);
        assert!(!p.read.contains(&own.join(".mozilla")));
        assert!(p.deny_read.contains(&own.join(".ssh")));
        assert!(p.deny_read.contains(&own.join(".netrc")));
        assert!(p.workspace_usable);
        assert!(!build(&d).workspace_usable);
    }

    #[test]
    fn a_grant_adds_the_network_and_the_nearest_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        let ws = d.join("ws");
        let place = Place {
            workspace: &ws,
            home: None,
            account_home: None,
            private_dirs: &[],
            caches: None,
            layer: Layer::Kernel,
        };
        let p = Policy::build(
            SandboxMode::WorkspaceWrite,
            &SandboxConfig::default(),
            &place,
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
