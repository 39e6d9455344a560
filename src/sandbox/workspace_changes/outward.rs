//! The folders outside a workspace that it reaches through links: a
//! package linked in (`npm link`, a workspace link, `ext -> ../../shared`),
//! a Python package installed in editable mode (a `.pth` path file, an
//! editable finder's mapping, an `.egg-link`). A server outside the sandbox
//! that loads from the workspace loads from these too, so a session that
//! changes one of them changes what the server runs.

use std::path::{Path, PathBuf};

/// At most this many entries of a workspace are looked at: about a second
/// on a cold disk, a fraction of that on a warm one.
const MAX_ENTRIES: usize = 400_000;

/// A path file or finder larger than this is not a path file.
const MAX_PATH_FILE: u64 = 64 * 1024;

/// What [`find`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outward {
    /// Each folder (or file) outside the workspace a link leads to,
    /// canonical, with the first link (relative to the workspace) that
    /// leads there.
    pub targets: Vec<(PathBuf, PathBuf)>,
    /// The walk stopped at [`MAX_ENTRIES`] before it had seen everything.
    pub cut: bool,
}

/// Walks `root` (canonical) without following links and returns where its
/// links that leave it lead.
pub fn find(root: &Path) -> Outward {
    walk(root, MAX_ENTRIES)
}

fn walk(root: &Path, max_entries: usize) -> Outward {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut add = |target: PathBuf, link: &Path| {
        if !target.starts_with(root) && !found.iter().any(|(t, _)| *t == target) {
            let rel = link.strip_prefix(root).unwrap_or(link).to_path_buf();
            found.push((target, rel));
        }
    };
    let mut seen = 0usize;
    let mut cut = false;
    let mut stack = vec![root.to_path_buf()];
    'walk: while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let in_site_packages = dir
            .file_name()
            .is_some_and(|n| n == "site-packages" || n == "dist-packages");
        for entry in entries.flatten() {
            seen += 1;
            if seen > max_entries {
                cut = true;
                break 'walk;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_symlink() {
                if let Some(target) = link_target(&path) {
                    add(target, &path);
                }
            } else if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && in_site_packages {
                for named in path_file(&path, &dir) {
                    add(named, &path);
                }
            }
        }
    }
    found.sort();
    Outward {
        targets: found,
        cut,
    }
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
                if !at.starts_with(root) && !out.contains(&at) {
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
        true => settle(path)?,
        false => settle(path.parent()?)?,
    };
    let venv = folder
        .parent()
        .filter(|p| folder.ends_with("bin") && p.join("pyvenv.cfg").is_file());
    Some(venv.map_or(folder.clone(), Path::to_path_buf))
}

/// Where the link at `path` leads, canonical; for a link that leads
/// nowhere yet, the folder it would be made in (its nearest existing
/// ancestor, canonical, with the rest of the path).
fn link_target(path: &Path) -> Option<PathBuf> {
    if let Ok(t) = std::fs::canonicalize(path) {
        return Some(t);
    }
    let text = std::fs::read_link(path).ok()?;
    let lexical = crate::paths::lexical(&path.parent()?.join(text));
    settle(&lexical)
}

/// The canonical form of `path`, or of its nearest existing ancestor with
/// the missing rest appended.
fn settle(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        if let Ok(real) = std::fs::canonicalize(&at) {
            return Some(rest.iter().rev().fold(real, |p, c| p.join(c)));
        }
        rest.push(at.file_name()?.to_os_string());
        at = at.parent()?.to_path_buf();
    }
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
    if std::fs::metadata(path).map_or(true, |m| m.len() > MAX_PATH_FILE) {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(path) else {
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
        .filter_map(|p| settle(&crate::paths::lexical(&site.join(p))))
        .collect()
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
        assert!(!walk(&ws, 3).cut);
        assert!(walk(&ws, 2).cut);
    }
}
