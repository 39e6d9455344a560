//! Tools read and write regular files only. A FIFO blocks a reader until
//! someone writes into it, a device can stream for ever (`/dev/zero`), a
//! socket cannot be read as a file at all: each is refused from its
//! metadata, before it is opened. Reads of regular files are bounded too,
//! since a file may grow between the size check and the read.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The largest file the editing tools read whole.
pub const MAX_EDIT_FILE: u64 = 50 * 1024 * 1024;

/// What kind of thing `meta` describes, when it is not a regular file or
/// a directory.
pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_fifo() {
        Some("a named pipe (FIFO)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else {
        None
    }
}

/// The refusal for a special file, in words the model can act on.
pub fn refusal(shown: &str, meta: &Metadata) -> Option<String> {
    special_kind(meta).map(|kind| {
        format!(
            "{shown} is {kind}, not a regular file; it was not opened (reading it could block \
             or never end). Use a shell command if its content is really needed."
        )
    })
}

/// Reads at most `max` bytes of `path`; a file longer than that is an
/// error naming the limit, not a partial read. Opening does not block on a
/// FIFO swapped in after the metadata check (`O_NONBLOCK`), and what was
/// opened is checked again.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    // Beneath its workspace: no link leads the read out of it.
    let file = super::beneath::open(path)?;
    let meta = file.metadata()?;
    if let Some(kind) = special_kind(&meta) {
        return Err(std::io::Error::other(format!("it is {kind}")));
    }
    read_limited(file, max)
}

fn read_limited(file: File, max: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "it is larger than the {} MB limit",
            max / (1024 * 1024)
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking_and_devices_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let meta = std::fs::metadata(&fifo).unwrap();
        assert!(refusal("pipe", &meta).unwrap().contains("FIFO"));
        assert!(read_bounded(&fifo, 10).is_err());
        let zero = std::fs::metadata("/dev/zero").unwrap();
        assert_eq!(special_kind(&zero), Some("a character device"));
        assert!(read_bounded(Path::new("/dev/zero"), 10).is_err());
    }

    #[test]
    fn reads_stop_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'a'; 20]).unwrap();
        assert_eq!(read_bounded(&f, 20).unwrap().len(), 20);
        assert!(read_bounded(&f, 19).is_err());
    }
}
