//! A granted network without this machine's loopback services.
//!
//! A command that may use the network used to share cairn's own network
//! namespace, so it reached every service listening on 127.0.0.1 — a
//! database, a dev server, a local model, the ports an editor or another
//! agent opens — which the network grant was never meant to include.
//! Where `slirp4netns` is installed and works, such a command instead gets
//! a network namespace of its own (bubblewrap's `--unshare-net`) with one
//! interface, fed by slirp4netns in user mode: it reaches the internet (and
//! this machine's other addresses, as the rest of the network does), while
//! the address that leads to the host's loopback is refused
//! (`--disable-host-loopback`) and the namespace's own 127.0.0.1 holds
//! nothing of the person's. Its abstract Unix sockets are its own too. DNS
//! goes through slirp4netns's resolver (a `resolv.conf` naming it is bound
//! over the system's, whose resolver may itself be on loopback).
//!
//! slirp4netns must join the namespace after bubblewrap made it and before
//! the command runs, so the command is started through a small launcher,
//! cairn's own executable with the hidden subcommand [`SUBCOMMAND`]: it
//! starts bubblewrap held at the start (`--block-fd`), learns the
//! namespace's process from `--info-fd`, starts slirp4netns on it, waits
//! until the interface is up, lets bubblewrap go on, and ends with
//! bubblewrap's status. slirp4netns ends when the launcher does
//! (`--exit-fd`), and bubblewrap dies with it (`--die-with-parent`).
//!
//! `[sandbox] host_loopback = true` (the person's own config only) keeps
//! the old sharing; `CAIRN_SANDBOX_NO_SLIRP=1` acts as if slirp4netns were
//! not installed.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

/// The hidden subcommand the launcher runs as.
pub const SUBCOMMAND: &str = "__net";

/// Set to `1` to act as if slirp4netns were not installed.
pub const NO_SLIRP_VAR: &str = "CAIRN_SANDBOX_NO_SLIRP";

/// How long slirp4netns may take to bring the interface up.
const READY_WAIT: Duration = Duration::from_secs(10);

/// How the launcher's failure begins.
const FAILED: &str = "cairn: the command's network could not be set up: ";

/// Exit status of a launcher that could not set the network up.
const SETUP_FAILED: i32 = 125;

/// What a granted network is on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Through slirp4netns: no loopback service of this machine.
    Private(PathBuf),
    /// This machine's own network, its loopback services included; why.
    Shared(String),
}

/// slirp4netns, when it is installed and what it needs is here (decided
/// once per process, on first use).
pub fn available() -> Option<&'static Path> {
    match reach() {
        Reach::Private(p) => Some(p.as_path()),
        Reach::Shared(_) => None,
    }
}

/// slirp4netns, when a command under `policy` gets a network of its own:
/// the network granted, through bubblewrap, the host's loopback not asked
/// for, and slirp4netns working here.
pub fn private_for(policy: &super::Policy) -> Option<&'static Path> {
    let wanted = policy.network && !policy.host_loopback && policy.layer == super::Layer::Namespace;
    wanted.then(available).flatten()
}

/// What a granted network reaches, decided once per process.
pub fn reach() -> &'static Reach {
    static CACHE: OnceLock<Reach> = OnceLock::new();
    CACHE.get_or_init(decide)
}

fn decide() -> Reach {
    if std::env::var_os(NO_SLIRP_VAR).is_some_and(|v| v == "1") {
        return Reach::Shared(format!("{NO_SLIRP_VAR}=1 is set"));
    }
    if cfg!(test) {
        // The unit tests' executable is not cairn: it runs no launcher.
        return Reach::Shared("cairn's own unit tests start no launcher".into());
    }
    if super::bwrap::available().is_none() {
        return Reach::Shared(
            "without bubblewrap a command cannot get a network namespace of its own".into(),
        );
    }
    let Some(slirp) = super::own_path::find("slirp4netns") else {
        return Reach::Shared("slirp4netns is not installed".into());
    };
    // SAFETY: a NUL-terminated static path; nothing is written.
    let tun = unsafe { libc::access(c"/dev/net/tun".as_ptr(), libc::R_OK | libc::W_OK) } == 0;
    if !tun {
        return Reach::Shared(format!(
            "slirp4netns needs /dev/net/tun, which you cannot open here ({})",
            std::io::Error::last_os_error()
        ));
    }
    if super::own_path::own_exe().is_none() {
        return Reach::Shared("cairn cannot find its own executable to start the network".into());
    }
    // No trial run: a launcher that cannot set the network up fails its
    // command with the reason (fail closed), never falls back to the
    // host's network unasked.
    Reach::Private(slirp)
}

/// The command that starts `bwrap` through the launcher; bubblewrap's
/// arguments follow.
pub(crate) fn launcher(slirp: &Path, bwrap: &Path) -> Option<std::process::Command> {
    let exe = super::own_path::own_exe()?;
    let mut cmd = super::std_new(exe);
    cmd.arg(SUBCOMMAND).arg(slirp).arg(bwrap);
    Some(cmd)
}

/// In `main`, before anything else (the descriptors bubblewrap is handed
/// must still be open): when cairn was started as the launcher, runs it
/// and exits with the command's status.
pub fn run_if_launcher() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(SUBCOMMAND)) {
        return;
    }
    let rest: Vec<OsString> = args.collect();
    let code = match rest.as_slice() {
        [slirp, bwrap, bwrap_args @ ..] => launch(Path::new(slirp), Path::new(bwrap), bwrap_args),
        _ => {
            eprintln!("cairn {SUBCOMMAND}: expected SLIRP4NETNS BWRAP [BWRAP-ARGUMENTS…]");
            SETUP_FAILED
        }
    };
    std::process::exit(code);
}

/// A pipe: (read end, write end), both close-on-exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: two fresh descriptors this function owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Lets `fd` be inherited by the next program started.
fn inheritable(fd: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: a flag on a descriptor this process owns.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn launch(slirp: &Path, bwrap: &Path, bwrap_args: &[OsString]) -> i32 {
    match start(slirp, bwrap, bwrap_args) {
        Ok(code) => code,
        Err(why) => {
            eprintln!(
                "{FAILED}{why} (nothing ran; `host_loopback = true` under [sandbox] in your \
                 config gives commands this machine's network instead)"
            );
            SETUP_FAILED
        }
    }
}

/// Waits up to `wait` for `fd` to be readable.
fn readable_within(fd: &OwnedFd, wait: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut poll, 1, ms) > 0 }
}

fn start(slirp: &Path, bwrap: &Path, bwrap_args: &[OsString]) -> Result<i32, String> {
    fn io(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
        move |e| format!("{what}: {e}")
    }
    let (info_r, info_w) = pipe().map_err(io("a pipe"))?;
    let (block_r, block_w) = pipe().map_err(io("a pipe"))?;
    inheritable(&info_w).map_err(io("a pipe"))?;
    inheritable(&block_r).map_err(io("a pipe"))?;
    let mut child = std::process::Command::new(bwrap)
        .arg("--info-fd")
        .arg(info_w.as_raw_fd().to_string())
        .arg("--block-fd")
        .arg(block_r.as_raw_fd().to_string())
        .args(bwrap_args)
        .spawn()
        .map_err(io(&format!("cannot start {}", bwrap.display())))?;
    drop(info_w);
    drop(block_r);
    let Some(pid) = child_pid(info_r) else {
        // bubblewrap stopped before its namespaces existed (it said why).
        return Ok(status_code(child.wait().map_err(io("bubblewrap"))?));
    };
    // A failure kills the namespace's process, still held, and waits for
    // it to be gone before bubblewrap's release (`block_w`) is closed: an
    // end of file there would let it go on and run the command.
    let fail = |child: &mut std::process::Child, why: String| {
        kill_and_wait(pid);
        let _ = child.kill();
        let _ = child.wait();
        Err(why)
    };
    // bubblewrap sets the namespace's loopback up itself: slirp4netns
    // configuring the same namespace meanwhile makes one of them fail.
    if !set_up(pid) {
        return fail(
            &mut child,
            "bubblewrap did not finish setting the sandbox up".into(),
        );
    }
    // The namespace itself, and the user namespace that owns it, held by
    // descriptor: bubblewrap's process moves on into a nested user
    // namespace (its own identity map), from which the network namespace
    // cannot be joined, so "the process's namespaces" would be a race.
    let (netns, owner) = match namespaces(pid) {
        Ok(ns) => ns,
        Err(e) => return fail(&mut child, format!("the command's namespaces: {e}")),
    };
    // Nothing handed to bubblewrap (filters, bound folders) reaches
    // slirp4netns.
    super::seal_inherited_descriptors();
    let (ready_r, ready_w) = match pipe() {
        Ok(p) => p,
        Err(e) => return fail(&mut child, format!("a pipe: {e}")),
    };
    let (exit_r, exit_w) = match pipe() {
        Ok(p) => p,
        Err(e) => return fail(&mut child, format!("a pipe: {e}")),
    };
    let handed = [&ready_w, &exit_r, &netns]
        .into_iter()
        .chain(owner.as_ref())
        .try_for_each(inheritable);
    if let Err(e) = handed {
        return fail(&mut child, format!("a pipe: {e}"));
    }
    let by_fd = |fd: &OwnedFd| format!("/proc/self/fd/{}", fd.as_raw_fd());
    let mut slirp_cmd = std::process::Command::new(slirp);
    match &owner {
        Some(owner) => {
            slirp_cmd.arg(format!("--userns-path={}", by_fd(owner)));
        }
        // In cairn's own user namespace (cairn runs as root), slirp4netns
        // can also shut itself into an empty root; in bubblewrap's it
        // cannot (that needs root's group mapped there).
        None => {
            slirp_cmd.arg("--enable-sandbox");
        }
    }
    let mut net = match slirp_cmd
        .args(["--configure", "--mtu=65520", "--disable-host-loopback"])
        .arg("--enable-seccomp")
        .arg("--ready-fd")
        .arg(ready_w.as_raw_fd().to_string())
        .arg("--exit-fd")
        .arg(exit_r.as_raw_fd().to_string())
        .arg("--netns-type=path")
        .arg(by_fd(&netns))
        .arg("tap0")
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(n) => n,
        Err(e) => return fail(&mut child, format!("cannot start {}: {e}", slirp.display())),
    };
    drop(ready_w);
    drop(exit_r);
    drop(netns);
    drop(owner);
    // Its chatter, kept (the end of it) for a failure, never blocking it.
    let said = net.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 16_384 {
                    kept.drain(..kept.len() - 8_192);
                }
            }
            String::from_utf8_lossy(&kept).into_owned()
        })
    });
    let mut byte = [0u8; 1];
    let ready = readable_within(&ready_r, READY_WAIT)
        && std::fs::File::from(ready_r)
            .read(&mut byte)
            .is_ok_and(|n| n == 1);
    if !ready {
        let _ = net.kill();
        let status = net.wait().ok();
        let words = said.and_then(|t| t.join().ok()).unwrap_or_default();
        let lines: Vec<&str> = (words.lines().map(str::trim))
            .filter(|l| !l.is_empty())
            .collect();
        let last = lines[lines.len().saturating_sub(3)..].join("; ");
        let why = match status {
            Some(s) if !last.is_empty() => format!("slirp4netns ({s}): {last}"),
            Some(s) => format!("slirp4netns did not bring the interface up ({s})"),
            None => "slirp4netns did not bring the interface up".into(),
        };
        return fail(&mut child, why);
    }
    // The interface is up: bubblewrap goes on.
    if let Err(e) = std::fs::File::from(block_w).write_all(b"1") {
        let _ = net.kill();
        let _ = net.wait();
        return fail(&mut child, format!("cannot release bubblewrap: {e}"));
    }
    let status = child.wait().map_err(io("bubblewrap"));
    drop(exit_w);
    let _ = net.wait();
    Ok(status_code(status?))
}

/// The namespace's process, from bubblewrap's `--info-fd` (a JSON object
/// with `child-pid`); `None` when bubblewrap closed it without one.
fn child_pid(info: OwnedFd) -> Option<u32> {
    let mut file = std::fs::File::from(info);
    let mut text = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        text.extend_from_slice(&buf[..n]);
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&text) {
            return value.get("child-pid")?.as_u64()?.try_into().ok();
        }
        if text.len() > 65_536 {
            return None;
        }
    }
}

/// Waits (five seconds at most) until bubblewrap's process `pid` has
/// finished setting the sandbox up: it drops every capability (with
/// `--cap-drop ALL`, also when run by root) just before it waits to be
/// released, after its namespaces, mounts and loopback are done.
fn set_up(pid: u32) -> bool {
    let status = format!("/proc/{pid}/status");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let Ok(text) = std::fs::read_to_string(&status) else {
            return false;
        };
        let dropped = text
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .is_some_and(|v| v.trim().bytes().all(|b| b == b'0'));
        if dropped {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(250));
    }
}

/// Kills `pid` and waits (a second at most) until it has ended.
fn kill_and_wait(pid: u32) {
    // SAFETY: a new descriptor for the process, checked; then a signal.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) } as i32;
    // SAFETY: a signal to a process of this launcher's own tree.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    if pidfd >= 0 {
        // SAFETY: a fresh descriptor this function owns.
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        // Readable once the process has ended.
        readable_within(&pidfd, Duration::from_secs(1));
    }
}

/// The network namespace of `pid`, and the user namespace that owns it
/// when that is not this process's own.
fn namespaces(pid: u32) -> std::io::Result<(OwnedFd, Option<OwnedFd>)> {
    use std::os::unix::fs::MetadataExt;
    // `_IO(0xb7, 0x1)`: the user namespace owning a namespace.
    const NS_GET_USERNS: libc::c_ulong = 0xb701;
    let netns = OwnedFd::from(std::fs::File::open(format!("/proc/{pid}/ns/net"))?);
    // SAFETY: an ioctl on a descriptor this function owns; the result is
    // checked and owned.
    let owner = unsafe { libc::ioctl(netns.as_raw_fd(), NS_GET_USERNS) };
    if owner < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor from the ioctl.
    let owner = unsafe { OwnedFd::from_raw_fd(owner) };
    let ours = std::fs::metadata("/proc/self/ns/user")?;
    let theirs = std::fs::File::from(owner.try_clone()?).metadata()?;
    let same = ours.dev() == theirs.dev() && ours.ino() == theirs.ino();
    Ok((netns, (!same).then_some(owner)))
}

/// The launcher's own exit status for bubblewrap's: its code, or, when a
/// signal ended it, the same signal raised here.
fn status_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return code;
    }
    if let Some(signal) = status.signal() {
        // SAFETY: resets one signal's action and raises it at this process.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        return 128 + signal;
    }
    SETUP_FAILED
}
