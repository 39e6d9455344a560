//! Children die with cairn. A `kill -9` of cairn runs none of its clean-up,
//! and a command left behind would keep running with the person's rights
//! and nobody watching it.
//!
//! On Linux each child asks the kernel for a signal when cairn goes
//! (`PR_SET_PDEATHSIG`). That reaches only the child itself, not what it
//! forks (`bash -c 'sleep 1; …'`), so a child that leads its own process
//! group splits in two before `exec`: the command runs in a new process,
//! and the first stays behind as its guard — holding no descriptor,
//! passing on the command's exit status, and killing the whole group when
//! cairn dies. The kernel ties the parent-death signal to the thread that
//! started the child; cairn starts children from its runtime's worker
//! threads, which live as long as the process.

/// Makes the child started by `cmd` (and, when it leads its own process
/// group, everything in that group) die when cairn dies. Register it
/// before any confinement hook so the guard runs unconfined system calls
/// only and the command is confined as before.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    hook(cmd, false);
}

/// Like [`die_with_parent`] for a program that runs outside the sandbox
/// and must leave nothing behind: its guard (the child, leading its own
/// process group) is also the reaper of everything the program starts
/// (`PR_SET_CHILD_SUBREAPER`), so a helper that double-forks and calls
/// `setsid` to leave the group is still its descendant. When the program
/// ends, when cairn dies, or when cairn asks ([`end_all`]), the guard
/// kills every descendant, round after round until none is left, and
/// only then exits: the guard's exit means all of it is gone. A polite
/// `SIGTERM` to the group does not stop the guard; it waits for the
/// program to leave.
pub fn die_with_parent_reaping(cmd: &mut std::process::Command) {
    hook(cmd, true);
}

/// Asks the guard `pid` started by [`die_with_parent_reaping`] to kill
/// everything it watches and exit.
pub fn end_all(pid: u32) {
    #[cfg(target_os = "linux")]
    // SAFETY: a signal to one process.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGUSR1);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

fn hook(cmd: &mut std::process::Command, reap: bool) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the hook makes system calls only: no allocation, no lock.
        unsafe {
            cmd.pre_exec(move || linux::guard(parent, reap));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cmd, reap);
}

#[cfg(target_os = "linux")]
mod linux {
    use libc::{
        SIG_BLOCK, SIG_SETMASK, SIGCHLD, SIGHUP, SIGKILL, SIGTERM, SIGUSR1, pid_t, sigset_t,
    };
    use std::io;

    /// Runs in the forked child before `exec`. Returns in the process that
    /// goes on to `exec` the command.
    pub(super) unsafe fn guard(parent: pid_t, reap: bool) -> io::Result<()> {
        // SAFETY: (all blocks) plain system calls on local memory.
        unsafe {
            let me = libc::getpid();
            if libc::getpgrp() != me {
                // Not a group of its own: killing "its group" would hit
                // cairn's; the child alone dies with cairn.
                return die_on_parent_death(parent, SIGKILL);
            }
            let mut watched: sigset_t = std::mem::zeroed();
            let mut previous: sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut watched);
            libc::sigaddset(&mut watched, SIGCHLD);
            libc::sigaddset(&mut watched, SIGHUP);
            if reap {
                libc::sigaddset(&mut watched, SIGUSR1);
                libc::sigaddset(&mut watched, SIGTERM);
                if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            // Blocked before the fork so no signal is missed.
            libc::sigprocmask(SIG_BLOCK, &watched, &mut previous);
            die_on_parent_death(parent, SIGHUP)?;
            let command = libc::fork();
            if command < 0 {
                return Err(io::Error::last_os_error());
            }
            if command == 0 {
                libc::sigprocmask(SIG_SETMASK, &previous, std::ptr::null_mut());
                // The guard's death (cairn killed the group) takes it too.
                return die_on_parent_death(me, SIGKILL);
            }
            watch(parent, me, command, &watched, reap)
        }
    }

    unsafe fn die_on_parent_death(parent: pid_t, signal: libc::c_int) -> io::Result<()> {
        // SAFETY: plain system calls.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
        }
        Ok(())
    }

    /// The guard: holds no descriptor (a pipe end kept open here would
    /// keep the command from seeing end of input), exits as the command
    /// did, and kills the group when cairn dies. A reaping guard also
    /// reaps what is reparented to it, and ends every descendant before it
    /// exits.
    unsafe fn watch(
        parent: pid_t,
        group: pid_t,
        command: pid_t,
        watched: &sigset_t,
        reap: bool,
    ) -> ! {
        // SAFETY: plain system calls on local memory.
        unsafe {
            if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
                for fd in 0..4096 {
                    libc::close(fd);
                }
            }
            loop {
                let signal = libc::sigwaitinfo(watched, std::ptr::null_mut());
                if (signal == SIGHUP && libc::getppid() != parent) || signal == SIGUSR1 {
                    if reap {
                        end_descendants(group);
                    }
                    libc::kill(-group, SIGKILL);
                    libc::_exit(137);
                }
                let mut status = 0;
                let ended = match reap {
                    false => libc::waitpid(command, &mut status, libc::WNOHANG) == command,
                    true => reap_zombies(command, &mut status),
                };
                if ended {
                    if reap {
                        end_descendants(group);
                    }
                    if libc::WIFSIGNALED(status) {
                        libc::_exit(128 + libc::WTERMSIG(status));
                    }
                    libc::_exit(libc::WEXITSTATUS(status));
                }
            }
        }
    }

    /// Reaps every child that has ended; whether `command` was one (its
    /// status then in `status`).
    unsafe fn reap_zombies(command: pid_t, status: &mut libc::c_int) -> bool {
        let mut ended = false;
        // SAFETY: plain system calls on local memory.
        unsafe {
            loop {
                let mut st = 0;
                let pid = libc::waitpid(-1, &mut st, libc::WNOHANG);
                if pid <= 0 {
                    return ended;
                }
                if pid == command {
                    *status = st;
                    ended = true;
                }
            }
        }
    }

    /// Kills the guard's children, round after round, until it has none:
    /// a killed child's own children are reparented to the guard (it is
    /// their reaper) and die in the next round. What the kernel cannot
    /// list (no `/proc/…/children`) is left to the group kill after.
    unsafe fn end_descendants(me: pid_t) {
        let mut path = [0u8; 64];
        children_path(me, &mut path);
        let mut buf = [0u8; 8192];
        // SAFETY: plain system calls on local memory.
        unsafe {
            for _ in 0..100_000 {
                let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return;
                }
                let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                libc::close(fd);
                if n <= 0 {
                    return;
                }
                let mut pid: pid_t = 0;
                for &b in &buf[..n as usize] {
                    if b.is_ascii_digit() {
                        pid = pid * 10 + pid_t::from(b - b'0');
                    } else if pid > 0 {
                        libc::kill(pid, SIGKILL);
                        pid = 0;
                    }
                }
                if pid > 0 {
                    libc::kill(pid, SIGKILL);
                }
                let mut st = 0;
                while libc::waitpid(-1, &mut st, libc::WNOHANG) > 0 {}
                let pause = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 1_000_000,
                };
                libc::nanosleep(&pause, std::ptr::null_mut());
            }
        }
    }

    /// `/proc/ME/task/ME/children`, NUL-terminated, written into `out`
    /// without allocating (the guard is a fork of a threaded process).
    fn children_path(me: pid_t, out: &mut [u8; 64]) {
        let mut pid = [0u8; 20];
        let mut n = me.unsigned_abs();
        let mut d = pid.len();
        loop {
            d -= 1;
            pid[d] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let pid = &pid[d..];
        let mut at = 0;
        for part in [b"/proc/".as_slice(), pid, b"/task/", pid, b"/children\0"] {
            out[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_children_file_of_a_process() {
            let mut out = [0u8; 64];
            super::children_path(40213, &mut out);
            let end = out.iter().position(|b| *b == 0).unwrap();
            assert_eq!(&out[..end], b"/proc/40213/task/40213/children");
        }
    }
}
