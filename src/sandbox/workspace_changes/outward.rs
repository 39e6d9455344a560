//! The folders outside a workspace that it reaches through links: a
//! package linked in (`npm link`, a workspace link, `ext -> ../../shared`),
//! a Python package installed in editable mode (a `.pth` path file, an
//! editable finder's mapping, an `.egg-link`). A server outside the sandbox
//! that loads from the workspace loads from these too, so a session that
//! changes one of them changes what the server runs.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// At most this many entries of a workspace are looked at: about a second
/// on a cold disk, a fraction of that on a warm one.
const MAX_ENTRIES: usize = 400_000;

/// A path file or finder larger than this is not a path file.
const MAX_PATH_FILE: u64 = 64 * 1024;

/// Links are followed this many steps from the workspace: a linked
/// package that itself links on (`a/node_modules/b -> ../../b`).
const CHAIN: usize = 4;

/// Folders of the kernel's own, never walked when a link leads there.
const PSEUDO: &[&str] = &["/proc", "/sys", "/dev"];

/// What [`find`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outward {
    /// Each folder (or file) outside the workspace a link leads to,
    /// canonical, with the first link (relative to the workspace, or
    /// absolute when it lies in a folder reached before) that leads there.
    pub targets: Vec<(PathBuf, PathBuf)>,
    /// Files (in the workspace or a folder it reaches) with more than one
    /// name: hard links a package manager made from its cache (uv, pnpm)
    /// or that another project shares. Written in place under another
    /// name, they change here with no mark here, so their state counts
    /// (see [`stamps`]).
    pub shared: Vec<PathBuf>,
    /// The walk stopped at [`MAX_ENTRIES`] before it had seen everything.
    pub cut: bool,
}

/// Walks `root` (canonical) without following links and returns where its
/// links that leave it lead, then walks those folders in turn (up to
/// [`CHAIN`] steps away), all within one budget of entries.
pub fn find(root: &Path) -> Outward {
    find_from(root, &[])
}

/// [`find`], with `also` (folders outside `root` a server loads from:
/// those its command line names, the interpreter's own site folders)
/// walked from the start as `root` is.
pub fn find_from(root: &Path, also: &[PathBuf]) -> Outward {
    let found = walk(root, also, MAX_ENTRIES, walk_one);
    if !found.cut {
        return found;
    }
    // Cut, the threads' walk would count a different part each time (and
    // the trust it feeds would never stick): the same part every time.
    walk(root, also, MAX_ENTRIES, walk_one_in_order)
}

/// Walks one folder within the budget; `false` when it ran out first.
type WalkOne = fn(&Path, &Path, &[PathBuf], &mut usize, &mut Outward) -> bool;

fn walk(root: &Path, also: &[PathBuf], max_entries: usize, one: WalkOne) -> Outward {
    let mut out = Outward::default();
    let mut walked: Vec<PathBuf> = Vec::new();
    let mut budget = max_entries;
    let mut round: Vec<PathBuf> = std::iter::once(root.to_path_buf())
        .chain(also.iter().filter(|a| !a.starts_with(root)).cloned())
        .filter(|t| !PSEUDO.iter().any(|p| t.starts_with(p)))
        .collect();
    round.dedup();
    for _ in 0..=CHAIN {
        for folder in &round {
            if walked.iter().any(|w| folder.starts_with(w)) {
                continue;
            }
            walked.push(folder.clone());
            if !one(root, folder, &walked, &mut budget, &mut out) {
                out.cut = true;
                break;
            }
        }
        if out.cut {
            break;
        }
        // The folders reached this round, not inside one walked before.
        round = (out.targets.iter().map(|(t, _)| t))
            .filter(|t| !walked.iter().any(|w| t.starts_with(w)))
            .filter(|t| !PSEUDO.iter().any(|p| t.starts_with(p)))
            .filter(|t| std::fs::metadata(t).is_ok_and(|m| m.is_dir()))
            .cloned()
            .collect();
        round.sort();
        round.dedup();
        if round.is_empty() {
            break;
        }
    }
    out.targets.sort();
    out.shared.sort();
    out
}

/// What one entry of a walk holds: where a link or path file leads, and
/// whether it is a file with another name.
fn look_at(
    path: &Path,
    kind: std::fs::FileType,
    meta: impl FnOnce() -> Option<std::fs::Metadata>,
) -> (Vec<(PathBuf, PathBuf)>, bool) {
    let mut found = Vec::new();
    let mut shared = false;
    if kind.is_symlink() {
        if let Some(target) = crate::paths::physical_path(path) {
            found.push((target, path.to_path_buf()));
        }
    } else if kind.is_file() {
        shared = meta().is_some_and(|m| m.nlink() > 1);
        let dir = path.parent().unwrap_or(path);
        let in_site_packages = dir
            .file_name()
            .is_some_and(|n| n == "site-packages" || n == "dist-packages");
        if in_site_packages {
            found.extend(
                path_file(path, dir)
                    .into_iter()
                    .map(|t| (t, path.to_path_buf())),
            );
        }
    }
    (found, shared)
}

/// Adds the links found in a walk of one folder, the first to each target
/// (in path order) being the one shown.
fn take_links(
    root: &Path,
    walked: &[PathBuf],
    mut links: Vec<(PathBuf, PathBuf)>,
    out: &mut Outward,
) {
    links.sort();
    for (target, link) in links {
        let known = out.targets.iter().any(|(t, _)| *t == target);
        if !walked.iter().any(|w| target.starts_with(w)) && !known {
            let rel = link.strip_prefix(root).unwrap_or(&link).to_path_buf();
            out.targets.push((target, rel));
        }
    }
}

/// A walk of everything below `top` (hidden and ignored files too),
/// links not followed.
fn walker(top: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(top);
    builder.standard_filters(false).follow_links(false);
    builder
}

/// Walks one folder on several threads (reading folders and looking at
/// files is most of the time), adding what leaves every folder walked so
/// far; `false` when the budget ran out first.
fn walk_one(
    root: &Path,
    top: &Path,
    walked: &[PathBuf],
    budget: &mut usize,
    out: &mut Outward,
) -> bool {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let left = AtomicUsize::new(*budget);
    let cut = AtomicBool::new(false);
    // (target, link) and shared files, gathered from every thread.
    let links: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::default();
    let shared: Mutex<Vec<PathBuf>> = Mutex::default();
    walker(top).threads(threads).build_parallel().run(|| {
        let (left, cut, links, shared) = (&left, &cut, &links, &shared);
        Box::new(move |entry| {
            use ignore::WalkState;
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let taken =
                left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
            if taken.is_err() {
                cut.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Some(kind) = entry.file_type() else {
                return WalkState::Continue;
            };
            let (found, is_shared) = look_at(entry.path(), kind, || entry.metadata().ok());
            if is_shared {
                crate::sync::lock(shared).push(entry.path().to_path_buf());
            }
            if !found.is_empty() {
                crate::sync::lock(links).extend(found);
            }
            WalkState::Continue
        })
    });
    *budget = left.into_inner();
    out.shared
        .extend(shared.into_inner().unwrap_or_else(|e| e.into_inner()));
    let links = links.into_inner().unwrap_or_else(|e| e.into_inner());
    take_links(root, walked, links, out);
    !cut.into_inner()
}

/// [`walk_one`] on one thread, in name order: the same entries every time
/// when the budget runs out.
fn walk_one_in_order(
    root: &Path,
    top: &Path,
    walked: &[PathBuf],
    budget: &mut usize,
    out: &mut Outward,
) -> bool {
    let mut links = Vec::new();
    let mut whole = true;
    let entries = walker(top).sort_by_file_name(|a, b| a.cmp(b)).build();
    for entry in entries.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Some(left) = budget.checked_sub(1) else {
            whole = false;
            break;
        };
        *budget = left;
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let (found, is_shared) = look_at(entry.path(), kind, || entry.metadata().ok());
        if is_shared {
            out.shared.push(entry.path().to_path_buf());
        }
        links.extend(found);
    }
    take_links(root, walked, links, out);
    whole
}

/// A digest of the state of `files` (device, inode, size and change time,
/// which no one can set back): it differs once any of them was written,
/// replaced, removed, or linked to under yet another name.
pub fn stamps(files: &[PathBuf]) -> String {
    let mut text = String::new();
    for file in files {
        text.push_str(&file.display().to_string());
        match std::fs::symlink_metadata(file) {
            Ok(m) => text.push_str(&format!(
                "\t{}:{}:{}:{}.{}\n",
                m.dev(),
                m.ino(),
                m.size(),
                m.ctime(),
                m.ctime_nsec()
            )),
            Err(_) => text.push_str("\tgone\n"),
        }
    }
    crate::config::trust::hash_text(text.as_bytes())
}

/// What a server's command line and environment name outside `root`
/// (canonical): a script, a module folder, a `PYTHONPATH`/`NODE_PATH`
/// entry, an interpreter in a virtual environment — a server loads from
/// there as from the workspace. Each word is split at white space and `:`
/// (path lists) and after `=` (`--flag=PATH`); `~`, `$HOME` and `${HOME}`
/// are filled in; a piece counts when it holds a `/`, relative ones taken
/// from `root`. A named file counts as its folder (its last part is not
/// resolved: a virtual environment's `python` is a link to the system's),
/// and a virtual environment's `bin` as the whole environment.
pub fn named<'a>(root: &Path, words: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    let mut out = named_anywhere(root, words);
    out.retain(|at| !at.starts_with(root));
    out
}

/// [`named`], inside `root` as well as outside it.
pub fn named_anywhere<'a>(root: &Path, words: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut out: Vec<PathBuf> = Vec::new();
    for word in words {
        let word = word.replace("${HOME}", &home).replace("$HOME", &home);
        for part in word.split_whitespace() {
            let value = part.split_once('=').map_or(part, |(_, v)| v);
            for piece in value.split(':').filter(|p| p.contains('/')) {
                let piece = match piece.strip_prefix("~/") {
                    Some(rest) if !home.is_empty() => format!("{home}/{rest}"),
                    _ => piece.to_string(),
                };
                let Some(at) = folder_of(&crate::paths::lexical(&root.join(&piece))) else {
                    continue;
                };
                if !out.contains(&at) {
                    out.push(at);
                }
            }
        }
    }
    out.sort();
    out
}

/// The folder a named path loads from: itself when it is a folder, else
/// its parent (canonical, the last part left as named); a virtual
/// environment for its `bin` folder.
fn folder_of(path: &Path) -> Option<PathBuf> {
    let real = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    let folder = match real {
        true => crate::paths::physical_path(path)?,
        false => crate::paths::physical_path(path.parent()?)?,
    };
    let venv = folder
        .parent()
        .filter(|p| folder.ends_with("bin") && p.join("pyvenv.cfg").is_file());
    Some(venv.map_or(folder.clone(), Path::to_path_buf))
}

/// The folders the path files of a virtual environment's `site-packages`
/// name (an editable install's source folder, wherever it is).
pub fn venv_path_folders(venv: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(libs) = std::fs::read_dir(venv.join("lib")) else {
        return out;
    };
    for lib in libs.flatten().take(8) {
        for name in ["site-packages", "dist-packages"] {
            let site = lib.path().join(name);
            let Ok(entries) = std::fs::read_dir(&site) else {
                continue;
            };
            for entry in entries.flatten().take(4096) {
                if entry.file_type().is_ok_and(|t| t.is_file()) {
                    out.extend(path_file(&entry.path(), &site));
                }
            }
        }
    }
    out
}

/// The folders a Python path file in `site` names: a `.pth` file's path
/// lines, an `.egg-link`'s first line, the paths an editable finder
/// (`__editable___*_finder.py`) maps packages to.
fn path_file(path: &Path, site: &Path) -> Vec<PathBuf> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let finder = name.starts_with("__editable__") && name.ends_with(".py");
    if !(name.ends_with(".pth") || name.ends_with(".egg-link") || finder) {
        return Vec::new();
    }
    let Some(text) = read_small(path) else {
        return Vec::new();
    };
    let named: Vec<String> = if finder {
        quoted_paths(&text)
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("import"))
            .take(if name.ends_with(".egg-link") {
                1
            } else {
                usize::MAX
            })
            .map(str::to_string)
            .collect()
    };
    named
        .iter()
        .filter_map(|p| crate::paths::physical_path(&crate::paths::lexical(&site.join(p))))
        .collect()
}

/// The text of the regular file at `path` when it is at most
/// [`MAX_PATH_FILE`] long. Opened without following a link and without
/// waiting, and looked at once open: a command may have swapped a FIFO or
/// a device in since the walk saw a file, and reading one would hang the
/// start.
fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_PATH_FILE {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_PATH_FILE).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The absolute paths written as string literals in a finder's source
/// (its `MAPPING` and namespace tables).
fn quoted_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for quote in ['\'', '"'] {
        let mut parts = text.split(quote);
        // Every second part lies between quotes.
        parts.next();
        while let Some(inside) = parts.next() {
            if inside.starts_with('/') && !inside.contains('\n') {
                out.push(inside.to_string());
            }
            parts.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_and_path_files_that_leave_the_workspace_are_found() {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let ws = base.join("app");
        let shared = base.join("shared");
        let editable = base.join("editable/src");
        let finder_pkg = base.join("finder/pkg");
        for d in [&ws.join("server"), &shared, &editable, &finder_pkg] {
            std::fs::create_dir_all(d).unwrap();
        }
        let site = ws.join(".venv/lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        // Outward: a relative link, a link to a folder not made yet, path files.
        symlink("../../shared", ws.join("server/ext")).unwrap();
        symlink("../../later/pkg", ws.join("server/soon")).unwrap();
        std::fs::write(
            site.join("_editable.pth"),
            format!("# a comment\nimport sys\n{}\n", editable.display()),
        )
        .unwrap();
        std::fs::write(
            site.join("__editable___pkg_0_1_finder.py"),
            format!(
                "MAPPING: dict[str, str] = {{'pkg': '{}'}}\n",
                finder_pkg.display()
            ),
        )
        .unwrap();
        // Inward: a link inside the workspace and a path file naming it.
        symlink("server", ws.join("srv")).unwrap();
        std::fs::write(site.join("local.pth"), "../../../../server\n").unwrap();
        let later = base.join("later/pkg");
        let got = find(&ws);
        let targets: Vec<&Path> = got.targets.iter().map(|(t, _)| t.as_path()).collect();
        assert!(!got.cut);
        assert_eq!(
            targets,
            {
                let mut want = vec![
                    editable.as_path(),
                    finder_pkg.as_path(),
                    later.as_path(),
                    shared.as_path(),
                ];
                want.sort();
                want
            },
            "{got:?}"
        );
        let link_of = |t: &Path| got.targets.iter().find(|(x, _)| x == t).unwrap().1.clone();
        assert_eq!(link_of(&shared), Path::new("server/ext"));
    }

    #[test]
    fn links_are_followed_on_from_the_folders_they_reach() {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let ws = base.join("app");
        for d in ["app/server", "a/node_modules", "b", "c", "d", "e", "f"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        symlink("../../a", ws.join("server/ext")).unwrap();
        // a → b → c → d → e: four steps on from the first; f is a fifth.
        symlink("../../b", base.join("a/node_modules/b")).unwrap();
        symlink("../c", base.join("b/next")).unwrap();
        symlink("../d", base.join("c/next")).unwrap();
        symlink("../e", base.join("d/next")).unwrap();
        symlink("../f", base.join("e/next")).unwrap();
        // Links back into what was walked add nothing.
        symlink("../app/server", base.join("b/back")).unwrap();
        symlink("node_modules", base.join("a/self")).unwrap();
        let got = walk(&ws, &[], 1000, walk_one);
        let targets: Vec<PathBuf> = got.targets.iter().map(|(t, _)| t.clone()).collect();
        let want: Vec<PathBuf> = ["a", "b", "c", "d", "e"].map(|d| base.join(d)).into();
        assert_eq!(targets, want);
        // A link found outside the workspace is shown by its own path.
        let link_of = |t: &Path| got.targets.iter().find(|(x, _)| x == t).unwrap().1.clone();
        assert_eq!(link_of(&base.join("b")), base.join("a/node_modules/b"));
        // The budget is one for the whole chain.
        assert!(walk(&ws, &[], 6, walk_one).cut);
    }

    #[test]
    fn files_with_another_name_are_counted_and_their_change_is_seen() {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let ws = base.join("app");
        std::fs::create_dir_all(ws.join(".venv/lib")).unwrap();
        std::fs::create_dir_all(base.join("cache")).unwrap();
        std::fs::write(base.join("cache/mod.py"), "x = 1\n").unwrap();
        std::fs::hard_link(base.join("cache/mod.py"), ws.join(".venv/lib/mod.py")).unwrap();
        std::fs::write(ws.join("own.py"), "y = 2\n").unwrap();
        let got = find(&ws);
        assert_eq!(got.shared, vec![ws.join(".venv/lib/mod.py")]);
        let before = stamps(&got.shared);
        assert_eq!(stamps(&got.shared), before);
        // Written in place under its other name, with its time set back.
        let other = base.join("cache/mod.py");
        let mtime = std::fs::metadata(&other).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&other, "x = 2\n").unwrap();
        let file = std::fs::File::options().write(true).open(&other).unwrap();
        file.set_modified(mtime).unwrap();
        assert_ne!(stamps(&got.shared), before);
    }

    #[test]
    fn named_folders_are_walked_and_a_cut_walk_counts_the_same_each_time() {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let ws = base.join("app");
        let site = base.join("venv/lib/python3.11/site-packages");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&site).unwrap();
        std::fs::create_dir_all(base.join("mylib")).unwrap();
        std::fs::write(
            site.join("_mylib.pth"),
            format!("{}\n", base.join("mylib").display()),
        )
        .unwrap();
        let got = find_from(&ws, &[base.join("venv")]);
        let targets: Vec<&Path> = got.targets.iter().map(|(t, _)| t.as_path()).collect();
        assert_eq!(targets, vec![base.join("mylib").as_path()]);
        // Many files with a second name, and too small a budget.
        std::fs::create_dir_all(base.join("store")).unwrap();
        for i in 0..200 {
            let name = format!("f{i:03}");
            std::fs::write(base.join("store").join(&name), "").unwrap();
            std::fs::create_dir_all(ws.join(format!("d{}", i % 20))).unwrap();
            std::fs::hard_link(
                base.join("store").join(&name),
                ws.join(format!("d{}", i % 20)).join(&name),
            )
            .unwrap();
        }
        let cut = |n| walk(&ws, &[], n, walk_one_in_order);
        let first = cut(111);
        assert!(first.cut);
        assert!(!first.shared.is_empty());
        for _ in 0..5 {
            assert_eq!(cut(111), first);
        }
    }

    #[test]
    fn a_path_file_swapped_for_a_fifo_is_not_read() {
        let base = tempfile::tempdir().unwrap();
        let fifo = base.path().join("x.pth");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        // Would block for ever if read.
        assert_eq!(read_small(&fifo), None);
        std::fs::write(base.path().join("y.pth"), "/a\n").unwrap();
        assert_eq!(
            read_small(&base.path().join("y.pth")).as_deref(),
            Some("/a\n")
        );
    }

    #[test]
    fn paths_a_command_line_names_outside_the_workspace() {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let ws = base.join("app");
        std::fs::create_dir_all(ws.join("server")).unwrap();
        std::fs::create_dir_all(base.join("lib")).unwrap();
        std::fs::create_dir_all(base.join("quoted")).unwrap();
        // A virtual environment whose `python` links to the system's.
        let venv = base.join("srv/.venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        symlink("/usr/bin/python3", venv.join("bin/python")).unwrap();
        let python = venv.join("bin/python").display().to_string();
        let got = named(
            &ws,
            [
                python.as_str(),
                "server/main.py",
                "--plugins=../plugins/a.py",
                "PYTHONPATH=../lib:server",
                "-m",
                "tool",
                "cd ../quoted && run",
            ],
        );
        assert_eq!(
            got,
            vec![
                base.join("lib"),
                base.join("plugins"),
                base.join("quoted"),
                venv.clone()
            ]
        );
    }

    #[test]
    fn a_walk_past_its_limit_says_it_was_cut() {
        let base = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(base.path()).unwrap();
        for i in 0..3 {
            std::fs::write(ws.join(format!("f{i}")), "").unwrap();
        }
        assert!(!walk(&ws, &[], 3, walk_one).cut);
        assert!(walk(&ws, &[], 2, walk_one).cut);
    }
}
