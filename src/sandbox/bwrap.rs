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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
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

/// On cairn's own `PATH`, which holds no folder a command can write
/// (`own_path`): bwrap runs as the person.
fn find_on_path(name: &str) -> Option<PathBuf> {
    super::own_path::find(name)
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
        account_home: None,
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
    // Run by root, bubblewrap keeps the capabilities: a command could
    // remount the read-only binds writable, or route its packets to the
    // host's loopback through slirp4netns. (Without root it has none.)
    "--cap-drop",
    "ALL",
];

/// The arguments that run a command under `policy`, and the descriptors
/// they name (kept open for bubblewrap); the seccomp descriptors, `--`,
/// the program and its arguments follow them.
///
/// What is bound from inside the workspace (`.git` onto itself, the
/// read-only control files) is opened here first, one component at a time
/// without following a link, and bound by descriptor: a background job
/// that swaps one for a link (`.cairn -> ~/.ssh`) between the policy and
/// bubblewrap's start cannot make it bind what the link points at. A path
/// that became a link or vanished fails the start (nothing runs).
///
/// `private_net`: a granted network is the command's own, which the
/// launcher (`netstack`) connects through slirp4netns: a network
/// namespace either way, and a `resolv.conf` naming slirp4netns's
/// resolver.
pub fn args_with_fds(
    policy: &Policy,
    private_net: bool,
) -> std::io::Result<(Vec<OsString>, Vec<OwnedFd>)> {
    let mut fds = Vec::new();
    let mut a = Args::default();
    build_with(policy, private_net, &mut a, &mut fds, true)?;
    Ok((a.0, fds))
}

/// [`args_with_fds`] without descriptors: every bind by path (the probe,
/// and tests of the arguments).
pub fn args(policy: &Policy) -> Vec<OsString> {
    let mut a = Args::default();
    let mut none = Vec::new();
    // Binding by path cannot fail here.
    let _ = build_with(policy, false, &mut a, &mut none, false);
    a.0
}

fn build_with(
    policy: &Policy,
    private_net: bool,
    a: &mut Args,
    fds: &mut Vec<OwnedFd>,
    by_fd: bool,
) -> std::io::Result<()> {
    a.flags(BASE);
    let private_net = private_net && policy.network;
    if !policy.network || private_net {
        a.flags(&["--unshare-net"]);
    }
    a.pair("--ro-bind", Path::new("/"), Path::new("/"));
    if private_net
        && by_fd
        && let Some(fd) = resolv_conf_fd()?
    {
        a.0.push("--ro-bind-data".into());
        a.0.push(fd.as_raw_fd().to_string().into());
        a.0.push("/etc/resolv.conf".into());
        fds.push(fd);
    }
    a.one("--dev", Path::new("/dev"));
    a.one("--proc", Path::new("/proc"));
    if Path::new("/run/user").is_dir() {
        a.one("--tmpfs", Path::new("/run/user"));
    }
    match &policy.caches {
        Some(c) => a.pair("--bind", &c.tmp, Path::new("/tmp")),
        None => a.one("--tmpfs", Path::new("/tmp")),
    }
    for home in by_depth(&policy.homes) {
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
    let mut inside = |flag: &str, path: &Path, a: &mut Args| -> std::io::Result<()> {
        if !by_fd {
            a.pair(flag, path, path);
            return Ok(());
        }
        let fd = open_without_links(&policy.workspace, path)?;
        a.0.push(format!("{flag}-fd").into());
        a.0.push(fd.as_raw_fd().to_string().into());
        a.0.push(path.into());
        fds.push(fd);
        Ok(())
    };
    if policy.workspace_usable && writable.contains(&policy.workspace) && git_is_dir {
        // A mount point cannot be renamed away and replaced.
        inside("--bind", &git, a)?;
    }
    if policy.workspace_usable && writable.contains(&policy.workspace) {
        // Nor can the folders holding a read-only file: renamed away, with
        // a new folder and its own copy of the file in its place, they
        // would make the bind hold nothing (`.claude/settings.json`,
        // `.git/modules/<name>/config`).
        for folder in holding_folders(policy, &git) {
            inside("--bind", &folder, a)?;
        }
    }
    for path in &policy.read_only {
        inside("--ro-bind", path, a)?;
    }
    for denied in policy.deny_read.iter().filter(|d| visible(policy, d)) {
        if denied.is_dir() {
            a.one("--tmpfs", denied);
            // A file revealed alone, bound before the folder turns read-only.
            for file in policy.reveal.iter().filter(|f| f.starts_with(denied)) {
                a.pair("--ro-bind", file, file);
            }
            a.one("--remount-ro", denied);
        } else {
            a.pair("--ro-bind", Path::new("/dev/null"), denied);
        }
    }
    // A revealed file whose denied folder is not shown at all (nothing
    // wider names it) is bound by itself.
    let shown = |f: &&PathBuf| {
        policy
            .deny_read
            .iter()
            .any(|d| f.starts_with(d) && d.is_dir() && visible(policy, d))
    };
    for file in policy.reveal.iter().filter(|f| !shown(f)) {
        a.pair("--ro-bind", file, file);
    }
    // A configuration file shown without its credentials, over the real
    // one (denied above).
    for (copy, real) in &policy.redacted {
        a.pair("--ro-bind", copy, real);
    }
    for socket in &policy.unix_sockets {
        a.pair("--bind-try", socket, socket);
    }
    for home in (policy.homes.iter()).filter(|h| !policy.writable.contains(h)) {
        // Writes to home fail plainly instead of vanishing with the tmpfs.
        a.one("--remount-ro", home);
    }
    Ok(())
}

/// slirp4netns's resolver, as a private network (`netstack`) sees it.
const RESOLVER: &str = "10.0.2.3";

/// The `resolv.conf` a private network gets: slirp4netns's resolver, and
/// the system's search domains and options.
fn resolv_conf(system: &str) -> String {
    let mut out = format!("nameserver {RESOLVER}\n");
    for line in system.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        if matches!(word, "search" | "domain" | "options") {
            out.push_str(line.trim());
            out.push('\n');
        }
    }
    out
}

/// A memory file holding `resolv_conf` of the system's, for bubblewrap's
/// `--ro-bind-data`; `None` when the system has no `/etc/resolv.conf`
/// (nothing to bind over).
fn resolv_conf_fd() -> std::io::Result<Option<OwnedFd>> {
    let path = Path::new("/etc/resolv.conf");
    if !path.exists() {
        return Ok(None);
    }
    let system = std::fs::read_to_string(path).unwrap_or_default();
    // SAFETY: a static name and a flag; the result is checked.
    let fd = unsafe { libc::memfd_create(c"cairn-resolv".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor this function owns.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    std::io::Write::write_all(&mut file, resolv_conf(&system).as_bytes())?;
    std::io::Seek::rewind(&mut file)?;
    Ok(Some(OwnedFd::from(file)))
}

/// The real folders between the workspace and each read-only path in it
/// whose folders are all dot-folders or inside `.git`, shallowest first,
/// but for the workspace itself and `.git` (bound on its own); a folder
/// that is a link is left out (never bound through).
fn holding_folders(policy: &Policy, git: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in &policy.read_only {
        let Ok(rel) = path.strip_prefix(&policy.workspace) else {
            continue;
        };
        // Ordinary folders (`packages/app`) are left movable: people
        // delete and rename them, and the census counts every change below
        // one (`policy::pinnable_chain`).
        if !super::policy::pinnable_chain(rel) {
            continue;
        }
        let mut at = policy.workspace.clone();
        let parts: Vec<_> = rel.components().collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            at.push(part);
            if at == *git || out.contains(&at) {
                continue;
            }
            if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
                break;
            }
            out.push(at.clone());
        }
    }
    out.sort_by_key(|p| p.components().count());
    out
}

/// `path` (inside `workspace`) opened as a bare reference (`O_PATH`), one
/// component at a time with `O_NOFOLLOW`: an error when any part of it is
/// a link or it is gone.
pub(super) fn open_without_links(workspace: &Path, path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let rel = path.strip_prefix(workspace).map_err(|_| {
        std::io::Error::other(format!("{} is not in the workspace", path.display()))
    })?;
    let open = |at: i32, name: &std::ffi::OsStr| -> std::io::Result<OwnedFd> {
        let c = std::ffi::CString::new(name.as_bytes())
            .map_err(|_| std::io::Error::other("a path with a NUL byte"))?;
        let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid C string and flags; the result is checked.
        let fd = unsafe { libc::openat(at, c.as_ptr(), flags) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor owned from here on.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let mut here = open(libc::AT_FDCWD, workspace.as_os_str())?;
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return Err(std::io::Error::other("an unusual path"));
        };
        here = open(here.as_raw_fd(), name)?;
        if file_type(&here) == Some(libc::S_IFLNK) {
            return Err(std::io::Error::other(format!(
                "{} became a link while the sandbox was being built; nothing was run",
                path.display()
            )));
        }
    }
    Ok(here)
}

/// The file type bits of what `fd` refers to.
pub(super) fn file_type(fd: &OwnedFd) -> Option<libc::mode_t> {
    // SAFETY: fstat on a valid descriptor into a zeroed buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0;
    ok.then_some(st.st_mode & libc::S_IFMT)
}

/// Whether `path` would be seen at all: outside the hidden home, or in
/// what is bound back into it.
fn visible(policy: &Policy, path: &Path) -> bool {
    let in_home = policy.homes.iter().any(|h| path.starts_with(h));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resolver_is_slirps_and_the_search_domains_stay() {
        let system =
            "# managed\nnameserver 127.0.0.53\nsearch corp.example lan\noptions edns0 trust-ad\n";
        assert_eq!(
            resolv_conf(system),
            "nameserver 10.0.2.3\nsearch corp.example lan\noptions edns0 trust-ad\n"
        );
        assert_eq!(resolv_conf(""), "nameserver 10.0.2.3\n");
    }
}
