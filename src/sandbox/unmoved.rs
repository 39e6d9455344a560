//! Whether any folder on a path gained or lost an entry while another
//! process read it by name. cairn's own reads open a path beneath the
//! workspace in one step; a read an editor does for it (`fs/read_text_file`
//! over the Agent Client Protocol) resolves the name again, in the editor,
//! and a contained command could swap a link in for that moment and back.
//! Every swap — a link made, an entry renamed or removed — is an inotify
//! event on the folder holding it, whatever the clock's granularity, so a
//! read during which no folder on the path changed read what cairn checked.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Component, Path};

use super::nested_sys as sys;

pub struct Unmoved {
    fd: OwnedFd,
}

impl Unmoved {
    /// Watches every folder from `root` down to the one holding `path`
    /// (a file inside `root`); `None` when that cannot be done (no
    /// inotify, out of watches, a link on the way, `path` outside `root`).
    pub fn watch(root: &Path, path: &Path) -> Option<Unmoved> {
        let rel = path.parent()?.strip_prefix(root).ok()?;
        let fd = sys::init()?;
        let mut dir = root.to_path_buf();
        sys::watch(fd.as_raw_fd(), &dir).ok()?;
        for part in rel.components() {
            let Component::Normal(name) = part else {
                return None;
            };
            dir.push(name);
            // Not through a link: the watch refuses one.
            sys::watch(fd.as_raw_fd(), &dir).ok()?;
        }
        Some(Unmoved { fd })
    }

    /// Whether no folder on the path changed since [`Unmoved::watch`].
    pub fn held(&self) -> bool {
        let mut buf = [0u8; 4096];
        sys::read(self.fd.as_raw_fd(), &mut buf).is_none()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_swap_anywhere_on_the_path_is_seen_and_a_read_is_not() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/k"), "x").unwrap();
        let quiet = Unmoved::watch(root, &root.join("a/b/k")).unwrap();
        let _ = std::fs::read(root.join("a/b/k")).unwrap();
        assert!(quiet.held());
        std::fs::rename(root.join("a/b/k"), root.join("a/b/k.old")).unwrap();
        std::fs::rename(root.join("a/b/k.old"), root.join("a/b/k")).unwrap();
        assert!(!quiet.held(), "a flip and a flip back");
        let quiet = Unmoved::watch(root, &root.join("a/b/k")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("x")).unwrap();
        assert!(!quiet.held(), "an entry made higher up");
        std::os::unix::fs::symlink(root.join("a"), root.join("l")).unwrap();
        assert!(
            Unmoved::watch(root, &root.join("l/b/k")).is_none(),
            "a link on the way"
        );
    }
}
