//! inotify, for `nested`: folders that gained or lost an entry. Elsewhere
//! than Linux there is none, and `nested` walks instead.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::Path;

pub enum Event {
    /// The kernel's queue overflowed: events were lost.
    Overflow,
    /// A watch ended (its folder was deleted or unwatched).
    Gone(i32),
    /// `name` came into (`came`) or left the folder watched by `wd`.
    Entry {
        wd: i32,
        name: OsString,
        dir: bool,
        came: bool,
    },
}

/// The watch could not be made because the person's limit is reached.
pub struct OutOfWatches;

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;

    const MASK: u32 = libc::IN_CREATE
        | libc::IN_MOVED_TO
        | libc::IN_MOVED_FROM
        | libc::IN_DELETE
        | libc::IN_ONLYDIR
        | libc::IN_DONT_FOLLOW;

    pub fn init() -> Option<OwnedFd> {
        // SAFETY: a plain system call; the descriptor is owned at once.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    }

    pub fn watch(fd: i32, path: &Path) -> Result<i32, Option<OutOfWatches>> {
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| None)?;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), MASK) };
        if wd >= 0 {
            return Ok(wd);
        }
        let full = std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSPC);
        Err(full.then_some(OutOfWatches))
    }

    pub fn unwatch(fd: i32, wd: i32) {
        // SAFETY: a plain system call on the caller's descriptor.
        unsafe { libc::inotify_rm_watch(fd, wd) };
    }

    /// Reads what is queued, without waiting; `None` when nothing is.
    pub fn read(fd: i32, buf: &mut [u8]) -> Option<usize> {
        // SAFETY: reads into a buffer of the given length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        (n > 0).then_some(n as usize)
    }

    pub fn events(buf: &[u8]) -> Vec<Event> {
        let head = std::mem::size_of::<libc::inotify_event>();
        let mut out = Vec::new();
        let mut at = 0;
        while at + head <= buf.len() {
            // SAFETY: the kernel wrote a whole event here; read unaligned.
            let ev: libc::inotify_event =
                unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
            let len = ev.len as usize;
            let name = buf.get(at + head..at + head + len).unwrap_or_default();
            at += head + len;
            if ev.mask & libc::IN_Q_OVERFLOW != 0 {
                out.push(Event::Overflow);
            } else if ev.mask & libc::IN_IGNORED != 0 {
                out.push(Event::Gone(ev.wd));
            } else {
                let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
                out.push(Event::Entry {
                    wd: ev.wd,
                    name: std::ffi::OsStr::from_bytes(&name[..end]).to_os_string(),
                    dir: ev.mask & libc::IN_ISDIR != 0,
                    came: ev.mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0,
                });
            }
        }
        out
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    pub fn init() -> Option<OwnedFd> {
        None
    }
    pub fn watch(_: i32, _: &Path) -> Result<i32, Option<OutOfWatches>> {
        Err(None)
    }
    pub fn unwatch(_: i32, _: i32) {}
    pub fn read(_: i32, _: &mut [u8]) -> Option<usize> {
        None
    }
    pub fn events(_: &[u8]) -> Vec<Event> {
        Vec::new()
    }
}

pub use imp::*;
