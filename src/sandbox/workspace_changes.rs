//! Whether a session has changed a workspace since the person last trusted
//! it, for what runs outside the sandbox from that workspace.
//!
//! A trusted project's MCP server with `sandbox = false` runs as the person
//! and may load any file of the workspace (a sibling module, a package in
//! `node_modules`), not only the one its command line names. Calls that
//! may write a workspace (a command, an edit, a writing MCP tool) mark it
//! here with a fresh token (`live`: when the first starts and when the
//! last ends), kept in cairn's own data folder beside the trust store,
//! where no command can write, with the workspace's path. A project's token is
//! that of every marked workspace it lies in or that lies in it — a session
//! started in a parent folder or in a nested repository writes the project
//! too, and so does one in a folder the project reaches through a link
//! (`outward`: a linked package, an editable Python install). The
//! project's trust covers the token, so the next start asks again; and a
//! server running outside the sandbox is stopped the moment the mark is
//! made, before the writing call runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::sync::lock;

mod live;
pub mod outward;
mod shared_holds;
pub use live::{Writing, writing};

/// The first line of a token that names a folder outside the workspace it
/// reaches through a link.
const REACHES: &str = "reaches\t";

/// The first part of a token's line on the files it shares through hard
/// links.
const SHARED: &str = "shared\t";

/// The tokens of every marked workspace that holds `root` or lies inside
/// it, or holds or lies in a folder `root` reaches through a link: the
/// reached folders first (`reaches\tPATH` lines), then the state of the
/// files it shares through hard links (a `shared\tCOUNT\tDIGEST` line),
/// then one `path=token` line each in path order. Empty when nothing was
/// ever marked and no link leaves `root`.
pub fn token(root: &Path) -> String {
    survey(root, &[]).0
}

/// [`token`] with `named` (folders outside `root` a server's command line
/// names, see [`outward::named`]) counted as reached too, and what the
/// walk for links found.
pub fn survey(root: &Path, named: &[PathBuf]) -> (String, outward::Outward) {
    let root = key(root);
    // The named folders are walked as the workspace is (a named virtual
    // environment's editable installs), and so are the person's own
    // Python site folders, whose path files a server's interpreter reads
    // wherever it was started.
    let also: Vec<PathBuf> = named.iter().cloned().chain(user_sites()).collect();
    let found = outward::find_from(&root, &also);
    let mut out = String::new();
    let mut roots = vec![root];
    let reached = (found.targets.iter().map(|(t, _)| t)).chain(named);
    for target in reached {
        if roots.contains(target) {
            continue;
        }
        out.push_str(&format!("{REACHES}{}\n", target.display()));
        roots.push(target.clone());
    }
    if found.cut {
        out.push_str(&format!("{REACHES}(not every link was looked at)\n"));
    }
    if !found.shared.is_empty() {
        let digest = outward::stamps(&found.shared);
        out.push_str(&format!("{SHARED}{}\t{digest}\n", found.shared.len()));
    }
    for (path, token) in related(&roots) {
        out.push_str(&format!("{}={token}\n", path.display()));
    }
    (out, found)
}

/// [`survey`], once per process for each workspace and named folders: the
/// first answer is the one the project's trust was asked about (the
/// question shows while sessions may still write), so what starts later
/// in this process starts from it, and a change since is seen as one
/// ([`changed_elsewhere`]) rather than taken in.
pub fn survey_once(root: &Path, named: &[PathBuf]) -> (String, outward::Outward) {
    let at = (key(root), named.to_vec());
    // A survey of the same workspace that counted these named folders (and
    // maybe more: the trust question counts every server of the project
    // that runs outside, a slot only its own) is the one to start from.
    let earlier = (lock(surveys()).iter())
        .find(|((r, n), _)| *r == at.0 && named.iter().all(|p| n.contains(p)))
        .map(|(_, v)| v.clone());
    if let Some(earlier) = earlier {
        return earlier;
    }
    let fresh = survey(root, named);
    lock(surveys()).entry(at).or_insert(fresh).clone()
}

/// The person's own Python site folders (`~/.local/lib/python3.*/
/// site-packages`): an editable install there (`pip install --user -e`)
/// reaches a project from any interpreter the person runs.
fn user_sites() -> Vec<PathBuf> {
    let Some(lib) = crate::paths::home_dir().map(|h| h.join(".local/lib")) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&lib) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = (entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    out.sort();
    out
}

type Surveys = BTreeMap<(PathBuf, Vec<PathBuf>), (String, outward::Outward)>;

fn surveys() -> &'static Mutex<Surveys> {
    static SURVEYS: OnceLock<Mutex<Surveys>> = OnceLock::new();
    SURVEYS.get_or_init(Default::default)
}

/// Whether the files a token `seen` of [`survey_once`] counted as shared
/// through hard links are no longer as they were.
fn shared_changed(seen: &str) -> bool {
    let Some(line) = seen.lines().find_map(|l| l.strip_prefix(SHARED)) else {
        return false;
    };
    let files = (lock(surveys()).values())
        .find(|(token, _)| token == seen)
        .map(|(_, found)| found.shared.clone());
    match files {
        Some(files) => line.rsplit_once('\t').map(|(_, d)| d) != Some(&outward::stamps(&files)),
        // Not a token this process surveyed: nothing to compare with.
        None => true,
    }
}

/// The workspace and the folders `seen` (a [`token`]) says it reaches.
fn roots_of(root: &Path, seen: &str) -> Vec<PathBuf> {
    let reached = seen
        .lines()
        .filter_map(|l| l.strip_prefix(REACHES))
        .filter(|p| p.starts_with('/'))
        .map(PathBuf::from);
    std::iter::once(key(root)).chain(reached).collect()
}

/// Notes that a call to the tool `cause` may change the workspace at
/// `key` (canonical) and ticks for what watches in this process.
fn note(key: &Path, cause: &str) {
    lock(causes())
        .entry(key.to_path_buf())
        .or_default()
        .insert(cause.to_string());
    ticks().send_modify(|n| *n += 1);
}

/// Writes a fresh token for the workspace at `key`, so that a trust answer
/// given before covers nothing after. One that cannot be kept is logged:
/// what runs here is stopped by the tick anyway.
fn renew(key: &Path) {
    let Some(path) = file(key) else {
        return;
    };
    let fresh = format!("{}-{}", std::process::id(), now_nanos());
    // The folder's identity and its ancestors': one folder seen under two
    // paths (a bind mount, a container's `/workspaces`) is still one.
    let ids: Vec<String> = (identities(key).iter())
        .map(|(d, i)| format!("{d}:{i}"))
        .collect();
    let text = format!("{fresh}\n{}\n{IDS}{}", key.display(), ids.join(" "));
    let kept = path
        .parent()
        .map_or(Ok(()), crate::private::create_dir)
        .and_then(|()| crate::private::replace(&path, text.as_bytes()));
    lock(written()).insert(fresh);
    if let Err(e) = kept {
        tracing::warn!("cannot record that {} changed: {e}", key.display());
    }
}

/// Whether another process changed `root` (or a workspace holding it or
/// inside it, or one holding or inside a folder it reaches) since its
/// token was `seen`: a token differs that this process did not write.
pub fn changed_elsewhere(root: &Path, seen: &str) -> bool {
    if shared_changed(seen) {
        return true;
    }
    let before: BTreeMap<&str, &str> = (seen.lines())
        .filter(|l| !l.starts_with(REACHES) && !l.starts_with(SHARED))
        .filter_map(|l| l.rsplit_once('='))
        .collect();
    // Read before `written` is locked: a writer renewing its token holds
    // the live lock while it takes `written`, and `related` takes the
    // live lock.
    let now = related(&roots_of(root, seen));
    let mine = lock(written());
    now.into_iter().any(|(path, token)| {
        let path = path.display().to_string();
        before.get(path.as_str()) != Some(&token.as_str()) && !mine.contains(&token)
    })
}

/// The tools whose calls in this process may have changed `root`: calls in
/// it, in a workspace holding it, or in one inside it.
pub fn causes_here(root: &Path) -> BTreeSet<String> {
    let root = key(root);
    (lock(causes()).iter())
        .filter(|(marked, _)| overlaps(marked, &root))
        .flat_map(|(_, causes)| causes.iter().cloned())
        .collect()
}

/// Ticks at every mark in this process.
pub fn subscribe() -> watch::Receiver<u64> {
    ticks().subscribe()
}

/// A process outside the sandbox that loads from a workspace, registered
/// while it lives (dropped when it is gone): a writing call, in this cairn
/// or another, waits for it to be gone first ([`outside_gone`]).
pub struct Hold(u64, Option<shared_holds::SharedHold>);

/// Registers a process outside the sandbox loading from `root` and from
/// the folders `seen` (its trusted [`token`]) says it reaches; calls of
/// the tools named `own…` are its own and do not stop it.
pub fn hold(root: &Path, own: &str, seen: &str) -> Hold {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let roots = roots_of(root, seen);
    let shared = shared_holds::make(id, &roots);
    lock(holds()).insert(id, (roots, own.to_string()));
    Hold(id, shared)
}

impl Drop for Hold {
    fn drop(&mut self) {
        lock(holds()).remove(&self.0);
        self.1.take();
        released().send_modify(|n| *n += 1);
    }
}

/// Waits, at most `within`, until no process outside the sandbox that
/// loads from `root` (or a workspace inside it or holding it) and that a
/// call to `cause` stops still lives — this cairn's, or another's; `false`
/// when one does.
pub async fn outside_gone(root: &Path, cause: &str, within: Duration) -> bool {
    let root = key(root);
    let deadline = tokio::time::Instant::now() + within;
    let mut gone = released().subscribe();
    loop {
        let here = (lock(holds()).values())
            .any(|(roots, own)| roots.iter().any(|at| overlaps(at, &root)) && !is_own(cause, own));
        let elsewhere = !here && shared_holds::elsewhere(&root);
        if !here && !elsewhere {
            return true;
        }
        // Another cairn's hold is let go without a word to this one: look
        // again every 50 ms.
        let next = match elsewhere {
            true => deadline.min(tokio::time::Instant::now() + Duration::from_millis(50)),
            false => deadline,
        };
        if tokio::time::timeout_at(next, gone.changed()).await.is_err()
            && tokio::time::Instant::now() >= deadline
        {
            return false;
        }
    }
}

/// Whether a call to the tool `cause` is one of the server's whose tools
/// are named `own…` (`mcp__helper__`): not a tool of a server whose name
/// only begins the same way (`mcp__helper__x__tool`, of `helper__x`). A
/// tool whose own name holds `__` counts as another's: it stops the
/// server, the safe way to be wrong.
pub fn is_own(cause: &str, own: &str) -> bool {
    !own.is_empty()
        && cause
            .strip_prefix(own)
            .is_some_and(|tool| !tool.contains("__"))
}

type Holds = BTreeMap<u64, (Vec<PathBuf>, String)>;

fn holds() -> &'static Mutex<Holds> {
    static HOLDS: OnceLock<Mutex<Holds>> = OnceLock::new();
    HOLDS.get_or_init(Default::default)
}

fn released() -> &'static watch::Sender<u64> {
    static RELEASED: OnceLock<watch::Sender<u64>> = OnceLock::new();
    RELEASED.get_or_init(|| watch::channel(0).0)
}

/// One folder lies in the other (or they are the same).
fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The line of a token file with the identities of its folder and of
/// each folder above it, nearest first.
const IDS: &str = "ids\t";

/// (device, inode) of `path` and of each folder above it, nearest first.
fn identities(path: &Path) -> Vec<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    (path.ancestors())
        .filter_map(|a| std::fs::metadata(a).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

/// Whether a marked folder (its identities, nearest first) holds or lies
/// in a folder with the identities `root`, by what they are rather than
/// by their paths.
fn same_tree(marked: &[(u64, u64)], root: &[(u64, u64)]) -> bool {
    let (Some(m), Some(r)) = (marked.first(), root.first()) else {
        return false;
    };
    root.contains(m) || marked.contains(r)
}

/// The marked workspaces that overlap any of `roots`, with their tokens.
fn related(roots: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let Some(dir) = folder() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let root_ids: Vec<Vec<(u64, u64)>> = roots.iter().map(|r| identities(r)).collect();
    let mut out: Vec<(PathBuf, String)> = entries
        .flatten()
        // Tokens only: not a lock, nor a `.partial` a writer left.
        .filter(|e| !e.file_name().as_encoded_bytes().contains(&b'.'))
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            let mut lines = text.lines();
            let (token, path) = (lines.next()?, PathBuf::from(lines.next()?));
            let ids: Vec<(u64, u64)> = (lines.find_map(|l| l.strip_prefix(IDS)))
                .map(|l| l.split(' ').filter_map(parse_id).collect())
                .unwrap_or_default();
            let by_path = roots.iter().any(|root| overlaps(&path, root));
            if !by_path && !root_ids.iter().any(|r| same_tree(&ids, r)) {
                return None;
            }
            // Being written by another process now: a token no answer
            // can have seen.
            let token = match live::elsewhere(&e.path(), &path) {
                true => format!("writing-{}", now_nanos()),
                false => token.to_string(),
            };
            Some((path, token))
        })
        .collect();
    out.sort();
    out
}

fn parse_id(text: &str) -> Option<(u64, u64)> {
    let (dev, ino) = text.split_once(':')?;
    Some((dev.parse().ok()?, ino.parse().ok()?))
}

const FOLDER: &str = "workspace-changes";

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

fn key(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

fn file(key: &Path) -> Option<PathBuf> {
    let name = crate::config::trust::hash_text(key.as_os_str().as_encoded_bytes());
    folder().map(|d| d.join(name))
}

/// Where the marks are kept: beside the trust store.
fn folder() -> Option<PathBuf> {
    crate::config::data_dir().map(|d| d.join(FOLDER))
}

fn causes() -> &'static Mutex<BTreeMap<PathBuf, BTreeSet<String>>> {
    static CAUSES: OnceLock<Mutex<BTreeMap<PathBuf, BTreeSet<String>>>> = OnceLock::new();
    CAUSES.get_or_init(Default::default)
}

/// Every token this process wrote.
fn written() -> &'static Mutex<BTreeSet<String>> {
    static WRITTEN: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    WRITTEN.get_or_init(Default::default)
}

fn ticks() -> &'static watch::Sender<u64> {
    static TICKS: OnceLock<watch::Sender<u64>> = OnceLock::new();
    TICKS.get_or_init(|| watch::channel(0).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_writing_call_waits_until_what_runs_outside_is_gone() {
        let root = Path::new("/nonexistent/cairn-hold-test/ws");
        let held = hold(root, "mcp__helper__", "");
        let short = Duration::from_millis(50);
        // The server's own tool does not stop it; another call waits.
        assert!(outside_gone(root, "mcp__helper__write", short).await);
        assert!(!outside_gone(root, "bash", short).await);
        assert!(!outside_gone(&root.join("sub"), "edit", short).await);
        assert!(outside_gone(Path::new("/nonexistent/other"), "bash", short).await);
        // A tool of a server whose name only begins the same way.
        assert!(!outside_gone(root, "mcp__helper__x__write", short).await);
        let waiter =
            tokio::spawn(async move { outside_gone(root, "bash", Duration::from_secs(5)).await });
        tokio::time::sleep(short).await;
        drop(held);
        assert!(waiter.await.unwrap());
    }

    #[test]
    fn only_folders_inside_one_another_overlap() {
        let p = Path::new;
        assert!(overlaps(p("/home/a/code"), p("/home/a/code/proj")));
        assert!(overlaps(
            p("/home/a/code/proj/vendor/x"),
            p("/home/a/code/proj")
        ));
        assert!(overlaps(p("/w"), p("/w")));
        assert!(!overlaps(p("/home/a/code/proj2"), p("/home/a/code/proj")));
        assert!(!overlaps(p("/home/a/other"), p("/home/a/code")));
    }
}
