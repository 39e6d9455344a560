//! Landlock grants access beneath a directory and cannot take it back
//! deeper down. "All of `/` but `~/.ssh`" is therefore written as an
//! allow-list: every entry of `/` except the one leading to `~/.ssh`, that
//! directory only listable, and so on down to the denied path's siblings.

use std::path::{Path, PathBuf};

/// The paths to grant for "`root` minus `deny`".
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Cover {
    /// Granted with everything beneath.
    pub full: Vec<PathBuf>,
    /// Directories on the way to a denied path: their names may be listed.
    pub list_only: Vec<PathBuf>,
}

/// Splits `root` around the `deny` paths (canonical). A denied path that
/// is `root` itself or above it leaves nothing to grant.
pub fn cover(root: &Path, deny: &[PathBuf]) -> Cover {
    let mut out = Cover::default();
    if deny.iter().any(|d| root.starts_with(d)) {
        return out;
    }
    if !deny.iter().any(|d| d.starts_with(root)) {
        out.full.push(root.to_path_buf());
        return out;
    }
    split(root, deny, &mut out);
    out
}

fn split(dir: &Path, deny: &[PathBuf], out: &mut Cover) {
    out.list_only.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if deny.iter().any(|d| path.starts_with(d)) {
            continue;
        }
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_link {
            // A link is granted as its target: keep it only when the
            // target neither lies in nor holds a denied path.
            let Ok(target) = std::fs::canonicalize(&path) else {
                continue;
            };
            if deny
                .iter()
                .any(|d| target.starts_with(d) || d.starts_with(&target))
            {
                continue;
            }
            out.full.push(path);
        } else if deny.iter().any(|d| d.starts_with(&path)) {
            split(&path, deny, out);
        } else {
            out.full.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denied_subtrees_are_left_out_and_their_ancestors_listable() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in [
            "home/.ssh",
            "home/.config/gh",
            "home/.config/nvim",
            "home/.cargo",
            "usr",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("home/.netrc"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/keys")).unwrap();
        std::os::unix::fs::symlink(root.join("home/.cargo"), root.join("home/cargo-link")).unwrap();
        let deny = vec![
            root.join("home/.ssh"),
            root.join("home/.config/gh"),
            root.join("home/.netrc"),
        ];
        let mut c = cover(&root, &deny);
        c.full.sort();
        c.list_only.sort();
        let rel = |v: &[PathBuf]| -> Vec<String> {
            v.iter()
                .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(
            rel(&c.full),
            ["home/.cargo", "home/.config/nvim", "home/cargo-link", "usr"]
        );
        assert_eq!(rel(&c.list_only), ["", "home", "home/.config"]);
    }

    #[test]
    fn a_root_inside_a_denied_path_grants_nothing() {
        let deny = vec![PathBuf::from("/a")];
        assert_eq!(cover(Path::new("/a/b"), &deny), Cover::default());
        let c = cover(Path::new("/x"), &deny);
        assert_eq!(c.full, [PathBuf::from("/x")]);
    }
}
