//! Checking a proposed text: the server is given it as the file's unsaved
//! content (`didOpen`/`didChange`, nothing written to disk), its
//! diagnostics are awaited (bounded), and compared with those of the text
//! before the edit.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use lsp_types::Diagnostic;
use tokio::time::Instant;

use super::client::Client;
use super::manager::LspManager;
use super::verdict::{Verdict, compare};

/// How long after a first publication a newer one is still awaited (some
/// servers publish quick syntax results, then semantic ones).
const SETTLE: Duration = Duration::from_millis(150);

impl LspManager {
    /// The server's verdict on changing `path` from `old` to `new`, within
    /// `wait` (server start included). `None` when no server looks after
    /// the file.
    pub async fn check(
        self: &Arc<Self>,
        path: &Path,
        old: &str,
        new: &str,
        wait: Duration,
    ) -> Option<Verdict> {
        let deadline = Instant::now() + wait;
        let client = match self.client_for(path, wait).await {
            Ok(None) => return None,
            Ok(Some(c)) => c,
            Err((server, reason)) => return Some(Verdict::Unavailable { server, reason }),
        };
        let _one = self.docs.busy.lock().await;
        let both = async {
            let before = self.diagnostics(&client, path, old, deadline).await?;
            let after = self.diagnostics(&client, path, new, deadline).await?;
            Ok::<_, String>((before, after))
        };
        Some(match both.await {
            Ok((b, a)) => compare(&client.name, old, &b, new, &a),
            Err(reason) => Verdict::Unavailable {
                server: client.name.clone(),
                reason,
            },
        })
    }

    /// The diagnostics of `text` as `path`'s content.
    pub(super) async fn diagnostics(
        &self,
        client: &Client,
        path: &Path,
        text: &str,
        deadline: Instant,
    ) -> Result<Vec<Diagnostic>, String> {
        if let Some(d) = self.docs.cached(path, text) {
            return Ok(d);
        }
        let seen = client.published(path).map_or(0, |p| p.seq);
        let mut ticks = client.subscribe();
        let (version, changed) = self.docs.put(client, path, text).await?;
        let fresh = |p: &super::client::Published| {
            (!changed || p.seq > seen) && p.version.is_none_or(|v| v >= version)
        };
        let mut found: Option<(u64, Vec<Diagnostic>)> = None;
        let mut until = deadline;
        loop {
            if let Some(p) = client.published(path).filter(fresh)
                && found.as_ref().is_none_or(|f| p.seq > f.0)
            {
                if found.is_none() {
                    until = (Instant::now() + SETTLE).min(deadline);
                }
                found = Some((p.seq, p.diagnostics));
            }
            if let Some(why) = client.ended() {
                return Err(format!("the server stopped: {why}"));
            }
            match tokio::time::timeout_at(until, ticks.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => return Err("the server stopped".into()),
                Err(_) => break,
            }
        }
        match found {
            Some((_, d)) => {
                self.docs.remember(path, text, &d);
                Ok(d)
            }
            None => Err("no diagnostics in time".into()),
        }
    }
}
