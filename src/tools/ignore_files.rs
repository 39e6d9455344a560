//! The ignore files cairn's own walker obeys (`.gitignore`, `.ignore`,
//! `.git/info/exclude`), read the way the file tools read anything in a
//! workspace: through `beneath::open` (no link out of the workspace, so
//! not `/dev/tty` nor `~/.ssh/id_rsa`), non-blocking, regular files only
//! (a FIFO or a device never stalls a walk), at most [`MAX_BYTES`].
//!
//! The `ignore` crate would open them itself by path and follow any link a
//! sandboxed command planted: a link to a terminal or FIFO stalled `grep`,
//! and a link to a secret made its lines ignore patterns, an oracle for
//! its content (which files a walk leaves out). So the walker turns the
//! crate's own reading off and asks [`Ignores`] instead.
//!
//! Precedence follows git and ripgrep: the deepest folder with a matching
//! rule decides, `.ignore` before `.gitignore` in one folder, and
//! `.git/info/exclude` after them all; a `!pattern` keeps a file.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The largest ignore file read; the rest of a bigger one is left out.
pub const MAX_BYTES: u64 = 1 << 20;

/// The rules that apply inside one folder, deepest first: its own
/// `.ignore` and `.gitignore`, then those of each folder above it up to the
/// repository's top. Folders without rules add nothing, so most chains are
/// the top's rules alone.
type Chain = Vec<Arc<Gitignore>>;

pub struct Ignores {
    /// The folder the walk starts in; rules of folders above it, up to the
    /// repository's top, apply too.
    top: PathBuf,
    exclude: Option<Gitignore>,
    /// Each folder's chain, built once from its parent's: deciding about
    /// an entry is one lookup of its folder, not a walk up its ancestors.
    /// Keyed by the folder's bytes (hashing a `Path` goes by components).
    chains: RwLock<HashMap<OsString, Arc<Chain>>>,
}

impl Ignores {
    pub fn new(root: &Path) -> Ignores {
        let top = repository_top(root).unwrap_or_else(|| root.to_path_buf());
        let exclude = read_rules(&top, &top.join(".git/info/exclude"));
        Ignores {
            top,
            exclude,
            chains: RwLock::new(HashMap::new()),
        }
    }

    /// Whether `path` (a file, or a folder when `is_dir`) is ignored.
    pub fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let chain = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => self.chain(dir),
            _ => Arc::default(),
        };
        // Deepest first: the nearest rule decides.
        for rules in chain.iter() {
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        self.exclude
            .as_ref()
            .is_some_and(|e| e.matched(path, is_dir).is_ignore())
    }

    fn chain(&self, dir: &Path) -> Arc<Chain> {
        let cached = self.chains.read().unwrap_or_else(|e| e.into_inner());
        if let Some(chain) = cached.get(dir.as_os_str()) {
            return chain.clone();
        }
        drop(cached);
        if !dir.starts_with(&self.top) {
            return Arc::default();
        }
        let mut chain: Chain = [".ignore", ".gitignore"]
            .iter()
            .filter_map(|name| read_rules(dir, &dir.join(name)))
            .map(Arc::new)
            .collect();
        if dir != self.top
            && let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty())
        {
            chain.extend(self.chain(parent).iter().cloned());
        }
        let chain = Arc::new(chain);
        self.chains
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.as_os_str().to_owned(), chain.clone());
        chain
    }
}

/// The nearest folder at or above `root` that holds a `.git`.
fn repository_top(root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// The rules in the ignore file `file`, patterns relative to `dir`; none
/// when it is missing, not a regular file, or leads out of the workspace.
fn read_rules(dir: &Path, file: &Path) -> Option<Gitignore> {
    let text = read_plain(file)?;
    let mut b = GitignoreBuilder::new(dir);
    for line in text.lines() {
        // A bad pattern is skipped, as git skips it.
        let _ = b.add_line(Some(file.to_path_buf()), line);
    }
    b.build().ok().filter(|g| !g.is_empty())
}

/// The text of `file` when it is a regular file cairn may read.
pub fn read_plain(file: &Path) -> Option<String> {
    let f = super::beneath::open(file).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(d.path()).unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".git/info")).unwrap();
        crate::tools::beneath::guard(&ws);
        (d, ws)
    }

    #[test]
    fn nearest_rule_decides_and_exclude_comes_last() {
        let (_d, ws) = ws();
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(ws.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::write(ws.join("a/.gitignore"), "!keep.log\n").unwrap();
        std::fs::write(ws.join("a/b/.ignore"), "secret.txt\n").unwrap();
        std::fs::write(ws.join(".git/info/exclude"), "local.txt\n").unwrap();
        let ig = Ignores::new(&ws.join("a"));
        assert!(ig.ignored(&ws.join("a/x.log"), false));
        assert!(!ig.ignored(&ws.join("a/keep.log"), false));
        assert!(ig.ignored(&ws.join("a/b/secret.txt"), false));
        assert!(ig.ignored(&ws.join("a/local.txt"), false));
        assert!(ig.ignored(&ws.join("a/build"), true));
        assert!(!ig.ignored(&ws.join("a/build"), false));
        assert!(!ig.ignored(&ws.join("a/main.rs"), false));
    }

    #[test]
    fn links_out_fifos_and_devices_are_not_read() {
        let (_d, ws) = ws();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "main.rs\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_rsa"), ws.join(".gitignore")).unwrap();
        std::fs::create_dir(ws.join("d")).unwrap();
        let fifo = std::ffi::CString::new(ws.join("d/.gitignore").to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(ws.join("t")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", ws.join("t/.ignore")).unwrap();
        let ig = Ignores::new(&ws);
        assert!(!ig.ignored(&ws.join("main.rs"), false));
        assert!(!ig.ignored(&ws.join("d/x"), false));
        assert!(!ig.ignored(&ws.join("t/x"), false));
        assert!(read_plain(&ws.join("d/.gitignore")).is_none());
    }
}
