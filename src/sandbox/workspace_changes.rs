//! Whether a session has changed a workspace since the person last trusted
//! it, for what runs outside the sandbox from that workspace.
//!
//! A trusted project's MCP server with `sandbox = false` runs as the person
//! and may load any file of the workspace (a sibling module, a package in
//! `node_modules`), not only the one its command line names. Any call that
//! may write the workspace (a command, an edit, a writing MCP tool) marks it
//! here with a fresh token, kept in cairn's own state folder where no
//! command can write. The project's trust covers the token, so the next
//! start asks again; and a server running outside the sandbox is stopped
//! the moment the mark is made, before the writing call runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use tokio::sync::watch;

/// The workspace's current token: empty when no session ever marked it.
pub fn token(root: &Path) -> String {
    file(root)
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| t.trim().to_string())
        .unwrap_or_default()
}

/// Marks `root` as changed by a call to the tool `cause`: a new token
/// (once per process and workspace, which is all trust needs) and, at every
/// call, a tick for what watches. A token that cannot be kept still ticks:
/// what runs is stopped anyway.
pub fn mark(root: &Path, cause: &str) {
    let first = {
        let mut causes = lock(causes());
        let entry = causes.entry(key(root)).or_default();
        let first = entry.is_empty();
        entry.insert(cause.to_string());
        first
    };
    if first && let Some(path) = file(root) {
        let fresh = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        );
        let kept = path
            .parent()
            .map_or(Ok(()), crate::private::create_dir)
            .and_then(|()| crate::private::replace(&path, fresh.as_bytes()));
        lock(written()).insert(key(root), fresh);
        if let Err(e) = kept {
            tracing::warn!("cannot record that {} changed: {e}", root.display());
        }
    }
    ticks().send_modify(|n| *n += 1);
}

/// Whether another process changed `root` since its token was `seen`:
/// the token is neither that nor the one this process wrote.
pub fn changed_elsewhere(root: &Path, seen: &str) -> bool {
    let now = token(root);
    now != seen && lock(written()).get(&key(root)) != Some(&now)
}

/// The tools whose calls in this process may have changed `root`.
pub fn causes_here(root: &Path) -> BTreeSet<String> {
    lock(causes()).get(&key(root)).cloned().unwrap_or_default()
}

/// Ticks at every mark in this process.
pub fn subscribe() -> watch::Receiver<u64> {
    ticks().subscribe()
}

fn key(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

fn file(root: &Path) -> Option<PathBuf> {
    let name = crate::config::trust::hash_text(key(root).as_os_str().as_encoded_bytes());
    crate::config::state_dir().map(|d| d.join("workspace-changes").join(name))
}

fn causes() -> &'static Mutex<BTreeMap<PathBuf, BTreeSet<String>>> {
    static CAUSES: OnceLock<Mutex<BTreeMap<PathBuf, BTreeSet<String>>>> = OnceLock::new();
    CAUSES.get_or_init(Default::default)
}

fn written() -> &'static Mutex<BTreeMap<PathBuf, String>> {
    static WRITTEN: OnceLock<Mutex<BTreeMap<PathBuf, String>>> = OnceLock::new();
    WRITTEN.get_or_init(Default::default)
}

fn ticks() -> &'static watch::Sender<u64> {
    static TICKS: OnceLock<watch::Sender<u64>> = OnceLock::new();
    TICKS.get_or_init(|| watch::channel(0).0)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
