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
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the hook makes system calls only: no allocation, no lock.
        unsafe {
            cmd.pre_exec(move || linux::guard(parent));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

#[cfg(target_os = "linux")]
mod linux {
    use libc::{SIG_BLOCK, SIG_SETMASK, SIGCHLD, SIGHUP, SIGKILL, pid_t, sigset_t};
    use std::io;

    /// Runs in the forked child before `exec`. Returns in the process that
    /// goes on to `exec` the command.
    pub(super) unsafe fn guard(parent: pid_t) -> io::Result<()> {
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
            // Blocked before the fork so neither signal is missed.
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
            watch(parent, me, command, &watched)
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
    /// did, and kills the group when cairn dies.
    unsafe fn watch(parent: pid_t, group: pid_t, command: pid_t, watched: &sigset_t) -> ! {
        // SAFETY: plain system calls on local memory.
        unsafe {
            if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
                for fd in 0..4096 {
                    libc::close(fd);
                }
            }
            loop {
                let signal = libc::sigwaitinfo(watched, std::ptr::null_mut());
                if signal == SIGHUP && libc::getppid() != parent {
                    libc::kill(-group, SIGKILL);
                    libc::_exit(137);
                }
                let mut status = 0;
                if libc::waitpid(command, &mut status, libc::WNOHANG) == command {
                    if libc::WIFSIGNALED(status) {
                        libc::_exit(128 + libc::WTERMSIG(status));
                    }
                    libc::_exit(libc::WEXITSTATUS(status));
                }
            }
        }
    }
}
