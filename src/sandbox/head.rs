//! Reading the start of a file a command may have planted: never through
//! a link, never blocking, regular files only.

use std::path::Path;

/// How much of a file [`head`] reads.
pub const HEAD_BYTES: u64 = 1 << 20;

/// Up to how much of a control file its identity covers whole
/// (`census::ident`); a larger one is known by its first MiB, length,
/// inode and change time.
pub const WHOLE_BYTES: u64 = 16 << 20;

/// The first MiB of the regular file `path` (a huge or special file a
/// command planted must not stall or fill cairn).
pub fn head(path: &Path) -> Vec<u8> {
    up_to(path, HEAD_BYTES)
}

/// The first `limit` bytes of the regular file `path`, as [`head`].
pub fn up_to(path: &Path, limit: u64) -> Vec<u8> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = Vec::new();
    // Non-blocking and not through a link: a FIFO swapped in never waits.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path);
    if let Ok(f) = opened
        && f.metadata().is_ok_and(|m| m.is_file())
    {
        let _ = f.take(limit).read_to_end(&mut out);
    }
    out
}
