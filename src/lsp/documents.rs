//! The files cairn has opened in a server and the text each holds, and
//! the diagnostics of texts already checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use lsp_types::Diagnostic;
use serde_json::json;

use super::client::Client;
use super::verdict::Verdict;
use crate::sync::lock;

/// Most texts whose diagnostics are remembered.
const CACHE: usize = 64;

/// Most files cairn opens in its servers because a tool touched them
/// (the files an edit may break elsewhere); edited files always open.
pub const MAX_TOUCHED: usize = 40;

/// The files cairn has opened in its servers, and what they hold.
#[derive(Default)]
pub struct Documents {
    open: Mutex<HashMap<PathBuf, Doc>>,
    /// Diagnostics by (file, text hash): the check after an edit reuses
    /// the dialog's.
    cache: Mutex<HashMap<(PathBuf, u64), Vec<Diagnostic>>>,
    /// Verdicts by (file, old text hash, new text hash): the check after
    /// an edit is applied reuses the dialog's, other files included.
    verdicts: Mutex<HashMap<(PathBuf, u64, u64), Verdict>>,
    /// Files a tool touched, to open in their server before the next
    /// check of any file (so what an edit breaks in them shows).
    touched: Mutex<Vec<PathBuf>>,
    /// One check at a time: a file's text in the server is shared state.
    pub(super) busy: tokio::sync::Mutex<()>,
}

struct Doc {
    server: (String, PathBuf),
    version: i32,
    text: String,
}

impl Documents {
    /// A restarted server knows none of cairn's files.
    pub fn forget_server(&self, name: &str, root: &Path) {
        lock(&self.open).retain(|_, d| !(d.server.0 == name && d.server.1 == root));
        lock(&self.cache).clear();
        lock(&self.verdicts).clear();
    }

    /// The other files open in `client`, with the text each holds.
    pub(super) fn others(&self, client: &Client, path: &Path) -> Vec<(PathBuf, String)> {
        let server = (client.name.clone(), client.root.clone());
        lock(&self.open)
            .iter()
            .filter(|(p, d)| d.server == server && p.as_path() != path)
            .map(|(p, d)| (p.clone(), d.text.clone()))
            .collect()
    }

    /// Whether `path` is open in some server.
    pub(super) fn is_open(&self, path: &Path) -> bool {
        lock(&self.open).contains_key(path)
    }

    /// Whether `path` may be opened for being touched: not yet open, and
    /// fewer than [`MAX_TOUCHED`] files are.
    pub(super) fn may_open(&self, path: &Path) -> bool {
        let open = lock(&self.open);
        !open.contains_key(path) && open.len() < MAX_TOUCHED
    }

    /// Queues `path` to be opened in its server.
    pub(super) fn queue_touched(&self, path: &Path) -> bool {
        let mut touched = lock(&self.touched);
        let queued = touched.iter().any(|p| p == path);
        if queued || !self.may_open(path) {
            return false;
        }
        touched.push(path.to_path_buf());
        true
    }

    /// Takes the queued files `keep` says belong to the caller's server.
    pub(super) fn take_touched(&self, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
        let mut touched = lock(&self.touched);
        let (mine, rest) = touched.drain(..).partition(|p| keep(p));
        *touched = rest;
        mine
    }

    pub(super) fn verdict(&self, path: &Path, old: &str, new: &str) -> Option<Verdict> {
        let key = (path.to_path_buf(), hash(old), hash(new));
        lock(&self.verdicts).get(&key).cloned()
    }

    pub(super) fn remember_verdict(&self, path: &Path, old: &str, new: &str, v: &Verdict) {
        let mut verdicts = lock(&self.verdicts);
        if verdicts.len() >= CACHE {
            verdicts.clear();
        }
        verdicts.insert((path.to_path_buf(), hash(old), hash(new)), v.clone());
    }

    /// Makes the server hold `text` for `path`; the version it now has and
    /// whether it changed.
    pub(super) async fn put(
        &self,
        client: &Client,
        path: &Path,
        text: &str,
    ) -> Result<(i32, bool), String> {
        let server = (client.name.clone(), client.root.clone());
        let uri = super::uri::from_path(path);
        let current = lock(&self.open)
            .get(path)
            .filter(|d| d.server == server)
            .map(|d| (d.version, d.text == text));
        let version = match current {
            Some((v, true)) => return Ok((v, false)),
            Some((v, false)) => {
                let params = json!({
                    "textDocument": {"uri": uri, "version": v + 1},
                    "contentChanges": [{"text": text}],
                });
                client.notify("textDocument/didChange", params).await?;
                v + 1
            }
            None => {
                let params = json!({"textDocument": {
                    "uri": uri,
                    "languageId": super::servers::language_id(path),
                    "version": 1,
                    "text": text,
                }});
                client.notify("textDocument/didOpen", params).await?;
                1
            }
        };
        lock(&self.open).insert(
            path.to_path_buf(),
            Doc {
                server,
                version,
                text: text.to_string(),
            },
        );
        Ok((version, true))
    }

    pub(super) fn cached(&self, path: &Path, text: &str) -> Option<Vec<Diagnostic>> {
        lock(&self.cache)
            .get(&(path.to_path_buf(), hash(text)))
            .cloned()
    }

    pub(super) fn remember(&self, path: &Path, text: &str, diags: &[Diagnostic]) {
        let mut cache = lock(&self.cache);
        if cache.len() >= CACHE {
            cache.clear();
        }
        cache.insert((path.to_path_buf(), hash(text)), diags.to_vec());
    }
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}
