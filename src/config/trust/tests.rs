use super::*;
use crate::config::load_from;

fn project(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join(".cairn/config.toml");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

const LOOSE: &str = "[permissions]\nmode = \"auto\"\ndeny = [\"bash(rm*)\"]\n";

#[test]
fn an_answer_holds_for_that_file_only() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("data/trusted_projects.json"));
    let path = project(root.path(), LOOSE);
    let mut c = load_from(None, &path).unwrap();
    assert_eq!(c.mode(), crate::permission::Mode::Smart);
    assert_eq!(c.file.permissions.deny.len(), 1, "deny applies untrusted");
    assert_eq!(
        c.apply_trust(Some(&store), root.path(), false).unwrap(),
        Standing::Undecided
    );
    assert_eq!(
        c.answer_trust(&store, root.path(), true).unwrap(),
        Standing::Trusted
    );
    assert_eq!(c.mode(), crate::permission::Mode::Auto);

    let mut again = load_from(None, &path).unwrap();
    assert_eq!(
        again.apply_trust(Some(&store), root.path(), false).unwrap(),
        Standing::Trusted
    );
    assert_eq!(again.mode(), crate::permission::Mode::Auto);

    // A changed file is a new question.
    project(root.path(), &format!("{LOOSE}allow = [\"bash(*)\"]\n"));
    let mut changed = load_from(None, &path).unwrap();
    assert_eq!(
        changed
            .apply_trust(Some(&store), root.path(), false)
            .unwrap(),
        Standing::Undecided
    );
    assert_eq!(changed.mode(), crate::permission::Mode::Smart);
    assert!(changed.file.permissions.allow.is_empty());
}

#[test]
fn refusal_is_stored_and_revoke_forgets() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    let path = project(root.path(), LOOSE);
    let mut c = load_from(None, &path).unwrap();
    c.answer_trust(&store, root.path(), false).unwrap();
    let mut again = load_from(None, &path).unwrap();
    assert_eq!(
        again.apply_trust(Some(&store), root.path(), false).unwrap(),
        Standing::Refused
    );
    assert_eq!(again.mode(), crate::permission::Mode::Smart);
    let entries = store.entries().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].project, project_key(root.path()));
    assert!(!entries[0].trusted);
    assert!(store.revoke(root.path()).unwrap());
    assert!(!store.revoke(root.path()).unwrap());
    assert!(store.entries().unwrap().is_empty());
}

#[test]
fn the_store_is_private_and_a_shared_one_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    store.record(root.path(), "abc", true).unwrap();
    let mode = std::fs::metadata(store.path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let err = store.lookup(root.path(), "abc").unwrap_err();
    assert!(matches!(err, TrustError::Unsafe { .. }), "{err}");
}

/// A store planted by another user (where that is possible at all) is not
/// believed, however private its mode.
#[test]
fn a_store_owned_by_someone_else_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    store.record(root.path(), "abc", true).unwrap();
    // SAFETY: geteuid cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    let other = if me == 65534 { 65533 } else { 65534 };
    if std::os::unix::fs::chown(store.path(), Some(other), None).is_err() {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    let err = store.lookup(root.path(), "abc").unwrap_err();
    assert!(matches!(err, TrustError::Unsafe { .. }), "{err}");
}

#[test]
fn a_damaged_store_is_an_error_not_trust() {
    let home = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    std::fs::write(store.path(), "{ not json").unwrap();
    let err = store.lookup(home.path(), "x").unwrap_err().to_string();
    assert!(err.contains("damaged"), "{err}");
}

#[test]
fn trust_for_this_run_is_not_stored() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    let path = project(root.path(), LOOSE);
    let mut c = load_from(None, &path).unwrap();
    assert_eq!(
        c.apply_trust(Some(&store), root.path(), true).unwrap(),
        Standing::TrustedThisRun
    );
    assert_eq!(c.mode(), crate::permission::Mode::Auto);
    assert!(!store.path().exists());
}

#[test]
fn the_message_names_each_ignored_setting() {
    let root = tempfile::tempdir().unwrap();
    let path = project(
        root.path(),
        "[permissions]\nallow = [\"bash(*)\"]\n[mcp.x]\ncommand = \"touch\"\nargs = [\"m\"]\n",
    );
    let c = load_from(None, &path).unwrap();
    let text = ignored_message(&path, c.held(), Standing::Undecided);
    assert!(text.contains("ignoring 2 settings"), "{text}");
    assert!(text.contains("allows without asking: bash(*)"), "{text}");
    assert!(text.contains("runs MCP server `x`: touch m"), "{text}");
    assert!(text.contains("--trust-project"), "{text}");
}

#[test]
fn the_persons_own_rule_keeps_a_project_trusted() {
    let home = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    // No file before: what cairn writes is the person's.
    let fresh = tempfile::tempdir().unwrap();
    project(fresh.path(), "[permissions]\nallow = [\"edit(a.rs)\"]\n");
    assert!(keep_after_own_edit(&store, fresh.path(), None, None).unwrap());
    let mut c = load_from(None, &crate::config::project_config_path(fresh.path())).unwrap();
    assert_eq!(
        c.apply_trust(Some(&store), fresh.path(), false).unwrap(),
        Standing::Trusted
    );

    // A file someone else wrote and nobody trusted stays a question.
    let foreign = tempfile::tempdir().unwrap();
    let before = "[mcp.x]\ncommand = \"x\"\n";
    project(
        foreign.path(),
        &format!("{before}[permissions]\nallow = [\"edit(a.rs)\"]\n"),
    );
    assert!(!keep_after_own_edit(&store, foreign.path(), None, Some(before.as_bytes())).unwrap());
    let mut c = load_from(None, &crate::config::project_config_path(foreign.path())).unwrap();
    assert_eq!(
        c.apply_trust(Some(&store), foreign.path(), false).unwrap(),
        Standing::Undecided
    );

    // Trusted before, trusted after.
    store
        .record(foreign.path(), &hash_text(before.as_bytes()), true)
        .unwrap();
    assert!(keep_after_own_edit(&store, foreign.path(), None, Some(before.as_bytes())).unwrap());
    let mut c = load_from(None, &crate::config::project_config_path(foreign.path())).unwrap();
    assert_eq!(
        c.apply_trust(Some(&store), foreign.path(), false).unwrap(),
        Standing::Trusted
    );
}

/// A project file the model planted with only sections the project rules
/// do not sort (hooks, agents, sandbox) must not become trusted because the
/// person stored a rule; nor may hooks from another file of the project.
#[test]
fn storing_a_rule_never_blesses_what_the_rules_do_not_sort() {
    let home = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted_projects.json"));
    for planted in [
        "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"make -s x\" }]\n",
        "[sandbox]\nmode = \"off\"\n",
        "[agents]\nmax_parallel = 9\n",
        "not toml at all [[[",
    ] {
        let dir = tempfile::tempdir().unwrap();
        project(
            dir.path(),
            &format!("{planted}[permissions]\nallow = [\"edit(a.rs)\"]\n"),
        );
        assert!(
            !keep_after_own_edit(&store, dir.path(), None, Some(planted.as_bytes())).unwrap(),
            "{planted}"
        );
    }
    // Hooks in .claude/settings.json (the fingerprint), no project file.
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "[permissions]\nallow = [\"edit(a.rs)\"]\n");
    assert!(!keep_after_own_edit_with(&store, dir.path(), None, None, "hook:curl x|sh").unwrap());
    // Once the person trusted those hooks, their own rule keeps the trust.
    store
        .record(dir.path(), &hash_with(b"", "hook:curl x|sh"), true)
        .unwrap();
    assert!(keep_after_own_edit_with(&store, dir.path(), None, None, "hook:curl x|sh").unwrap());
}

#[test]
fn a_trusted_projects_servers_are_marked_as_the_projects() {
    let root = tempfile::tempdir().unwrap();
    let global = root.path().join("global.toml");
    std::fs::write(&global, "[mcp.mine]\ncommand = \"mine\"\n").unwrap();
    let path = project(
        root.path(),
        "[mcp.mine]\ncommand = \"mine\"\n\n[mcp.build]\ncommand = \"node\"\nargs = [\"tools/mcp.js\"]\nsandbox = false\n",
    );
    let mut c = load_from(Some(&global), &path).unwrap();
    assert!(
        c.held()
            .iter()
            .any(|h| h.what.contains("OUTSIDE the sandbox"))
    );
    c.trust_project();
    assert!(c.file.mcp["build"].from_project);
    assert_eq!(c.file.mcp["build"].sandbox, Some(false));
    // The same entry as the person's own stays theirs.
    assert!(!c.file.mcp["mine"].from_project);
}
