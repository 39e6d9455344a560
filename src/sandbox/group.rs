//! Stopping what a command started, all of it.
//!
//! A command runs as the leader of its own process group, and signalling
//! the group reaches everything it forked. Under bubblewrap one process
//! escapes the group: bubblewrap's first child, the PID namespace's init,
//! runs in a session of its own. It is meant to die with bubblewrap
//! (`--die-with-parent`), but when bubblewrap is killed while it is still
//! setting up, before the child has asked for that signal, the namespace
//! and everything in it live on, parented to init. A turn cancelled a
//! moment after it started a command did exactly that.
//!
//! So the group is first stopped (no member can fork or finish setting
//! up), then every member and every child of a member outside the group
//! is held by a pidfd (a member stopped before bubblewrap's `setsid` is
//! out of the group once resumed), and signals go to the group and to
//! each of those. Killing a namespace's init kills the whole namespace.

#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How long to wait for a group to stop before going on without it.
const STOP_WAIT: Duration = Duration::from_millis(200);

/// A stopped process group, each of its members and the processes they
/// started outside it. Dropping it resumes nothing: call [`Group::signal`] and, for a
/// graceful stop, [`Group::resume`].
pub struct Group {
    pgid: i32,
    #[cfg(target_os = "linux")]
    outside: Vec<OwnedFd>,
}

impl Group {
    /// Stops the group led by `pgid` and takes hold of the processes its
    /// members started in other groups or sessions.
    pub fn stop(pgid: i32) -> Group {
        // SAFETY: a signal to a process group; no memory is involved.
        let gone = unsafe { libc::kill(-pgid, libc::SIGSTOP) } != 0;
        if gone {
            // No member left (the usual end of a command): nothing to scan.
            return Group {
                pgid,
                #[cfg(target_os = "linux")]
                outside: Vec::new(),
            };
        }
        let deadline = Instant::now() + STOP_WAIT;
        let mut table = processes();
        while table
            .iter()
            .any(|p| p.pgrp == pgid && !matches!(p.state, 'T' | 't' | 'Z' | 'X'))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
            table = processes();
        }
        #[cfg(target_os = "linux")]
        {
            let members: Vec<i32> = table
                .iter()
                .filter(|p| p.pgrp == pgid)
                .map(|p| p.pid)
                .collect();
            // Members too: one stopped half-way through its set-up may
            // leave the group for a session of its own once resumed.
            let outside = table
                .iter()
                .filter(|p| p.pgrp == pgid || members.contains(&p.ppid))
                .filter_map(|p| pidfd(p.pid))
                .collect();
            Group { pgid, outside }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = table;
            Group { pgid }
        }
    }

    /// Sends `signal` to the group and to each process held.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: a signal to a process group; no memory is involved.
        unsafe { libc::kill(-self.pgid, signal) };
        #[cfg(target_os = "linux")]
        for fd in &self.outside {
            // SAFETY: the descriptor is a pidfd this value owns; a pidfd
            // names one process even after its number is reused.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0u32,
                );
            }
        }
    }

    /// Lets the stopped processes run again (to act on a SIGTERM).
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }
}

/// Kills the group led by `pgid` and whatever its members started outside
/// it (a bubblewrap namespace whole).
pub fn kill_group(pgid: i32) {
    Group::stop(pgid).signal(libc::SIGKILL);
}

#[cfg(target_os = "linux")]
fn pidfd(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    // SAFETY: a descriptor just returned to us, owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    state: char,
}

/// Every process this one can see, from `/proc`.
fn processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .collect()
}

/// `pid (comm) state ppid pgrp …`; the name may hold spaces and brackets,
/// so the fields are read after its last `)`.
fn parse_stat(pid: i32, stat: &str) -> Option<Proc> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        pgrp,
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_name() {
        let p = parse_stat(42, "42 (a) b (c)) S 7 42 42 0 -1").unwrap();
        assert_eq!((p.pid, p.ppid, p.pgrp, p.state), (42, 7, 42, 'S'));
        assert!(parse_stat(1, "1 (x").is_none());
    }

    /// A process that moves to a session of its own (as bubblewrap's
    /// namespace init does) is killed with the group.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_in_its_own_session_dies_with_the_group() {
        use std::os::unix::process::CommandExt;
        let mut leader = std::process::Command::new("sh");
        leader
            .args(["-c", "setsid sleep 300.4242 & wait"])
            .process_group(0);
        let mut child = leader.spawn().unwrap();
        let pgid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(10);
        let escaped = loop {
            if let Some(p) = processes()
                .into_iter()
                .find(|p| p.ppid == pgid && p.pgrp != pgid)
            {
                break p.pid;
            }
            assert!(Instant::now() < deadline, "setsid never ran");
            std::thread::sleep(Duration::from_millis(10));
        };
        kill_group(pgid);
        let _ = child.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let state = std::fs::read_to_string(format!("/proc/{escaped}/stat"))
                .ok()
                .and_then(|s| parse_stat(escaped, &s))
                .map(|p| p.state);
            if matches!(state, None | Some('Z') | Some('X')) {
                break;
            }
            assert!(Instant::now() < deadline, "the escaped child lives on");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
