//! A folder the census watches (`.cursor`, `.claude/skills`, a nested
//! `.git`) is known part by part, so that a write the person approved into
//! it takes in that file only: a command's plant beside it is moved.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Census, Ident, ident, move_out};

/// What a folder directly holds: name → what it is.
pub(super) type Parts = BTreeMap<std::ffi::OsString, Ident>;

/// The things directly in the folder `dir`, each identified; in a git
/// folder, what its identity covers (`ident`): its config files and each
/// hook (`hooks/NAME`).
pub(super) fn parts_of(dir: &Path) -> Parts {
    let listed = |d: &Path, prefix: &Path| -> Vec<(std::ffi::OsString, Ident)> {
        (std::fs::read_dir(d).into_iter().flatten().flatten())
            .filter_map(|e| {
                Some((
                    prefix.join(e.file_name()).into_os_string(),
                    ident(&e.path())?,
                ))
            })
            .collect()
    };
    if dir.file_name().is_none_or(|n| n != ".git") {
        return listed(dir, Path::new("")).into_iter().collect();
    }
    let mut parts: Parts = ["config", "commondir", "config.worktree"]
        .into_iter()
        .filter_map(|n| Some((n.into(), ident(&dir.join(n))?)))
        .collect();
    parts.extend(listed(&dir.join("hooks"), Path::new("hooks")));
    parts
}

/// The part of the folder `watched` (as [`parts_of`] names them) that the
/// approved path `rel` goes through: `.cursor/rules/a.md` below `.cursor`
/// is `rules`; `.git/hooks/pre-commit` below `.git` is `hooks/pre-commit`.
fn accepted_part(rel: &Path, watched: &Path) -> Option<std::ffi::OsString> {
    let below = rel.strip_prefix(watched).ok()?;
    let mut names = below.iter();
    let first = names.next()?;
    let git = watched.file_name().is_some_and(|n| n == ".git");
    Some(match names.next() {
        Some(second) if git && first == "hooks" => Path::new(first).join(second).into_os_string(),
        _ => first.to_os_string(),
    })
}

impl Census {
    /// Takes in what the person approved a file tool to write at `rel`,
    /// below the entry `watched`. A file entry (or the folder itself) is
    /// taken as it is; in a folder entry only the approved file is: what
    /// else changed in the folder since it was taken in is moved out on
    /// its own, and said, before the folder is taken in. In a git folder
    /// anything else changed leaves the folder to the check.
    pub(super) fn accept(
        &mut self,
        watched: &Path,
        rel: &Path,
        quarantine: &Path,
        said: &mut Vec<String>,
    ) {
        let folder = self.workspace.join(watched);
        if rel != watched && std::fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
            let mut approved = accepted_part(rel, watched);
            let before = self.parts.get(watched).cloned().unwrap_or_default();
            let now = parts_of(&folder);
            // A file the person approved that no longer holds what was
            // written there was swapped after the write: not theirs.
            if let Some(part) = approved.as_ref()
                && watched.join(part) == rel
                && !self.holds_written(rel, now.get(part))
            {
                approved = None;
            }
            let mut unexpected: Vec<std::ffi::OsString> = (now.iter())
                .filter(|(name, id)| {
                    approved.as_ref() != Some(*name) && before.get(*name) != Some(*id)
                })
                .map(|(name, _)| name.clone())
                .collect();
            // A git part that went away changes what git runs too.
            unexpected.extend(
                (before.keys())
                    .filter(|n| !now.contains_key(*n) && approved.as_ref() != Some(*n))
                    .filter(|_| watched.file_name().is_some_and(|n| n == ".git"))
                    .cloned(),
            );
            let is_git = watched.file_name().is_some_and(|n| n == ".git");
            if is_git && !unexpected.is_empty() {
                return;
            }
            for name in unexpected {
                let (from, part) = (folder.join(&name), watched.join(&name));
                said.push(match move_out(&from, &part, quarantine) {
                    Ok(to) => format!(
                        "`{}` appeared or changed beside a file you approved; your own git (or \
                         cairn, or another agent) would obey it outside the sandbox, so cairn \
                         moved it to {}",
                        part.display(),
                        to.display()
                    ),
                    Err(e) => format!(
                        "`{}` appeared or changed beside a file you approved, and cairn could \
                         not move it away ({e}): remove it before you run git or an agent here",
                        part.display()
                    ),
                });
            }
        }
        let Some(id) = ident(&folder) else {
            return;
        };
        if rel == watched && !self.holds_written(rel, Some(&id)) {
            // Swapped after the write: the check judges it as anything else.
            return;
        }
        if matches!(id, Ident::Dir(..)) {
            self.parts.insert(watched.to_path_buf(), parts_of(&folder));
        }
        self.seen.insert(watched.to_path_buf(), id);
        (self.seen_at)
            .entry(watched.to_path_buf())
            .or_insert_with(std::time::Instant::now);
    }
}

#[cfg(test)]
mod tests;
