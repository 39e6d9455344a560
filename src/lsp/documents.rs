//! The files cairn has opened in a server and the text each holds, and
//! the diagnostics of texts already checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use lsp_types::Diagnostic;
use serde_json::json;

use super::client::Client;
use crate::sync::lock;

/// Most texts whose diagnostics are remembered.
const CACHE: usize = 64;

/// The files cairn has opened in its servers, and what they hold.
#[derive(Default)]
pub struct Documents {
    open: Mutex<HashMap<PathBuf, Doc>>,
    /// Diagnostics by (file, text hash): the check after an edit reuses
    /// the dialog's.
    cache: Mutex<HashMap<(PathBuf, u64), Vec<Diagnostic>>>,
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
