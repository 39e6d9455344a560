use super::*;

fn workspace() -> (tempfile::TempDir, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    guard(&ws);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s3cret").unwrap();
    (dir, ws, outside)
}

#[test]
fn a_link_out_of_the_workspace_is_not_followed_and_is_named() {
    let (_d, ws, outside) = workspace();
    std::os::unix::fs::symlink(outside.path().join("secret"), ws.join("key")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.join("other")).unwrap();
    let e = open(&ws.join("key")).unwrap_err();
    assert!(e.to_string().contains("leads out of the workspace"), "{e}");
    assert!(e.to_string().contains("secret"), "names the target: {e}");
    assert!(open(&ws.join("other/secret")).is_err());
    assert!(check_dir(&ws.join("other")).is_err());
    assert!(real_path(&ws.join("key")).is_err());
    assert!(open(&ws.join("../ws/../../etc/passwd")).is_err());
}

#[test]
fn links_inside_the_workspace_still_work() {
    let (_d, ws, _o) = workspace();
    std::fs::create_dir(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "a").unwrap();
    std::os::unix::fs::symlink("src/a.txt", ws.join("link")).unwrap();
    let mut text = String::new();
    use std::io::Read;
    open(&ws.join("link"))
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "a");
    let real = real_path(&ws.join("link")).unwrap();
    assert_eq!(real, std::fs::canonicalize(ws.join("src/a.txt")).unwrap());
}

#[test]
fn writes_and_removals_stay_in_the_workspace() {
    let (_d, ws, outside) = workspace();
    std::os::unix::fs::symlink(outside.path(), ws.join("out")).unwrap();
    assert!(pinned_dir(&ws.join("out/new")).is_err());
    assert!(!outside.path().join("new").exists());
    assert!(crate::tools::atomic::write_atomic(&ws.join("out/x"), b"x").is_err());
    assert!(!outside.path().join("x").exists());
    std::os::unix::fs::symlink(outside.path().join("secret"), ws.join("s")).unwrap();
    assert!(crate::tools::atomic::write_atomic(&ws.join("s"), b"x").is_err());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).unwrap(),
        "s3cret"
    );
    assert!(remove_file(&ws.join("out/secret")).is_err());
    assert!(outside.path().join("secret").exists());
    let (_fd, _) = pinned_dir(&ws.join("a/b")).unwrap();
    crate::tools::atomic::write_atomic(&ws.join("a/b/c.txt"), b"c").unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a/b/c.txt")).unwrap(), "c");
    remove_file(&ws.join("a/b/c.txt")).unwrap();
    assert!(!ws.join("a/b/c.txt").exists());
}

#[test]
fn a_control_file_is_written_only_by_its_own_path() {
    let (_d, ws, _o) = workspace();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    // A folder and a file that a background job turned into links.
    std::os::unix::fs::symlink(".git/hooks", ws.join("scripts")).unwrap();
    std::os::unix::fs::symlink(".git/config", ws.join("notes.txt")).unwrap();
    let write = crate::tools::atomic::write_atomic;
    let e = write(&ws.join("scripts/pre-commit"), b"#!/bin/sh\n").unwrap_err();
    assert!(e.to_string().contains(".git/hooks/pre-commit"), "{e}");
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(write(&ws.join("notes.txt"), b"[core]\nfsmonitor = x\n").is_err());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    std::fs::write(ws.join(".git/hooks/post-merge"), "x").unwrap();
    assert!(remove_file(&ws.join("scripts/post-merge")).is_err());
    assert!(ws.join(".git/hooks/post-merge").exists());
    // By its own path (the gate asked): written.
    write(&ws.join(".git/hooks/pre-commit"), b"#!/bin/sh\n").unwrap();
    assert!(ws.join(".git/hooks/pre-commit").exists());
}
