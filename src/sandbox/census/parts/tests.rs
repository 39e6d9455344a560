use super::super::Census;
use std::path::{Path, PathBuf};

fn repo() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(d.path()).unwrap().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(&ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &ws)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    (d, ws)
}

fn put(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Sixth hostile review, H5: a command plants `.devcontainer/devcontainer.json`
/// while the person is asked about `.devcontainer/README.md`; approving the
/// README took in the whole folder, plant included.
#[test]
fn approving_a_file_in_a_watched_folder_takes_in_that_file_only() {
    let (_d, ws) = repo();
    let q = ws.parent().unwrap().join("quarantine");
    let mut census = Census::take(&ws);
    put(
        &ws,
        ".devcontainer/devcontainer.json",
        "{\"initializeCommand\": \"x\"}",
    );
    put(&ws, ".devcontainer/README.md", "approved");
    let said = census.check(&q, &[ws.join(".devcontainer/README.md")]);
    assert!(
        !ws.join(".devcontainer/devcontainer.json").exists(),
        "{said:?}"
    );
    assert!(ws.join(".devcontainer/README.md").exists());
    assert!(
        said.iter().any(|s| s.contains("devcontainer.json")),
        "{said:?}"
    );
    // Taken in: the next check leaves the approved file alone.
    assert!(census.check(&q, &[]).is_empty());
    assert!(ws.join(".devcontainer/README.md").exists());

    // A folder that was there: what was there stays, a new plant goes.
    put(&ws, ".cursor/rules.mdc", "the person's");
    let mut census = Census::take(&ws);
    put(&ws, ".cursor/evil.mdc", "planted");
    put(&ws, ".cursor/new.mdc", "approved");
    let said = census.check(&q, &[ws.join(".cursor/new.mdc")]);
    assert!(!ws.join(".cursor/evil.mdc").exists(), "{said:?}");
    assert!(ws.join(".cursor/new.mdc").exists());
    assert!(ws.join(".cursor/rules.mdc").exists());
}

/// In a git folder the parts are its config files and each hook: an
/// approved hook does not take in another hook planted beside it.
#[test]
fn an_approved_hook_does_not_take_in_a_hook_planted_beside_it() {
    let (_d, ws) = repo();
    let q = ws.parent().unwrap().join("quarantine");
    let mut census = Census::take(&ws);
    put(&ws, ".git/hooks/pre-commit", "#!/bin/sh\necho approved\n");
    put(&ws, ".git/hooks/post-checkout", "#!/bin/sh\necho planted\n");
    let said = census.check(&q, &[ws.join(".git/hooks/pre-commit")]);
    assert!(!ws.join(".git/hooks/post-checkout").exists(), "{said:?}");
    assert!(ws.join(".git/hooks/pre-commit").exists(), "{said:?}");
}

/// Sixth hostile review, H4: a folder given `HEAD`, `objects/`, `refs/`
/// and a `config` is a bare repository to the person's git, with no `.git`
/// name anywhere; its `HEAD` is moved, which makes it an ordinary folder.
#[test]
fn a_folder_made_into_a_bare_repository_loses_its_head() {
    let (_d, ws) = repo();
    put(&ws, "src/main.c", "int main;");
    let q = ws.parent().unwrap().join("quarantine");
    let mut census = Census::take(&ws);
    put(&ws, "src/HEAD", "ref: refs/heads/main\n");
    put(&ws, "src/config", "[core]\n\tfsmonitor = ./payload\n");
    std::fs::create_dir_all(ws.join("src/objects")).unwrap();
    std::fs::create_dir_all(ws.join("src/refs")).unwrap();
    let said = census.check(&q, &[]);
    assert!(!ws.join("src/HEAD").exists(), "{said:?}");
    assert!(ws.join("src/main.c").exists());
    assert!(
        crate::sandbox::control::control_file(Path::new("src/HEAD")).is_some(),
        "the file tools ask too"
    );
}

/// Sixth hostile review, H6: a rebase stopped at `break` in a submodule's
/// git folder (`.git/modules/…`), its next line an `exec`: the person's
/// `git rebase --continue` in the submodule ran it. Every git folder's
/// to-do lists are disarmed, not only the top repository's.
#[test]
fn a_submodules_or_nested_repositorys_rebase_exec_is_disarmed() {
    let (_d, ws) = repo();
    let q = ws.parent().unwrap().join("quarantine");
    let module = ws.join(".git/modules/vendor/lib");
    put(&module, "HEAD", "ref: refs/heads/main\n");
    put(&module, "config", "[core]\n\tbare = false\n");
    std::fs::create_dir_all(module.join("objects")).unwrap();
    std::fs::create_dir_all(module.join("refs")).unwrap();
    put(&ws, "nested/.git/HEAD", "ref: refs/heads/main\n");
    let mut census = Census::take(&ws);
    let todo = "break\nexec touch /tmp/never\npick 0000000 x\n";
    put(&module, "rebase-merge/git-rebase-todo", todo);
    put(&ws, "nested/.git/rebase-merge/git-rebase-todo", todo);
    let said = census.check(&q, &[]);
    for list in [
        module.join("rebase-merge/git-rebase-todo"),
        ws.join("nested/.git/rebase-merge/git-rebase-todo"),
    ] {
        let now = std::fs::read_to_string(&list).unwrap_or_default();
        assert!(
            !now.lines().any(|l| l.starts_with("exec")),
            "{list:?}: {now} {said:?}"
        );
    }
}

/// Fourth review of session 14 (A): an approved write's folder was taken
/// in as read again after its plants were moved, so a plant put back at
/// once was taken in. What is read again must hold nothing but what was
/// judged, less what was moved.
#[test]
fn a_plant_put_back_after_the_move_is_something_new() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join(".cursor");
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::write(dir.join("rules/style.mdc"), "tabs").unwrap();
    std::fs::write(dir.join("rules/zz-evil.mdc"), "evil").unwrap();
    let judged = super::parts_of(&dir);
    let gone: std::collections::BTreeSet<PathBuf> = [PathBuf::from("rules/zz-evil.mdc")].into();
    std::fs::rename(dir.join("rules/zz-evil.mdc"), d.path().join("away")).unwrap();
    assert!(super::parts_of(&dir).nothing_new(&judged, &gone));
    std::fs::write(dir.join("rules/zz-evil.mdc"), "evil").unwrap();
    assert!(!super::parts_of(&dir).nothing_new(&judged, &gone));
    std::fs::remove_file(dir.join("rules/zz-evil.mdc")).unwrap();
    std::fs::write(dir.join("rules/other.mdc"), "evil").unwrap();
    assert!(!super::parts_of(&dir).nothing_new(&judged, &gone));
}
