//! Landlock and seccomp. [`prepare`] runs in cairn's process and may fail;
//! [`install`] registers a `pre_exec` hook that only makes system calls on
//! data prepared beforehand (see the module comment of `sandbox`).
//!
//! Under bubblewrap nothing is applied here but `no_new_privs`: the
//! seccomp filters go to bubblewrap as files (`--add-seccomp-fd`), which it
//! installs just before it runs the command — its own set-up needs the
//! sockets they refuse — and Landlock is left out, because a Landlock
//! domain forbids the mounts bubblewrap makes; its namespaces confine files. In the kernel layer the hook also gives up the
//! controlling terminal and asks to die with its parent.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::BpfProgram;

use super::policy::{DEVICES, Layer};
use super::readable::cover;
use super::support::Support;
use super::{Policy, SandboxError};

/// What the child applies to itself before `exec`.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    filters: Vec<BpfProgram>,
    /// Under bubblewrap: the filters as files bubblewrap loads last, just
    /// before it runs the command (its own set-up needs sockets).
    filter_fds: Vec<OwnedFd>,
    /// The kernel layer: no controlling terminal, die with the parent.
    detach: bool,
}

impl Prepared {
    /// The descriptors to name in `--add-seccomp-fd`.
    pub fn filter_fds(&self) -> Vec<i32> {
        self.filter_fds.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// Keeps `fds` (bubblewrap's `--bind-fd` sources) open across `exec`
    /// too; they close in cairn when the command is built.
    pub fn keep_open(&mut self, fds: Vec<OwnedFd>) {
        self.filter_fds.extend(fds);
    }
}

/// A sealed-off memory file holding `program` as the kernel reads it.
fn memfd_of(program: &BpfProgram) -> Result<OwnedFd, SandboxError> {
    use std::io::{Seek, Write};
    use std::os::fd::FromRawFd;
    // SAFETY: a static name and a flag; the result is checked.
    let fd = unsafe { libc::memfd_create(c"cairn-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor this function owns.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for op in program {
        bytes.extend_from_slice(&op.code.to_ne_bytes());
        bytes.push(op.jt);
        bytes.push(op.jf);
        bytes.extend_from_slice(&op.k.to_ne_bytes());
    }
    file.write_all(&bytes).map_err(err)?;
    file.rewind().map_err(err)?;
    Ok(OwnedFd::from(file))
}

fn err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Build(e.to_string())
}

fn abi_of(version: u8) -> ABI {
    match version {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

pub fn prepare(policy: &Policy) -> Result<Prepared, SandboxError> {
    let support = Support::detect();
    let kernel = policy.layer == Layer::Kernel;
    let ruleset = if kernel && support.landlock_abi > 0 {
        Some(ruleset(policy, abi_of(support.landlock_abi))?)
    } else {
        None
    };
    let mut filters = if support.seccomp {
        super::seccomp::filters(policy)?
    } else {
        Vec::new()
    };
    let mut filter_fds = Vec::new();
    if !kernel {
        for program in filters.drain(..) {
            filter_fds.push(memfd_of(&program)?);
        }
    }
    Ok(Prepared {
        ruleset,
        filters,
        filter_fds,
        detach: kernel,
    })
}

fn add(
    ruleset: landlock::RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, SandboxError> {
    // A path that vanished since the policy was built is skipped.
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    let file = std::fs::metadata(path).is_ok_and(|m| !m.is_dir());
    let access = if file {
        access & AccessFs::from_file(ABI::V7)
    } else {
        access
    };
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| err(format!("{}: {e}", path.display())))
}

fn ruleset(policy: &Policy, abi: ABI) -> Result<OwnedFd, SandboxError> {
    let mut base = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if !policy.network && abi >= ABI::V4 {
        base = base
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?;
    }
    if abi >= ABI::V6 {
        // No signals to processes outside the sandbox (`kill -9 -1`), no
        // abstract Unix sockets outside it.
        base = base.scope(Scope::Signal).map_err(err)?;
        if policy.unix_sockets.is_empty() {
            base = base.scope(Scope::AbstractUnixSocket).map_err(err)?;
        }
    }
    let mut created = base.create().map_err(err)?;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    // The system: everything but the home directory, the denied paths and
    // /dev, whose terminals stay out of reach.
    let mut hidden: Vec<PathBuf> = policy.deny_read.clone();
    hidden.extend(policy.homes.iter().cloned());
    hidden.push(PathBuf::from("/dev"));
    // A rule holds for everything beneath its path, so the directories on
    // the way to a hidden one (`/` among them) get no rule at all: listing
    // them would list inside home and cairn's own directories too.
    let root = cover(Path::new("/"), &hidden);
    for path in &root.full {
        created = add(created, path, read)?;
    }
    for device in DEVICES {
        created = add(created, Path::new(device), read)?;
    }
    for file in &policy.reveal {
        created = add(created, file, read & !AccessFs::ReadDir)?;
    }
    for allowed in &policy.read {
        let c = cover(allowed, &policy.deny_read);
        for path in c.full {
            created = add(created, &path, read)?;
        }
        for dir in c.list_only {
            created = add(created, &dir, AccessFs::ReadDir.into())?;
        }
    }
    // Directories on the way to a denied path inside a writable root may
    // gain and lose entries, but not have their files read or written, nor
    // moved elsewhere (no Refer), which would expose the denied ones.
    let entries = AccessFs::from_write(abi)
        & !(AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev | AccessFs::Refer);
    for writable in &policy.writable {
        let c = cover(writable, &policy.deny_read);
        for path in c.full {
            created = add(created, &path, all)?;
        }
        for dir in c.list_only {
            created = add(created, &dir, entries | AccessFs::ReadDir)?;
        }
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| err("the kernel gave no Landlock ruleset"))
}

/// Gives up the controlling terminal, if the process has one: afterwards
/// `/dev/tty` cannot be opened, and nothing started later gets it back.
///
/// # Safety
/// Async-signal-safe system calls only.
unsafe fn give_up_terminal() {
    // SAFETY: a static C string and raw system calls.
    unsafe {
        let fd = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if fd >= 0 {
            libc::ioctl(fd, libc::TIOCNOTTY);
            libc::close(fd);
        }
    }
}

/// Registers the hook that confines the child. Nothing in it allocates.
pub fn install(cmd: &mut std::process::Command, prepared: Prepared) {
    let ruleset = prepared.ruleset.map(Arc::new);
    let filters = Arc::new(prepared.filters);
    let filter_fds = Arc::new(prepared.filter_fds);
    let detach = prepared.detach;
    let hook = move || -> std::io::Result<()> {
        // SAFETY: raw system calls on memory and descriptors owned by this
        // closure; no allocation, no lock.
        unsafe {
            for fd in filter_fds.iter() {
                // Kept open across `exec` for bubblewrap to read.
                if libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if detach {
                give_up_terminal();
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = &ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        for program in filters.iter() {
            seccompiler::apply_filter(program).map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    };
    // SAFETY: the hook is async-signal-safe (system calls only).
    unsafe {
        cmd.pre_exec(hook);
    }
}
