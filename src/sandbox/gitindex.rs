//! Reading the gitlinks (submodule entries, mode 160000) out of git's index
//! without running git: the index is in a writable `.git`, so what is read
//! is the attacker's, and reading it must neither run anything nor trust a
//! length it gives. Versions 2, 3 and 4, SHA-1 and SHA-256 repositories.

use std::path::{Path, PathBuf};

const GITLINK: u32 = 0o160000;
/// The fixed part of an entry before the object name: times, device,
/// inode, mode, owner, group, size.
const STAT: usize = 40;
/// The largest index read (larger ones hold far more than any workspace
/// cairn is used in; they are left unread).
const MAX_INDEX: u64 = 256 << 20;

/// The workspace-relative paths of the gitlinks in the index of the
/// repository whose git folder is `git`; `None` when it cannot be read.
pub fn gitlinks(git: &Path) -> Option<Vec<PathBuf>> {
    let bytes = read_plain(&git.join("index"), MAX_INDEX)?;
    let config = read_plain(&git.join("config"), 1 << 20).unwrap_or_default();
    let config = String::from_utf8_lossy(&config);
    let sha256 = config.lines().any(|l| {
        l.replace([' ', '\t'], "")
            .eq_ignore_ascii_case("objectformat=sha256")
    });
    let hash = if sha256 { 32 } else { 20 };
    let mut links = parse(&bytes, hash)?;
    // A split index keeps most entries in `sharedindex.<hash>` files; the
    // gitlinks there count as much as the main index's. Every shared file
    // is read, not only the one the index names: a stale one costs a look.
    if let Ok(entries) = std::fs::read_dir(git) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with("sharedindex.")
                && let Some(shared) = read_plain(&entry.path(), MAX_INDEX)
                && let Some(more) = parse(&shared, hash)
            {
                links.extend(more);
            }
        }
    }
    links.sort();
    links.dedup();
    Some(links)
}

/// The regular file `path`, opened without blocking or following a link
/// (a FIFO or a link a command put there is not read), if at most `max`.
fn read_plain(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut out = Vec::new();
    f.take(max).read_to_end(&mut out).ok()?;
    Some(out)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// The gitlink paths in an index of `hash`-byte object names.
pub fn parse(b: &[u8], hash: usize) -> Option<Vec<PathBuf>> {
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(b, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(b, 8)? as usize;
    let mut at = 12;
    let mut out = Vec::new();
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(b, at + 24)?;
        at += STAT + hash;
        let flags = u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]);
        at += 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(b.get(at..)?)?;
            at += used;
            let end = at + b.get(at..)?.iter().position(|&c| c == 0)?;
            let keep = previous.len().checked_sub(strip as usize)?;
            let mut p = previous[..keep].to_vec();
            p.extend_from_slice(&b[at..end]);
            at = end + 1;
            p
        } else {
            let end = at + b.get(at..)?.iter().position(|&c| c == 0)?;
            let p = b[at..end].to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 from the entry start.
            at = start + ((end - start + 8) & !7);
            p
        };
        if mode & 0o170000 == GITLINK {
            use std::os::unix::ffi::OsStrExt;
            let p = PathBuf::from(std::ffi::OsStr::from_bytes(&path));
            // Only plain relative paths name a place in the workspace.
            if p.components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
            {
                out.push(p);
            }
        }
        previous = path;
        if at > b.len() {
            return None;
        }
    }
    Some(out)
}

/// git's offset encoding (varint.c): 7 bits a byte, each continuation
/// adding one before the shift.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = u64::from(c & 127);
    while c & 128 != 0 {
        i += 1;
        c = *b.get(i)?;
        val = val.checked_add(1)?.checked_mul(128)? + u64::from(c & 127);
    }
    Some((val, i + 1))
}
