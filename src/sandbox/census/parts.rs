//! A folder the census watches (`.cursor`, `.claude/skills`, a nested
//! `.git`) is known part by part, so that a write the person approved into
//! it takes in that file only: a command's plant beside it is moved — also
//! a plant deeper in the same part (`.cursor/rules/evil.mdc` beside an
//! approved `.cursor/rules/style.mdc`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{Census, Ident, NESTED_DEPTH, ident, move_and_say_beside, push_meta};

/// The most entries below one watched folder's parts that are known one by
/// one (for an approved write inside a part); a part that would take more
/// is known only as a whole.
pub(super) const DEEP_ENTRIES: usize = 4_096;

/// What a watched folder holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Parts {
    /// What is directly in it, by name (in a git folder: its config files
    /// and each hook, `hooks/NAME`); a folder part by everything in it.
    pub(super) top: BTreeMap<OsString, Ident>,
    /// Below each folder part small enough: the path below the watched
    /// folder → what it is (a folder by its inode alone, a file by its
    /// inode, length and change time).
    deep: BTreeMap<PathBuf, Ident>,
    /// The folder parts too large (or deep) to know one by one.
    cut: BTreeSet<OsString>,
}

impl Parts {
    /// Whether the folder part `name` can be judged entry by entry: the
    /// same folder in `self` (before) and `now`, known one by one both
    /// times.
    fn fine(&self, now: &Parts, name: &OsStr) -> bool {
        matches!(
            (self.top.get(name), now.top.get(name)),
            (Some(Ident::Dir(a, _)), Some(Ident::Dir(b, _))) if a == b
        ) && !self.cut.contains(name)
            && !now.cut.contains(name)
    }

    /// What is below the part `name`.
    fn below<'a>(&'a self, name: &'a OsStr) -> impl Iterator<Item = (&'a PathBuf, &'a Ident)> {
        self.deep.iter().filter(move |(p, _)| p.starts_with(name))
    }

    /// What in `now` appeared or changed since `self` (paths below the
    /// watched folder, the outermost of each; inside a part that is still
    /// the same folder, only what in it changed), and whether anything
    /// known is gone (not a plant: it stays gone).
    pub(super) fn changes(&self, now: &Parts) -> (Vec<PathBuf>, bool) {
        let mut lost = self.top.keys().any(|n| !now.top.contains_key(n));
        let mut changed = Vec::new();
        for (name, id) in &now.top {
            if self.top.get(name) == Some(id) {
                continue;
            }
            if !self.fine(now, name) {
                changed.push(PathBuf::from(name));
                continue;
            }
            let inner: Vec<PathBuf> = (now.below(name))
                .filter(|(p, i)| self.deep.get(*p) != Some(*i))
                .map(|(p, _)| p.clone())
                .collect();
            let gone_inside = self.below(name).any(|(p, _)| !now.deep.contains_key(p));
            lost |= gone_inside;
            if inner.is_empty() && !gone_inside {
                // Changed in a way no entry shows: the part goes whole.
                changed.push(PathBuf::from(name));
            }
            changed.extend(outermost(inner));
        }
        (changed, lost)
    }

    /// Whether `self` (now) holds nothing that is new since `before` but
    /// what was moved away since (`gone`, paths below the watched folder).
    pub(super) fn nothing_new(&self, before: &Parts, gone: &BTreeSet<PathBuf>) -> bool {
        self.top.iter().all(|(name, id)| {
            if gone.contains(Path::new(name)) {
                return false;
            }
            if before.top.get(name) == Some(id) {
                return true;
            }
            before.fine(self, name)
                && (self.below(name))
                    .all(|(q, i)| before.deep.get(q) == Some(i) && !gone.contains(q))
        })
    }

    /// These parts without the parts named in `gone` (paths below the
    /// watched folder) and what is below them.
    pub(super) fn without(mut self, gone: &BTreeSet<PathBuf>) -> Parts {
        let goes = |p: &Path| gone.iter().any(|g| p.starts_with(g));
        self.top.retain(|name, _| !goes(Path::new(name)));
        self.deep.retain(|p, _| !goes(p));
        self.cut.retain(|name| !goes(Path::new(name)));
        self
    }
}

/// The things in the folder `dir`, each identified; in a git folder, what
/// its identity covers (`ident`): its config files and each hook
/// (`hooks/NAME`).
pub(super) fn parts_of(dir: &Path) -> Parts {
    let listed = |d: &Path| -> Vec<(OsString, Ident)> {
        let mut all: Vec<_> = (std::fs::read_dir(d).into_iter().flatten().flatten())
            .filter_map(|e| Some((e.file_name(), ident(&e.path())?)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    };
    let mut parts = Parts::default();
    if dir.file_name().is_some_and(|n| n == ".git") {
        parts.top = ["config", "commondir", "config.worktree"]
            .into_iter()
            .filter_map(|n| Some((n.into(), ident(&dir.join(n))?)))
            .collect();
        for (name, id) in listed(&dir.join("hooks")) {
            parts.top.insert(Path::new("hooks").join(name).into(), id);
        }
        return parts;
    }
    let mut budget = DEEP_ENTRIES;
    for (name, id) in listed(dir) {
        if matches!(id, Ident::Dir(..)) {
            match deep_below(&dir.join(&name), &mut budget) {
                Some(below) => (parts.deep)
                    .extend((below.into_iter()).map(|(p, i)| (Path::new(&name).join(p), i))),
                None => {
                    parts.cut.insert(name.clone());
                }
            }
        }
        parts.top.insert(name, id);
    }
    parts
}

/// What an entry below a part is, from its metadata alone (a folder by its
/// inode: what is in it counts on its own).
fn shallow_ident(meta: &std::fs::Metadata) -> Ident {
    use std::os::unix::fs::MetadataExt;
    if meta.is_dir() {
        return Ident::Dir(meta.ino(), 0);
    }
    let mut bytes = Vec::with_capacity(32);
    push_meta(&mut bytes, meta);
    let hash = super::super::census_record::strong(&bytes);
    match meta.is_file() {
        true => Ident::File(hash),
        false => Ident::Other(hash as u64),
    }
}

/// Everything below the folder `part` (paths relative to it), breadth
/// first, or `None` when it holds more than `budget` entries or goes
/// deeper than the census walks (`budget` is spent only on success).
fn deep_below(part: &Path, budget: &mut usize) -> Option<Vec<(PathBuf, Ident)>> {
    let mut left = *budget;
    let mut out = Vec::new();
    let mut level = vec![PathBuf::new()];
    for depth in 0..=NESTED_DEPTH {
        let mut next = Vec::new();
        for sub in &level {
            for e in std::fs::read_dir(part.join(sub)).ok()?.flatten() {
                left = left.checked_sub(1)?;
                let rel = sub.join(e.file_name());
                let meta = std::fs::symlink_metadata(part.join(&rel)).ok()?;
                if meta.is_dir() {
                    next.push(rel.clone());
                }
                out.push((rel, shallow_ident(&meta)));
            }
        }
        if next.is_empty() {
            *budget = left;
            return Some(out);
        }
        if depth == NESTED_DEPTH {
            return None;
        }
        level = next;
    }
    None
}

/// Of `paths`, those with none of the others above them.
fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let all: BTreeSet<PathBuf> = paths.iter().cloned().collect();
    (paths.into_iter())
        .filter(|p| !p.ancestors().skip(1).any(|a| all.contains(a)))
        .collect()
}

/// Whether the approved path `below` (relative to the watched folder)
/// explains the entry `name`: itself and the folders it is in.
fn explained(below: &Path, name: &Path) -> bool {
    below.starts_with(name)
}

/// A hash of everything in the folder `part` but the entry `skip` (a path
/// below it) and the metadata of the folders `skip` is in (the write
/// changes their change times): whatever else changes in the part changes
/// it.
fn hash_without(part: &Path, skip: &Path) -> u128 {
    let mut out = Vec::new();
    super::nested_listing_without(part, &mut out, Some(skip));
    super::super::census_record::strong(&out)
}

impl Census {
    /// Right before a file tool writes `paths` the person approved: for
    /// each that goes into a part of a watched folder too large to know
    /// entry by entry, what the part holds without it, so that the check
    /// after the write can tell the write from anything else.
    pub fn before_writing(&mut self, paths: &[PathBuf]) {
        for path in paths {
            let Ok(rel) = path.strip_prefix(&self.workspace) else {
                continue;
            };
            let folders: Vec<PathBuf> = (self.parts.iter())
                .filter(|(w, _)| rel.starts_with(w) && rel != w.as_path())
                .map(|(w, _)| w.clone())
                .collect();
            for watched in folders {
                let Ok(below) = rel.strip_prefix(&watched) else {
                    continue;
                };
                let Some(top) = below.iter().next() else {
                    continue;
                };
                let cut = self
                    .parts
                    .get(&watched)
                    .is_some_and(|p| p.cut.contains(top));
                let (Ok(rest), true) = (below.strip_prefix(top), cut) else {
                    continue;
                };
                let part = watched.join(top);
                let hash = hash_without(&self.workspace.join(&part), rest);
                self.pre_write.insert(part, (rel.to_path_buf(), hash));
            }
        }
    }

    /// Whether the part `top` of `watched`, too large to know entry by
    /// entry, holds nothing new but the approved `rel` since right before
    /// the write.
    fn cut_part_holds_only(&self, watched: &Path, top: &Path, rel: &Path) -> bool {
        let part = watched.join(top);
        let Some((approved, hash)) = self.pre_write.get(&part) else {
            return false;
        };
        let Ok(rest) = rel.strip_prefix(&part) else {
            return false;
        };
        approved == rel && hash_without(&self.workspace.join(&part), rest) == *hash
    }

    /// Takes in what the person approved a file tool to write at `rel`,
    /// below the entry `watched`. A file entry (or the folder itself) is
    /// taken as it is; in a folder entry only the approved file is: what
    /// else changed in the folder since it was taken in — beside the file
    /// or deeper in the same part — is moved out on its own, and said,
    /// before the folder is taken in. In a git folder anything else
    /// changed leaves the folder to the check.
    pub(super) fn accept(
        &mut self,
        watched: &Path,
        rel: &Path,
        quarantine: &Path,
        said: &mut Vec<String>,
    ) {
        let folder = self.workspace.join(watched);
        // The folder as judged, and what was moved from it (paths below it).
        let mut judged: Option<(Parts, BTreeSet<PathBuf>)> = None;
        if rel != watched && std::fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
            let Ok(below) = rel.strip_prefix(watched) else {
                return;
            };
            // The approved file as it is now: its metadata first, then
            // what it holds, then the folder's parts; a swap in between
            // changes the metadata the parts hold.
            let path = self.workspace.join(rel);
            let meta = std::fs::symlink_metadata(&path)
                .ok()
                .map(|m| shallow_ident(&m));
            let content = ident(&path);
            let before = self.parts.get(watched).cloned().unwrap_or_default();
            let now = parts_of(&folder);
            // A file the person approved that no longer holds what was
            // written there was swapped after the write: not theirs.
            let swapped = !self.holds_written(rel, content.as_ref())
                || match now.deep.get(below) {
                    Some(m) => Some(m) != meta.as_ref(),
                    None => (now.top.get(below.as_os_str()))
                        .is_some_and(|t| Some(t) != content.as_ref()),
                };
            // In a part too large to know entry by entry, only what the
            // part held right before the write, and the write.
            let whole_part_ok = |name: &Path| {
                let top = Path::new(name.iter().next().unwrap_or_default());
                !now.cut.contains(top.as_os_str()) || self.cut_part_holds_only(watched, top, rel)
            };
            let approved = |name: &Path| !swapped && explained(below, name) && whole_part_ok(name);
            let mut unexpected: Vec<PathBuf> = Vec::new();
            for (name, id) in &now.top {
                let name = Path::new(name);
                if !approved(name) && before.top.get(name.as_os_str()) != Some(id) {
                    unexpected.push(name.to_path_buf());
                }
            }
            let is_git = watched.file_name().is_some_and(|n| n == ".git");
            // A git part that went away changes what git runs too.
            if is_git {
                let lost = (before.top.keys())
                    .any(|n| !now.top.contains_key(n) && !approved(Path::new(n)));
                if lost || !unexpected.is_empty() {
                    return;
                }
            }
            // Deeper: what changed in an approved part other than the
            // approved file and the folders it is in.
            let top_unexpected: BTreeSet<PathBuf> = unexpected.iter().cloned().collect();
            for (p, id) in &now.deep {
                let part = p.iter().next().map(PathBuf::from).unwrap_or_default();
                if top_unexpected.contains(&part) || approved(p) {
                    continue;
                }
                if before.deep.get(p) != Some(id) {
                    unexpected.push(p.clone());
                }
            }
            // A folder that goes takes what is in it.
            let gone = outermost(unexpected);
            let going: Vec<PathBuf> = gone.iter().map(|p| watched.join(p)).collect();
            said.extend(move_and_say_beside(&self.workspace, &going, quarantine));
            judged = Some((now, gone.into_iter().collect()));
        }
        // Its identity first, then its parts: a part planted meanwhile is
        // in neither, or makes the parts differ from what was judged.
        let Some(id) = ident(&folder) else {
            return;
        };
        if rel == watched && !self.holds_written(rel, Some(&id)) {
            // Swapped after the write: the check judges it as anything else.
            return;
        }
        if matches!(id, Ident::Dir(..)) {
            let parts = parts_of(&folder);
            // Anything new since it was judged (a plant put back as soon
            // as it was moved) leaves the folder to the next check, which
            // judges it against what was known before the write.
            if let Some((was, gone)) = &judged
                && !parts.nothing_new(was, gone)
            {
                return;
            }
            self.parts.insert(watched.to_path_buf(), parts);
        }
        self.seen.insert(watched.to_path_buf(), id);
        (self.seen_at)
            .entry(watched.to_path_buf())
            .or_insert_with(std::time::Instant::now);
    }
}

#[cfg(test)]
mod tests;
