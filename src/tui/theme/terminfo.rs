//! What the terminal's terminfo entry says about colour: `colors` (how
//! many palette colours) and the `RGB` / `Tc` extensions (direct colour).
//! Read from the compiled entry ncurses installs, so a terminal reached
//! over ssh, where `COLORTERM` is rarely passed on, still gets its colours.

use std::path::{Path, PathBuf};

/// The colour facts of one terminfo entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Colours {
    /// `colors`, when the entry sets it.
    pub count: Option<u32>,
    /// `RGB` or `Tc`: the terminal takes 24-bit colours.
    pub direct: bool,
}

/// `max_colors` is the 14th numeric capability in every compiled entry.
const COLORS_INDEX: usize = 13;

/// The entry for `term`, searched where ncurses searches.
pub fn lookup(
    term: &str,
    home: Option<&Path>,
    terminfo: Option<&str>,
    dirs: Option<&str>,
) -> Option<Colours> {
    let first = term.chars().next()?;
    if term.contains('/') || term.contains("..") {
        return None;
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    roots.extend(terminfo.map(PathBuf::from));
    roots.extend(home.map(|h| h.join(".terminfo")));
    roots.extend(
        dirs.into_iter()
            .flat_map(|d| d.split(':'))
            .filter(|d| !d.is_empty())
            .map(PathBuf::from),
    );
    roots.extend(
        [
            "/etc/terminfo",
            "/lib/terminfo",
            "/usr/share/terminfo",
            "/usr/lib/terminfo",
        ]
        .map(PathBuf::from),
    );
    roots.into_iter().find_map(|root| {
        [first.to_string(), format!("{:x}", u32::from(first))]
            .iter()
            .find_map(|sub| read_entry(&root.join(sub).join(term)))
            .and_then(|bytes| parse(&bytes))
    })
}

/// A compiled entry: a regular file (links followed: system entries are
/// links), opened without blocking and read to at most 64 KiB, so a FIFO
/// or a link to `/dev/zero` under `$TERMINFO` or `~/.terminfo` stalls
/// nothing and fills nothing.
fn read_entry(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(64 * 1024).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn short(b: &[u8], at: usize) -> Option<i32> {
    let v = i16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]);
    Some(i32::from(v))
}

fn number(b: &[u8], at: usize, wide: bool) -> Option<i32> {
    if wide {
        Some(i32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
    } else {
        short(b, at)
    }
}

/// Reads a compiled entry (legacy 16-bit or ncurses 6 32-bit numbers),
/// with its extended capabilities when present.
pub fn parse(b: &[u8]) -> Option<Colours> {
    let wide = match short(b, 0)? {
        0o432 => false,
        0o1036 => true,
        _ => return None,
    };
    let size = |i: usize| short(b, 2 * i).and_then(|v| usize::try_from(v).ok());
    let (names, bools, nums, strs, table) = (size(1)?, size(2)?, size(3)?, size(4)?, size(5)?);
    let width = if wide { 4 } else { 2 };
    let mut at = 12 + names + bools;
    at += at % 2;
    let count = (nums > COLORS_INDEX)
        .then(|| number(b, at + COLORS_INDEX * width, wide))
        .flatten()
        .and_then(|v| u32::try_from(v).ok());
    at += nums * width + strs * 2 + table;
    at += at % 2;
    Some(Colours {
        count,
        direct: extended_direct(b, at, wide).unwrap_or(false),
    })
}

/// Whether the extended capabilities starting at `at` name `RGB` or `Tc`
/// (set, for a boolean).
fn extended_direct(b: &[u8], at: usize, wide: bool) -> Option<bool> {
    let size = |i: usize| short(b, at + 2 * i).and_then(|v| usize::try_from(v).ok());
    let (bools, nums, strs) = (size(0)?, size(1)?, size(2)?);
    let width = if wide { 4 } else { 2 };
    let flags = b.get(at + 10..at + 10 + bools)?;
    let mut p = at + 10 + bools;
    p += p % 2;
    p += nums * width;
    let offsets = p;
    p += 2 * (strs + bools + nums + strs);
    let table = b.get(p..)?;
    // Values come first in the table, then every name in order: the names
    // are the last (bools + nums + strs) strings.
    let valued = (0..strs)
        .filter(|i| short(b, offsets + 2 * i).is_some_and(|o| o >= 0))
        .count();
    let names: Vec<&[u8]> = table
        .split(|c| *c == 0)
        .skip(valued)
        .take(bools + nums + strs)
        .collect();
    let is_direct = |n: &[u8]| n == b"RGB" || n == b"Tc";
    Some(
        names
            .iter()
            .enumerate()
            .any(|(i, n)| is_direct(n) && (i >= bools || flags.get(i).is_some_and(|f| *f == 1))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles `source` with ncurses' `tic` into `dir`, when `tic` is there.
    fn compile(dir: &Path, source: &str) -> bool {
        let src = dir.join("entry.src");
        std::fs::write(&src, source).unwrap();
        std::process::Command::new("tic")
            .args(["-x", "-o"])
            .arg(dir)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success())
    }

    #[test]
    fn reads_colours_and_the_direct_colour_extensions() {
        let dir = tempfile::tempdir().unwrap();
        let source = "cairn-rgb|test,\n\tcolors#256, RGB, use=xterm-256color,\n\
                      cairn-tc|test,\n\tTc, use=xterm,\n\
                      cairn-8|test,\n\tcolors#8, bel=^G,\n";
        if !compile(dir.path(), source) {
            eprintln!("skipped: ncurses' tic is not installed");
            return;
        }
        let root = dir.path().to_str().unwrap();
        let get = |t: &str| lookup(t, None, Some(root), None).unwrap();
        assert_eq!(
            get("cairn-rgb"),
            Colours {
                count: Some(256),
                direct: true
            }
        );
        assert_eq!(
            get("cairn-tc"),
            Colours {
                count: Some(8),
                direct: true
            }
        );
        assert_eq!(
            get("cairn-8"),
            Colours {
                count: Some(8),
                direct: false
            }
        );
        assert_eq!(lookup("no-such-terminal", None, Some(root), Some("")), None);
        assert_eq!(lookup("../x", None, Some(root), None), None);
    }

    #[test]
    fn garbage_is_no_entry() {
        assert_eq!(parse(b""), None);
        assert_eq!(parse(&[0x1a, 0x01, 0xff]), None);
        assert_eq!(parse(b"not a terminfo file at all"), None);
    }
}
