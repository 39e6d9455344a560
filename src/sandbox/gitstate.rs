//! Git state a command leaves behind that the person's own git later runs
//! or obeys outside the sandbox, beyond the config and hooks the binds
//! cover:
//!
//! - an interrupted rebase's to-do list (`.git/rebase-merge/git-rebase-todo`,
//!   and the sequencer's `.git/sequencer/todo`): `git rebase --continue`
//!   runs each `exec`/`x` line as a shell command. Those lines are turned
//!   into comments (the original goes to the quarantine), so the rebase
//!   itself still continues;
//! - a merge strategy named in that state (`rebase-merge/strategy`,
//!   `sequencer/opts`): git runs `git-merge-<name>` from the person's
//!   `PATH`. A name that is not one of git's own is moved away;
//! - files the repository's config includes (`[include] path = …`,
//!   `[includeIf …] path = …`) that lie in the workspace: git reads them as
//!   its config, so they are bound read-only like `.git/config` itself
//!   (`policy`), and a new one is a plant (`census`).
//!
//! `.gitattributes` only chooses among filter, diff and merge drivers the
//! config defines, and git ignores `update = !command` and `ext::` URLs
//! from `.gitmodules`; neither needs more (docs/security.md).

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The to-do lists `git rebase --continue` and `git cherry-pick
/// --continue` carry out, relative to the git folder.
pub const TODO_LISTS: &[&str] = &[
    "rebase-merge/git-rebase-todo",
    "rebase-apply/git-rebase-todo",
    "sequencer/todo",
];

/// Files that name a merge strategy, relative to the git folder.
const STRATEGY_FILES: &[&str] = &["rebase-merge/strategy", "sequencer/opts"];

/// git's own merge strategies: anything else is a program found by name.
const BUILTIN_STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/// Whether a to-do line runs a shell command.
fn runs_a_command(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    word == "exec" || word == "x"
}

/// `text` with each command line made a comment, or `None` when it has
/// none.
pub fn disarm_todo(text: &str) -> Option<String> {
    if !text.lines().any(runs_a_command) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        if runs_a_command(line) {
            out.push_str("# disabled by cairn (written inside its sandbox): ");
        }
        out.push_str(line);
    }
    Some(out)
}

/// Whether a strategy file names a program rather than one of git's own
/// strategies.
fn names_a_program(rel: &str, text: &str) -> bool {
    let names: Vec<&str> = if rel.ends_with("opts") {
        text.lines()
            .filter_map(|l| {
                let (key, value) = l.split_once('=')?;
                (key.trim() == "strategy").then(|| value.trim().trim_matches('"'))
            })
            .collect()
    } else {
        text.split_whitespace().collect()
    };
    names.iter().any(|n| !BUILTIN_STRATEGIES.contains(n))
}

/// Disarms the state under `git` (a workspace's `.git` folder) that would
/// run a command on the person's next `git rebase --continue` and says what
/// it did. `quarantine_file` moves a file (or link) away and says where.
/// Paths in `accepted` were written by a file tool the person approved.
pub fn disarm(
    git: &Path,
    accepted: &[PathBuf],
    quarantine_file: &mut dyn FnMut(&Path) -> std::io::Result<PathBuf>,
) -> Vec<String> {
    let mut said = Vec::new();
    for rel in TODO_LISTS.iter().chain(STRATEGY_FILES) {
        let path = git.join(rel);
        if accepted.contains(&path) {
            continue;
        }
        let shown = format!(".git/{rel}");
        // The folder (`rebase-merge`, `sequencer`) is opened once, not
        // through a link, and every step below works in it: a link
        // planted in its place is moved as it is, never followed.
        let (folder, name) = rel.split_once('/').unwrap_or(("", rel));
        let dir = match pin_folder(git, folder) {
            Pinned::Absent => continue,
            Pinned::Link => {
                let link = git.join(folder);
                said.push(moved(&format!(".git/{folder}"), quarantine_file(&link)));
                continue;
            }
            Pinned::Dir(fd) => fd,
        };
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            // A link or anything else is never followed: moved as it is.
            said.push(moved(&shown, quarantine_file(&path)));
            continue;
        }
        if meta.len() > super::head::HEAD_BYTES {
            // git reads it whole; cairn would check only the head of it.
            said.push(too_large(&shown, quarantine_file(&path)));
            continue;
        }
        let text = String::from_utf8_lossy(&read_in(&dir, name)).into_owned();
        if STRATEGY_FILES.contains(rel) {
            if names_a_program(rel, &text) {
                said.push(moved(&shown, quarantine_file(&path)));
            }
            continue;
        }
        let Some(disarmed) = disarm_todo(&text) else {
            continue;
        };
        said.push(rewrite(
            &dir,
            name,
            &path,
            &shown,
            &disarmed,
            quarantine_file,
        ));
    }
    said
}

enum Pinned {
    Absent,
    Link,
    Dir(OwnedFd),
}

/// `git/folder` opened as a directory, not through a link.
fn pin_folder(git: &Path, folder: &str) -> Pinned {
    let path = git.join(folder);
    match std::fs::symlink_metadata(&path) {
        Err(_) => return Pinned::Absent,
        Ok(m) if !m.is_dir() => return Pinned::Link,
        Ok(_) => {}
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    match open_at(libc::AT_FDCWD, path.as_os_str(), flags, 0) {
        Ok(fd) => Pinned::Dir(fd),
        // Swapped for a link between the look and the open.
        Err(_) => Pinned::Link,
    }
}

fn open_at(at: i32, name: &OsStr, flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
    let c = CString::new(name.as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: a valid C string; the result is checked.
    let fd = unsafe { libc::openat(at, c.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just returned to us and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The head of the regular file `name` in `dir`, not through a link.
fn read_in(dir: &OwnedFd, name: &str) -> Vec<u8> {
    use std::io::Read;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW;
    let mut out = Vec::new();
    if let Ok(fd) = open_at(dir.as_raw_fd(), OsStr::new(name), flags, 0) {
        let f = std::fs::File::from(fd);
        if f.metadata().is_ok_and(|m| m.is_file()) {
            let _ = f.take(super::head::HEAD_BYTES).read_to_end(&mut out);
        }
    }
    out
}

fn moved(shown: &str, result: std::io::Result<PathBuf>) -> String {
    match result {
        Ok(to) => format!(
            "`{shown}` names a program your own git would run when you continue the \
             rebase; cairn moved it to {}",
            to.display()
        ),
        Err(e) => format!(
            "`{shown}` names a program your own git would run when you continue the \
             rebase; cairn could not move it ({e}): remove it before you run git here"
        ),
    }
}

fn too_large(shown: &str, result: std::io::Result<PathBuf>) -> String {
    match result {
        Ok(to) => format!(
            "`{shown}` is too large for cairn to check for commands your own `git rebase \
             --continue` would run outside the sandbox; cairn moved it to {} (run `git rebase \
             --abort`, or look at it and put it back)",
            to.display()
        ),
        Err(e) => format!(
            "`{shown}` is too large for cairn to check for commands your own `git rebase \
             --continue` would run outside the sandbox, and cairn could not move it ({e}): \
             run `git rebase --abort` before you run git here"
        ),
    }
}

/// Keeps the original in the quarantine and puts the disarmed list in its
/// place: a new file made in the pinned folder (`O_EXCL | O_NOFOLLOW`, so
/// whatever a command left under the new name, a link included, is never
/// written through) and renamed over the list in the same folder.
fn rewrite(
    dir: &OwnedFd,
    name: &str,
    path: &Path,
    shown: &str,
    disarmed: &str,
    quarantine_file: &mut dyn FnMut(&Path) -> std::io::Result<PathBuf>,
) -> String {
    let fresh = CString::new(format!("{name}.cairn-disarmed")).expect("no NUL in a fixed name");
    let at = dir.as_raw_fd();
    let done = (|| {
        use std::io::Write;
        // SAFETY: a valid descriptor and C string; removing a link removes
        // the link itself.
        unsafe { libc::unlinkat(at, fresh.as_ptr(), 0) };
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let fd = open_at(at, OsStr::from_bytes(fresh.as_bytes()), flags, 0o644)?;
        std::fs::File::from(fd).write_all(disarmed.as_bytes())?;
        let to = quarantine_file(path)?;
        let target = CString::new(name).map_err(std::io::Error::other)?;
        // SAFETY: valid descriptors and C strings; the result is checked.
        if unsafe { libc::renameat(at, fresh.as_ptr(), at, target.as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(to)
    })();
    match done {
        Ok(to) => format!(
            "`{shown}` held `exec` lines, which your own `git rebase --continue` would run \
             outside the sandbox; cairn turned them into comments (the original is in {})",
            to.display()
        ),
        Err(e) => {
            // SAFETY: as above.
            unsafe { libc::unlinkat(at, fresh.as_ptr(), 0) };
            format!(
                "`{shown}` holds `exec` lines, which your own `git rebase --continue` would \
                 run outside the sandbox, and cairn could not disarm them ({e}): run `git \
                 rebase --abort` or remove them before you continue"
            )
        }
    }
}

/// The files git reads as config that lie inside `workspace`, not through
/// a link (whether they exist or not), as workspace-relative paths: what
/// the repository's `.git/config` includes, and what the person's own
/// global config (`~/.gitconfig`, `~/.config/git/config`,
/// `$GIT_CONFIG_GLOBAL`) includes — `[include]` or any `[includeIf]`,
/// whatever its condition, and includes of includes. Those configs are
/// read-only to commands (bound, or outside the workspace), so what they
/// include is fixed while a session runs; the included files are bound
/// read-only and watched like `.git/config` itself.
pub fn included_configs(workspace: &Path) -> Vec<PathBuf> {
    let home = crate::paths::home_dir();
    let mut queue = vec![workspace.join(".git/config")];
    queue.extend(global_configs(home.as_deref()));
    included_from(workspace, queue, home.as_deref())
}

/// The person's own global git config files: `$GIT_CONFIG_GLOBAL`,
/// `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`.
fn global_configs(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os("GIT_CONFIG_GLOBAL")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if let Some(h) = home {
        out.push(h.join(".gitconfig"));
    }
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")));
    if let Some(x) = xdg {
        out.push(x.join("git/config"));
    }
    out
}

/// The hooks folders `core.hooksPath` names inside `workspace` (husky's
/// `.husky/_`, a `.githooks`), from the repository's config, the person's
/// global config or any file they include, as workspace-relative paths.
/// The person's own git runs the scripts there on `git commit`, outside
/// the sandbox, so they are bound read-only and watched like `.git/hooks`.
/// Every value found counts (not only the one git would pick): a superset
/// is safe.
pub fn hooks_dirs(workspace: &Path) -> Vec<PathBuf> {
    let home = crate::paths::home_dir();
    let mut files = vec![workspace.join(".git/config")];
    files.extend(global_configs(home.as_deref()));
    files.extend(
        included_configs(workspace)
            .into_iter()
            .map(|rel| workspace.join(rel)),
    );
    let mut out = Vec::new();
    for file in files {
        let text = String::from_utf8_lossy(&super::head::head(&file)).into_owned();
        for value in config_values(&text, &["core"], "hookspath") {
            // Relative to the top of the working tree, where hooks run.
            let Some(joined) = expand(value, workspace, home.as_deref()) else {
                continue;
            };
            push_relative(&mut out, &joined, workspace);
            // husky's `.husky/_` holds stubs that run `.husky/<hook>`.
            if joined.file_name().is_some_and(|n| n == "_")
                && let Some(parent) = joined.parent()
            {
                push_relative(&mut out, parent, workspace);
            }
        }
    }
    out
}

/// `value` as a path: `~/` from `home`, else relative to `dir`.
fn expand(value: &str, dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let joined = match value.strip_prefix("~/") {
        Some(rest) => home?.join(rest),
        None => dir.join(value),
    };
    Some(crate::paths::lexical(&joined))
}

/// Adds `path` to `out` as a workspace-relative path when it lies inside.
fn push_relative(out: &mut Vec<PathBuf>, path: &Path, workspace: &Path) {
    if let Ok(rel) = path.strip_prefix(workspace)
        && !rel.as_os_str().is_empty()
        && !out.iter().any(|o| o == rel)
    {
        out.push(rel.to_path_buf());
    }
}

/// [`included_configs`] from the config files `queue`, `~` being `home`.
fn included_from(workspace: &Path, queue: Vec<PathBuf>, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for file in include_closure(queue, home).1 {
        push_relative(&mut out, &file, workspace);
    }
    out
}

/// The config files `queue` names and every file they include, in turn
/// (at most 32 read): the files read, and the included ones in the order
/// they were named.
fn include_closure(mut queue: Vec<PathBuf>, home: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    queue.reverse();
    let mut read: Vec<PathBuf> = Vec::new();
    let mut included = Vec::new();
    while let Some(file) = queue.pop() {
        // A chain of includes ends somewhere: at most this many files.
        if read.contains(&file) || read.len() >= 32 {
            continue;
        }
        read.push(file.clone());
        let text = String::from_utf8_lossy(&super::head::head(&file)).into_owned();
        let dir = file.parent().unwrap_or(Path::new("/"));
        let mut named = Vec::new();
        for value in config_values(&text, &["include", "includeif"], "path") {
            // A relative path is relative to the including file's folder.
            if let Some(joined) = expand(value, dir, home) {
                named.push(joined);
            }
        }
        included.extend(named.iter().cloned());
        queue.extend(named.into_iter().rev());
    }
    (read, included)
}

/// The person's own git configs: the global ones, every file in the
/// git config folder (`~/.config/git/*`), and what they include, for the
/// sandbox to show without credentials.
pub fn persons_configs(home: &Path) -> Vec<PathBuf> {
    let mut queue = global_configs(Some(home));
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    if let Ok(entries) = std::fs::read_dir(xdg.join("git")) {
        let mut files: Vec<PathBuf> = (entries.flatten())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
            .map(|e| e.path())
            .collect();
        files.sort();
        queue.extend(files);
    }
    include_closure(queue, Some(home)).0
}

/// The values of `key` in the sections named one of `sections` of a git
/// config text (names compared without case, as git does).
fn config_values<'a>(text: &'a str, sections: &[&str], key: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(section) = line.strip_prefix('[') {
            let name = section.split([']', ' ', '"']).next().unwrap_or("");
            inside = sections.iter().any(|s| name.eq_ignore_ascii_case(s));
            continue;
        }
        let Some((k, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        if inside && k.trim().eq_ignore_ascii_case(key) && !value.is_empty() {
            out.push(value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::head::HEAD_BYTES;
    use super::*;

    /// The person's own `~/.gitconfig` including a file of the workspace
    /// (`[includeIf "gitdir:~/work/"]`), through another include too: git
    /// reads it as config, so it is bound and watched (session 5, item 4).
    #[test]
    fn a_global_config_including_a_workspace_file_is_found() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let ws = home.join("work/proj");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = a\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/work/proj/.gitcfg\n\
             [include]\n\tpath = .gitconfig.d/more\n",
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".gitconfig.d")).unwrap();
        std::fs::write(
            home.join(".gitconfig.d/more"),
            "[include]\n\tpath = ../work/proj/tools/git.inc\n",
        )
        .unwrap();
        std::fs::write(ws.join(".git/config"), "[include]\n\tpath = ../local.cfg\n").unwrap();
        let found = included_from(
            &ws,
            vec![ws.join(".git/config"), home.join(".gitconfig")],
            Some(&home),
        );
        let mut found: Vec<_> = found.iter().map(|p| p.display().to_string()).collect();
        found.sort();
        assert_eq!(found, [".gitcfg", "local.cfg", "tools/git.inc"]);
    }

    #[test]
    fn exec_lines_become_comments_and_the_rest_stays() {
        let todo = "pick 1a2b one\nexec make test\nx touch /tmp/p\n  exec\tsh -c x\nexecute me\n";
        let out = disarm_todo(todo).unwrap();
        assert!(out.starts_with("pick 1a2b one\n# disabled by cairn"));
        assert_eq!(
            out.lines().filter(|l| l.starts_with("# disabled")).count(),
            3
        );
        assert!(out.ends_with("execute me\n"));
        assert!(!out.lines().any(runs_a_command));
        assert_eq!(disarm_todo("pick 1 a\n# exec x\nbreak\n"), None);
    }

    #[test]
    fn only_gits_own_strategies_pass() {
        assert!(!names_a_program("rebase-merge/strategy", "ort\n"));
        assert!(names_a_program("rebase-merge/strategy", "evil\n"));
        assert!(!names_a_program(
            "sequencer/opts",
            "[options]\n\tstrategy = recursive\n"
        ));
        assert!(names_a_program(
            "sequencer/opts",
            "[options]\n\tstrategy = \"x\"\n"
        ));
    }

    #[test]
    fn includes_inside_the_workspace_are_found() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(
            ws.join(".git/config"),
            "[core]\n\tbare = false\n[include]\n\tpath = ../.gitconfig\n\
             [includeIf \"onbranch:main\"]\n\tpath = extra.cfg\n[user]\n\tpath = ../no\n\
             [include]\n\tpath = ~/.gitconfig-work\n\tpath = ../../outside\n",
        )
        .unwrap();
        assert_eq!(
            included_configs(&ws),
            [PathBuf::from(".gitconfig"), PathBuf::from(".git/extra.cfg")]
        );
    }

    /// A quarantine for the tests: moves into `q` and says where.
    fn into(q: &Path) -> impl FnMut(&Path) -> std::io::Result<PathBuf> + '_ {
        move |p: &Path| {
            std::fs::create_dir_all(q)?;
            let to = q.join(p.file_name().unwrap());
            std::fs::rename(p, &to)?;
            Ok(to)
        }
    }

    #[test]
    fn the_disarmed_copy_is_never_written_through_a_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let git = d.path().join("ws/.git");
        std::fs::create_dir_all(git.join("rebase-merge")).unwrap();
        let todo = git.join("rebase-merge/git-rebase-todo");
        std::fs::write(&todo, "exec true\necho planted\n").unwrap();
        let victim = d.path().join("bashrc");
        std::fs::write(&victim, "the person's own\n").unwrap();
        let link = git.join("rebase-merge/git-rebase-todo.cairn-disarmed");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let dangling = git.join("sequencer/todo.cairn-disarmed");
        std::fs::create_dir_all(git.join("sequencer")).unwrap();
        std::fs::write(git.join("sequencer/todo"), "x true\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("made"), &dangling).unwrap();
        let said = disarm(&git, &[], &mut into(&d.path().join("q")));
        assert_eq!(said.len(), 2, "{said:?}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "the person's own\n"
        );
        assert!(!d.path().join("made").exists());
        let now = std::fs::read_to_string(&todo).unwrap();
        assert!(now.starts_with("# disabled by cairn"), "{now}");
        assert!(std::fs::symlink_metadata(&link).is_err());
    }

    #[test]
    fn a_list_too_large_to_check_and_a_linked_folder_are_moved() {
        let d = tempfile::tempdir().unwrap();
        let git = d.path().join("ws/.git");
        std::fs::create_dir_all(git.join("rebase-merge")).unwrap();
        let todo = git.join("rebase-merge/git-rebase-todo");
        let mut big = format!("pick 1 {}\n", "a".repeat(HEAD_BYTES as usize));
        big.push_str("exec sh payload\n");
        std::fs::write(&todo, big).unwrap();
        let elsewhere = d.path().join("ws/src/state");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("todo"), "exec sh payload\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, git.join("sequencer")).unwrap();
        let said = disarm(&git, &[], &mut into(&d.path().join("q")));
        assert!(said.iter().any(|s| s.contains("too large")), "{said:?}");
        assert!(!todo.exists());
        assert!(
            std::fs::symlink_metadata(git.join("sequencer")).is_err(),
            "{said:?}"
        );
        // The folder the link named is left as it was: nothing followed it.
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("todo")).unwrap(),
            "exec sh payload\n"
        );
    }

    /// Fifth hostile review (G1): `core.hooksPath` pointing into the
    /// worktree (husky, `.githooks`) names scripts the person's `git
    /// commit` runs; they are found from the repository's config.
    #[test]
    fn a_hooks_path_inside_the_workspace_is_found() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(
            ws.join(".git/config"),
            "[core]\n\thooksPath = .husky/_\n[alias]\n\thooksPath = nope\n[core]\n\thookspath = \"../outside\"\n",
        )
        .unwrap();
        // husky's stubs run the hooks one folder up: both are held.
        assert_eq!(
            hooks_dirs(&ws),
            [PathBuf::from(".husky/_"), PathBuf::from(".husky")]
        );
    }
}
