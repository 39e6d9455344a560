//! cairn's own log file (`cairn.log` in the state directory): capped in
//! size, rotated through a few old files, and with a line repeated many
//! times written once with its count, so nothing a server or a stream sends
//! can fill the disk. `[log] max_mb` and `files` in the person's config set
//! the bounds (a project's file cannot).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use serde::Deserialize;

/// `[log]`: how large `cairn.log` grows before it is rotated, and how many
/// old files are kept.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    #[serde(default, deserialize_with = "super::range::megabytes")]
    pub max_mb: Option<u64>,
    #[serde(default, deserialize_with = "super::range::log_files")]
    pub files: Option<u32>,
}

pub const DEFAULT_MAX_MB: u64 = 10;
pub const DEFAULT_FILES: u32 = 3;

static MAX_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_MB * 1024 * 1024);
static FILES: AtomicU32 = AtomicU32::new(DEFAULT_FILES);

/// Applies the person's `[log]` to the log already open.
pub fn apply(config: &LogConfig) {
    let mb = config.max_mb.unwrap_or(DEFAULT_MAX_MB);
    MAX_BYTES.store(mb.saturating_mul(1024 * 1024), Ordering::Relaxed);
    FILES.store(config.files.unwrap_or(DEFAULT_FILES), Ordering::Relaxed);
}

/// The writer behind the log: one call per log line.
pub struct LogFile {
    path: PathBuf,
    file: Option<File>,
    size: u64,
    /// The last line without its time stamp, and how many times it came
    /// again since it was written.
    last: Vec<u8>,
    repeats: u64,
    /// Bounds of this file alone (tests); otherwise the person's `[log]`.
    fixed: Option<(u64, u32)>,
}

impl LogFile {
    pub fn open(path: &Path) -> io::Result<LogFile> {
        let file = crate::private::open_append(path)?;
        let size = file.metadata()?.len();
        Ok(LogFile {
            path: path.to_path_buf(),
            file: Some(file),
            size,
            last: Vec::new(),
            repeats: 0,
            fixed: None,
        })
    }

    /// The largest size in bytes and the count of old files kept.
    fn limits(&self) -> (u64, u32) {
        self.fixed.unwrap_or_else(|| {
            (
                MAX_BYTES.load(Ordering::Relaxed).max(1),
                FILES.load(Ordering::Relaxed),
            )
        })
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        let (max, _) = self.limits();
        if self.size > 0 && self.size + bytes.len() as u64 > max {
            self.rotate()?;
        }
        // A single line over the cap is cut to it.
        let bytes = &bytes[..bytes.len().min(max as usize)];
        if let Some(file) = self.file.as_mut() {
            file.write_all(bytes)?;
            self.size += bytes.len() as u64;
        }
        Ok(())
    }

    /// `cairn.log` becomes `cairn.log.1`, `.1` becomes `.2`, … and the
    /// oldest beyond `[log] files` goes.
    fn rotate(&mut self) -> io::Result<()> {
        self.file = None;
        let (_, keep) = self.limits();
        let numbered = |n: u32| {
            let mut name = self.path.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        // The oldest kept goes (and any past a count since lowered), the
        // others move up one, and the current one becomes `.1`.
        let mut n = keep.max(1);
        while std::fs::remove_file(numbered(n)).is_ok() || n == keep.max(1) {
            n += 1;
        }
        for n in (1..keep).rev() {
            let _ = std::fs::rename(numbered(n), numbered(n + 1));
        }
        if keep > 0 {
            std::fs::rename(&self.path, numbered(1))?;
        } else {
            std::fs::remove_file(&self.path)?;
        }
        let file = crate::private::open_append(&self.path)?;
        self.file = Some(file);
        self.size = 0;
        Ok(())
    }

    fn flush_repeats(&mut self) -> io::Result<()> {
        if self.repeats > 0 {
            let note = format!(
                "(the line above came {} more time{})\n",
                self.repeats,
                if self.repeats == 1 { "" } else { "s" }
            );
            self.repeats = 0;
            self.put(note.as_bytes())?;
        }
        Ok(())
    }
}

/// A line without its leading time stamp (the first word).
fn without_stamp(line: &[u8]) -> &[u8] {
    match line.iter().position(|&b| b == b' ') {
        Some(i) => &line[i..],
        None => line,
    }
}

impl Write for LogFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let key = without_stamp(buf);
        if !self.last.is_empty() && key == self.last.as_slice() {
            self.repeats += 1;
            return Ok(buf.len());
        }
        self.flush_repeats()?;
        self.last.clear();
        self.last.extend_from_slice(key);
        self.put(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for LogFile {
    fn drop(&mut self) {
        let _ = self.flush_repeats();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize, text: &str) -> Vec<u8> {
        format!("2026-11-27T10:00:{n:02}Z  INFO cairn: {text}\n").into_bytes()
    }

    #[test]
    fn repeated_lines_are_written_once_with_their_count() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cairn.log");
        {
            let mut log = LogFile::open(&path).expect("open");
            for n in 0..50 {
                log.write_all(&line(n, "MCP log: same")).expect("write");
            }
            log.write_all(&line(51, "other")).expect("write");
            log.write_all(&line(52, "tail")).expect("write");
            log.write_all(&line(53, "tail")).expect("write");
        }
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.matches("MCP log: same").count(), 1, "{text}");
        assert!(
            text.contains("(the line above came 49 more times)\n"),
            "{text}"
        );
        assert!(text.contains("other"), "{text}");
        // The count of the last line is written when the log closes.
        assert!(
            text.ends_with("tail\n(the line above came 1 more time)\n"),
            "{text}"
        );
    }

    #[test]
    fn the_log_rotates_at_its_cap_and_keeps_its_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cairn.log");
        let mut log = LogFile::open(&path).expect("open");
        log.fixed = Some((1024 * 1024, 2));
        let filler = "x".repeat(1000);
        for n in 0..5000 {
            log.write_all(&line(n % 60, &format!("{n} {filler}")))
                .expect("write");
        }
        drop(log);
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let cap = 1024 * 1024;
        assert!(size(&path) <= cap && size(&path) > 0);
        assert!(size(&dir.path().join("cairn.log.1")) > cap / 2);
        assert!(size(&dir.path().join("cairn.log.2")) > cap / 2);
        assert!(!dir.path().join("cairn.log.3").exists());
        // The newest line is in the current file.
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("4999 x"), "newest line missing");
    }
}
