//! Where sandbox tests put a fixture home: a directory the sandbox does not
//! leave writable on its own. The temporary directory (and /tmp) always is,
//! so a checkout that lies under it (a CI clone in /tmp) must put its
//! fixtures elsewhere.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn fixture_base(target_dir: &Path) -> PathBuf {
    let temporary = [
        std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| "/tmp".into()),
        PathBuf::from("/tmp"),
    ];
    let under_temporary = |p: &Path| {
        let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        temporary.iter().any(|t| real.starts_with(t))
    };
    std::fs::create_dir_all(target_dir).unwrap();
    let base = if under_temporary(target_dir) {
        PathBuf::from("/var/tmp/cairn-sandbox-fixtures")
    } else {
        target_dir.to_path_buf()
    };
    std::fs::create_dir_all(&base).unwrap();
    assert!(
        !under_temporary(&base),
        "no place for sandbox fixtures outside the temporary directory"
    );
    base
}
