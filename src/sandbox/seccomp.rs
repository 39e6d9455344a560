//! The seccomp filters every sandboxed command runs under, in both layers.
//!
//! - `socket()` only for the families the policy allows: netlink always,
//!   IPv4/IPv6 with the network, Unix only when `[sandbox] unix_sockets`
//!   names a socket (`socketpair()` stays allowed: it reaches no one).
//!   io_uring, which can open sockets without `socket()`, is refused.
//! - No `TIOCSTI`/`TIOCLINUX` (typing into a terminal), no keyrings.
//! - `prlimit`, `setpriority`, `ioprio_set` and the scheduler calls only on
//!   the caller itself: nothing reaches cairn or the person's processes.
//! - Without a PID namespace (the kernel layer), no `setsid`/`setpgid`: a
//!   command cannot leave the process group cairn kills when the call ends.
//! - A second filter refuses the x32 ABI and foreign architectures, whose
//!   system call numbers the first filter would not recognise.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, sock_filter,
};

use super::SandboxError;
use super::policy::{Layer, Policy};

fn err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Build(e.to_string())
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(err)
}

/// `arg != 0`: the call names a process other than the caller.
fn not_self(arg: u8) -> Result<Vec<SeccompRule>, SandboxError> {
    Ok(vec![rule(vec![cond(arg, SeccompCmpOp::Ne, 0)?])?])
}

/// The families `socket()` may create under `policy`.
pub fn socket_families(policy: &Policy) -> Vec<i32> {
    let mut families = vec![libc::AF_NETLINK];
    if !policy.unix_sockets.is_empty() {
        families.push(libc::AF_UNIX);
    }
    if policy.network {
        families.extend([libc::AF_INET, libc::AF_INET6]);
    }
    families
}

/// Both filters, in the order they are installed.
pub fn filters(policy: &Policy) -> Result<Vec<BpfProgram>, SandboxError> {
    Ok(vec![main_filter(policy)?, abi_filter()])
}

fn main_filter(policy: &Policy) -> Result<BpfProgram, SandboxError> {
    use SeccompCmpOp::{Eq, Ne};
    let socket_rule = socket_families(policy)
        .into_iter()
        .map(|f| cond(0, Ne, f as u64))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![rule(socket_rule)?]),
        (libc::SYS_io_uring_setup, vec![]),
        (libc::SYS_io_uring_enter, vec![]),
        (libc::SYS_io_uring_register, vec![]),
        (
            libc::SYS_ioctl,
            vec![
                rule(vec![cond(1, Eq, libc::TIOCSTI)?])?,
                rule(vec![cond(1, Eq, libc::TIOCLINUX)?])?,
            ],
        ),
        (libc::SYS_keyctl, vec![]),
        (libc::SYS_add_key, vec![]),
        (libc::SYS_request_key, vec![]),
        (libc::SYS_prlimit64, not_self(0)?),
        (
            libc::SYS_setpriority,
            vec![
                rule(vec![cond(1, Ne, 0)?])?,
                rule(vec![cond(0, Eq, libc::PRIO_USER as u64)?])?,
            ],
        ),
        (
            libc::SYS_ioprio_set,
            vec![
                rule(vec![cond(1, Ne, 0)?])?,
                // IOPRIO_WHO_USER: every process of the user.
                rule(vec![cond(0, Eq, 3)?])?,
            ],
        ),
        (libc::SYS_sched_setaffinity, not_self(0)?),
        (libc::SYS_sched_setscheduler, not_self(0)?),
        (libc::SYS_sched_setparam, not_self(0)?),
        (libc::SYS_sched_setattr, not_self(0)?),
    ]
    .into_iter()
    .collect();
    if policy.layer == Layer::Kernel {
        rules.insert(libc::SYS_setsid, vec![]);
        rules.insert(libc::SYS_setpgid, vec![]);
    }
    let arch = std::env::consts::ARCH.try_into().map_err(err)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(err)?;
    filter.try_into().map_err(err)
}

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xc000_00b7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE_ARCH: u32 = 0;

/// Foreign architectures are killed; x32 numbers (only on x86_64, where
/// they share the native architecture value) fail with EPERM.
fn abi_filter() -> BpfProgram {
    if NATIVE_ARCH == 0 {
        return vec![op(RET_K, 0, 0, RET_ALLOW)];
    }
    let arch_offset = 4;
    let nr_offset = 0;
    let mut program = vec![
        op(LD_W_ABS, 0, 0, arch_offset),
        op(JEQ_K, 1, 0, NATIVE_ARCH),
        op(RET_K, 0, 0, RET_KILL_PROCESS),
    ];
    if cfg!(target_arch = "x86_64") {
        program.extend([
            op(LD_W_ABS, 0, 0, nr_offset),
            op(JGE_K, 0, 1, X32_SYSCALL_BIT),
            op(RET_K, 0, 0, RET_ERRNO | libc::EPERM as u32),
        ]);
    }
    program.push(op(RET_K, 0, 0, RET_ALLOW));
    program
}
