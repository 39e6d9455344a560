//! Landlock and seccomp. [`prepare`] runs in cairn's process and may fail;
//! [`install`] registers a `pre_exec` hook that only makes system calls on
//! data prepared beforehand (see the module comment of `sandbox`).

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::readable::cover;
use super::status::Support;
use super::{Policy, SandboxError};

/// What the child applies to itself before `exec`.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    seccomp: Option<BpfProgram>,
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
    let abi = abi_of(support.landlock_abi);
    let ruleset = if support.landlock_abi > 0 {
        Some(ruleset(policy, abi)?)
    } else {
        None
    };
    let seccomp = if policy.network {
        None
    } else {
        Some(network_filter()?)
    };
    Ok(Prepared { ruleset, seccomp })
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
        // No signals to processes outside the sandbox (`kill -9 -1`).
        base = base.scope(Scope::Signal).map_err(err)?;
    }
    let mut created = base.create().map_err(err)?;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let root = cover(Path::new("/"), &policy.deny_read);
    for path in &root.full {
        created = add(created, path, read)?;
    }
    for dir in &root.list_only {
        created = add(created, dir, AccessFs::ReadDir.into())?;
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

/// seccomp: `socket()` for anything but Unix and netlink sockets, and
/// io_uring (which can open sockets without calling `socket()`), fail with
/// EACCES.
fn network_filter() -> Result<BpfProgram, SandboxError> {
    let arch = std::env::consts::ARCH.try_into().map_err(err)?;
    let not = |family: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64)
    };
    let socket_rule = SeccompRule::new(vec![
        not(libc::AF_UNIX).map_err(err)?,
        not(libc::AF_NETLINK).map_err(err)?,
    ])
    .map_err(err)?;
    let rules = [
        (libc::SYS_socket, vec![socket_rule]),
        (libc::SYS_io_uring_setup, vec![]),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(err)?;
    filter.try_into().map_err(err)
}

/// Registers the hook that confines the child. Nothing in it allocates.
pub fn install(cmd: &mut std::process::Command, prepared: Prepared) {
    let ruleset = prepared.ruleset.map(Arc::new);
    let seccomp = prepared.seccomp.map(Arc::new);
    let hook = move || -> std::io::Result<()> {
        // SAFETY: raw system calls on memory and descriptors owned by this
        // closure; no allocation, no lock.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = &ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(program) = &seccomp {
            seccompiler::apply_filter(program).map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    };
    // SAFETY: the hook is async-signal-safe (system calls only).
    unsafe {
        cmd.pre_exec(hook);
    }
}
