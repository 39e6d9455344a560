//! The namespace layer: bubblewrap (`bwrap`) gives each command a private
//! mount namespace built from the policy — the system read-only, the home
//! directory an empty tmpfs holding only the allow-list (read-only), the
//! workspace read-write but for `.git/config`, `.git/hooks`, `.git/info`
//! and `.cairn`, a private `/tmp`, a fresh `/dev` without the person's
//! terminals, no `/run/user` — and its own PID, IPC, UTS and (network off)
//! network namespaces, a new session, and death with its parent.
//!
//! `bwrap` is looked for on `PATH` and tried once per process with the same
//! seccomp filters commands get; `CAIRN_SANDBOX_NO_BWRAP=1` skips it (for
//! tests of the kernel layer, which is what machines without bubblewrap or
//! without user namespaces get).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use super::policy::Policy;

/// Set to `1` to act as if bubblewrap were not installed.
pub const NO_BWRAP_VAR: &str = "CAIRN_SANDBOX_NO_BWRAP";

/// The `bwrap` program, when it is installed and works here.
pub fn available() -> Option<&'static Path> {
    static CACHE: OnceLock<Option<PathBuf>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            if std::env::var_os(NO_BWRAP_VAR).is_some_and(|v| v == "1") {
                return None;
            }
            let program = find_on_path("bwrap")?;
            works(&program).then_some(program)
        })
        .as_deref()
}

/// Why bubblewrap is not used, in words; `None` when it is.
pub fn why_not() -> Option<String> {
    if available().is_some() {
        return None;
    }
    if std::env::var_os(NO_BWRAP_VAR).is_some_and(|v| v == "1") {
        return Some(format!("{NO_BWRAP_VAR}=1 is set"));
    }
    Some(match find_on_path("bwrap") {
        None => "bubblewrap (`bwrap`) is not installed".into(),
        Some(p) => format!(
            "{} cannot create namespaces here (user namespaces disabled or restricted)",
            p.display()
        ),
    })
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn works(program: &Path) -> bool {
    // The same set-up and filters a command gets.
    let probe = probe_policy();
    let Ok(mut cmd) = super::confine_with(program, "true".as_ref(), &probe) else {
        return false;
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.status().is_ok_and(|s| s.success())
}

fn probe_policy() -> Policy {
    let place = super::policy::Place {
        workspace: Path::new("/"),
        home: None,
        private_dirs: &[],
        caches: None,
        layer: super::policy::Layer::Namespace,
    };
    Policy::build(
        crate::config::SandboxMode::ReadOnly,
        &Default::default(),
        &place,
    )
}

const BASE: &[&str] = &[
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
];

/// The arguments that run a command under `policy`; the seccomp
/// descriptors, `--`, the program and its arguments follow them.
pub fn args(policy: &Policy) -> Vec<OsString> {
    let mut a = Args::default();
    a.flags(BASE);
    if !policy.network {
        a.flags(&["--unshare-net"]);
    }
    a.pair("--ro-bind", Path::new("/"), Path::new("/"));
    a.one("--dev", Path::new("/dev"));
    a.one("--proc", Path::new("/proc"));
    if Path::new("/run/user").is_dir() {
        a.one("--tmpfs", Path::new("/run/user"));
    }
    match &policy.caches {
        Some(c) => a.pair("--bind", &c.tmp, Path::new("/tmp")),
        None => a.one("--tmpfs", Path::new("/tmp")),
    }
    if let Some(home) = &policy.home {
        a.one("--tmpfs", home);
    }
    for path in by_depth(&policy.read) {
        a.pair("--ro-bind", path, path);
    }
    let writable = policy
        .writable
        .iter()
        .filter(|w| !w.starts_with("/dev") && w.as_path() != Path::new("/tmp"))
        .cloned()
        .collect::<Vec<_>>();
    for path in by_depth(&writable) {
        a.pair("--bind", path, path);
    }
    let git = policy.workspace.join(".git");
    // A real folder only: a link (`.git -> ~`) would bind what it points at.
    let git_is_dir = std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir());
    if policy.workspace_usable && writable.contains(&policy.workspace) && git_is_dir {
        // A mount point cannot be renamed away and replaced.
        a.pair("--bind", &git, &git);
    }
    for path in &policy.read_only {
        a.pair("--ro-bind", path, path);
    }
    for denied in policy.deny_read.iter().filter(|d| visible(policy, d)) {
        if denied.is_dir() {
            a.one("--tmpfs", denied);
            a.one("--remount-ro", denied);
        } else {
            a.pair("--ro-bind", Path::new("/dev/null"), denied);
        }
    }
    for socket in &policy.unix_sockets {
        a.pair("--bind-try", socket, socket);
    }
    if let Some(home) = policy
        .home
        .as_ref()
        .filter(|h| !policy.writable.contains(h))
    {
        // Writes to home fail plainly instead of vanishing with the tmpfs.
        a.one("--remount-ro", home);
    }
    a.0
}

/// Whether `path` would be seen at all: outside the hidden home, or in
/// what is bound back into it.
fn visible(policy: &Policy, path: &Path) -> bool {
    let in_home = policy.home.as_ref().is_some_and(|h| path.starts_with(h));
    !in_home
        || policy
            .read
            .iter()
            .chain(&policy.writable)
            .any(|r| path.starts_with(r))
}

/// Shallow paths first, so a deeper bind is not hidden by a later one.
fn by_depth(paths: &[PathBuf]) -> Vec<&PathBuf> {
    let mut sorted: Vec<&PathBuf> = paths.iter().collect();
    sorted.sort_by_key(|p| p.components().count());
    sorted
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }
    fn one(&mut self, flag: &str, path: &Path) {
        self.0.push(flag.into());
        self.0.push(path.into());
    }
    fn pair(&mut self, flag: &str, from: &Path, to: &Path) {
        self.0.push(flag.into());
        self.0.push(from.into());
        self.0.push(to.into());
    }
}
