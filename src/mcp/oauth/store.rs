//! Where a server's OAuth tokens live: one JSON file per server under
//! cairn's data directory, 0600 in a 0700 directory, replaced whole on each
//! save so a crash never leaves half a token behind. The file names the URL
//! it was issued for; tokens for another URL are not sent.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use nix::fcntl::{Flock, FlockArg};
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

use crate::private;

/// Folder under the data directory that holds the token files.
const FOLDER: &str = "mcp-auth";

#[derive(Serialize, Deserialize)]
struct TokenFile {
    server: String,
    url: String,
    credentials: StoredCredentials,
}

/// The token file of one configured server.
#[derive(Debug, Clone)]
pub struct TokenStore {
    server: String,
    url: String,
    path: PathBuf,
}

impl TokenStore {
    /// The store for `server` at `url`, under `data_dir`.
    pub fn new(data_dir: &Path, server: &str, url: &str) -> TokenStore {
        TokenStore {
            server: server.to_string(),
            url: url.to_string(),
            path: data_dir
                .join(FOLDER)
                .join(format!("{}.json", file_stem(server))),
        }
    }

    /// The store in cairn's own data directory, when the system has one.
    pub fn in_data_dir(server: &str, url: &str) -> Option<TokenStore> {
        crate::config::data_dir().map(|dir| TokenStore::new(&dir, server, url))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether tokens for this server and URL are stored.
    pub fn has_tokens(&self) -> bool {
        matches!(self.read(), Ok(Some(c)) if c.token_response.is_some())
    }

    /// Removes the file (and its lock file); `false` when there was none.
    pub fn remove(&self) -> std::io::Result<bool> {
        let _ = std::fs::remove_file(self.path.with_extension("json.lock"));
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn read(&self) -> Result<Option<StoredCredentials>, String> {
        // Tokens come only from a file of cairn's own, not through a link
        // (whose target `restrict` below would also change).
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "{} is a link, not cairn's own token file; log in again to replace it",
                self.path.display()
            ));
        }
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        // Tighten a file someone loosened, as the store database is.
        let _ = private::restrict(&self.path, private::FILE_MODE);
        let file: TokenFile = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is damaged ({e}); log in again to replace it",
                self.path.display()
            )
        })?;
        Ok((file.url == self.url).then_some(file.credentials))
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), String> {
        let file = TokenFile {
            server: self.server.clone(),
            url: self.url.clone(),
            credentials,
        };
        let json = serde_json::to_vec_pretty(&file).map_err(|e| e.to_string())?;
        let fail = |e: std::io::Error| format!("cannot write {}: {e}", self.path.display());
        if let Some(dir) = self.path.parent() {
            private::create_dir(dir).map_err(fail)?;
        }
        private::replace(&self.path, &json).map_err(fail)
    }
}

/// A server name as a file name: `[A-Za-z0-9_-]` kept, the rest `_`.
fn file_stem(server: &str) -> String {
    let stem = super::super::server_key(server);
    if stem.is_empty() {
        "_".to_string()
    } else {
        stem
    }
}

#[async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(AuthError::CredentialStoreError)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
            .map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove()
            .map(drop)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    /// Two cairn processes (the interface and a `cairn run`) may refresh
    /// at once; a server that rotates refresh tokens would take the second
    /// for a replay. An exclusive lock on a file beside the tokens makes
    /// the second wait and refresh from what the first stored.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let path = self.path.with_extension("json.lock");
        let fail = |e: String| AuthError::CredentialStoreError(e);
        let lock = tokio::task::spawn_blocking(move || -> Result<Flock<std::fs::File>, String> {
            if let Some(dir) = path.parent() {
                private::create_dir(dir).map_err(|e| e.to_string())?;
            }
            let file = private::open_append(&path).map_err(|e| e.to_string())?;
            Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| e.to_string())
        })
        .await
        .map_err(|e| fail(e.to_string()))?
        .map_err(fail)?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn creds(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_string(), None, vec!["read".into()], Some(1))
    }

    #[tokio::test]
    async fn saved_tokens_are_private_and_bound_to_their_url() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path(), "my docs", "http://127.0.0.1:1/mcp");
        assert!(store.load().await.unwrap().is_none());
        store.save(creds("abc")).await.unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
        assert!(store.path().ends_with("mcp-auth/my_docs.json"));
        assert_eq!(store.load().await.unwrap().unwrap().client_id, "abc");

        let moved = TokenStore::new(dir.path(), "my docs", "http://127.0.0.1:2/mcp");
        assert!(moved.load().await.unwrap().is_none());

        store.clear().await.unwrap();
        assert!(!store.path().exists());
        assert!(!store.remove().unwrap());
    }

    #[tokio::test]
    async fn a_damaged_file_says_to_log_in_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path(), "s", "http://h/mcp");
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), "{not json").unwrap();
        let err = store.load().await.unwrap_err().to_string();
        assert!(err.contains("log in again"), "{err}");
    }

    #[tokio::test]
    async fn tokens_are_never_read_or_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path(), "s", "http://h/mcp");
        let elsewhere = dir.path().join("elsewhere.json");
        TokenStore::new(dir.path(), "t", "http://h/mcp")
            .save(creds("planted"))
            .await
            .unwrap();
        std::fs::rename(dir.path().join("mcp-auth/t.json"), &elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, store.path()).unwrap();
        let err = store.load().await.unwrap_err().to_string();
        assert!(err.contains("is a link"), "{err}");
        let mode = std::fs::metadata(&elsewhere).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "the link's target was left alone");
        store.save(creds("mine")).await.unwrap();
        assert!(
            std::fs::read_to_string(&elsewhere)
                .unwrap()
                .contains("planted")
        );
        assert_eq!(store.load().await.unwrap().unwrap().client_id, "mine");
    }

    #[tokio::test]
    async fn a_refresh_waits_for_another_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path(), "s", "http://h/mcp");
        let first = store.acquire_refresh_guard().await.unwrap();
        let other = store.clone();
        let mut second = tokio::spawn(async move { other.acquire_refresh_guard().await });
        let waited = tokio::time::timeout(std::time::Duration::from_millis(200), &mut second).await;
        assert!(waited.is_err(), "the second refresh waits");
        drop(first);
        let second = tokio::time::timeout(std::time::Duration::from_secs(5), second)
            .await
            .expect("the second refresh goes on once the first is done");
        assert!(second.unwrap().unwrap().is_some());
    }
}
