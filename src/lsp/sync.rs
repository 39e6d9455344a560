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
use super::verdict::{Elsewhere, Verdict, compare, compare_elsewhere};

/// How long after a first publication a newer one is still awaited (some
/// servers publish quick syntax results, then semantic ones).
const SETTLE: Duration = Duration::from_millis(150);

/// How long after a change with no publication (and the server idle) the
/// diagnostics last published for the file are taken to stand…
const UNCHANGED_AFTER: Duration = Duration::from_millis(1500);
/// …counting from the last thing the server said, at least this long.
const UNCHANGED_QUIET: Duration = Duration::from_millis(700);

/// Other open files are re-checked after the edited one: their
/// publications are awaited until none came for this long…
const QUIET: Duration = Duration::from_millis(300);
/// …or this long at most.
const OTHERS_WAIT: Duration = Duration::from_secs(3);

/// Another open file's diagnostics: (path, the text it holds, them).
type Other = (std::path::PathBuf, String, Vec<Diagnostic>);

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
        if let Some(v) = self.docs.verdict(path, old, new) {
            return Some(v);
        }
        // Another check (the dialog's, waiting on a slow server) holds the
        // server's copy of the files: waited for within this check's time.
        let Ok(_one) = tokio::time::timeout_at(deadline, self.docs.busy.lock()).await else {
            return Some(Verdict::Unavailable {
                server: client.name.clone(),
                reason: "it was still busy with an earlier check".into(),
            });
        };
        // That check may have been of this very change.
        if let Some(v) = self.docs.verdict(path, old, new) {
            return Some(v);
        }
        self.open_pending(&client).await;
        // The server is given the old text, then the new one; after each,
        // the other files it holds are re-checked and their diagnostics
        // read, so the edit's effect on them shows too.
        let both = async {
            let before = self
                .diagnostics(&client, path, old, deadline, false)
                .await?;
            let others_before = self.others(&client, path, deadline).await;
            let after = self
                .diagnostics(&client, path, new, deadline, false)
                .await?;
            let others_after = self.others(&client, path, deadline).await;
            Ok::<_, String>((before, after, others_before, others_after))
        };
        let verdict = match both.await {
            Ok((b, a, ob, oa)) => {
                compare(&client.name, old, &b, new, &a).with_elsewhere(self.elsewhere(&ob, &oa))
            }
            Err(reason) => Verdict::Unavailable {
                server: client.name.clone(),
                reason,
            },
        };
        if matches!(verdict, Verdict::Checked { .. }) {
            self.docs.remember_verdict(path, old, new, &verdict);
        }
        Some(verdict)
    }

    /// Gives the servers the text on disk of each of `paths` they hold
    /// (after a change of several files, such as a rename, so that the
    /// check of each sees the others as they now are).
    pub async fn hold_disk_text(self: &Arc<Self>, paths: &[std::path::PathBuf]) {
        for path in paths.iter().filter(|p| self.docs.is_open(p)) {
            let Ok(Some(client)) = self.client_for(path, OTHERS_WAIT).await else {
                continue;
            };
            let Ok(text) = super::tool::read_text(path) else {
                continue;
            };
            let _one = self.docs.busy.lock().await;
            let _ = self.docs.put(&client, path, &text).await;
        }
    }

    /// The diagnostics of the other files `client` holds, once it has
    /// been quiet for a moment (bounded).
    async fn others(&self, client: &Client, path: &Path, deadline: Instant) -> Vec<Other> {
        let open = self.docs.others(client, path);
        if open.is_empty() {
            return Vec::new();
        }
        let until = (Instant::now() + OTHERS_WAIT).min(deadline);
        let mut ticks = client.subscribe();
        loop {
            let quiet = (Instant::now() + QUIET).min(until);
            match tokio::time::timeout_at(quiet, ticks.changed()).await {
                Ok(Ok(())) if Instant::now() < until => continue,
                _ => break,
            }
        }
        open.into_iter()
            .map(|(p, text)| {
                let d = client
                    .published(&p)
                    .map(|x| x.diagnostics)
                    .unwrap_or_default();
                (p, text, d)
            })
            .collect()
    }

    /// Per other file, the errors that came between the two readings.
    fn elsewhere(&self, before: &[Other], after: &[Other]) -> Vec<Elsewhere> {
        after
            .iter()
            .map(|(p, text, a)| {
                let b = (before.iter().find(|o| &o.0 == p)).map_or(&[][..], |o| &o.2[..]);
                let shown = p.strip_prefix(&self.workspace).unwrap_or(p);
                compare_elsewhere(shown.display().to_string(), text, b, a)
            })
            .collect()
    }

    /// Opens the touched files of `path`'s server with their text on
    /// disk, once it runs, so it re-checks them when an edit elsewhere
    /// changes what they use (at most `documents::MAX_TOUCHED` files).
    pub(super) async fn open_touched(self: &Arc<Self>, path: &Path, wait: Duration) {
        let Ok(Some(client)) = self.client_for(path, wait).await else {
            return;
        };
        let _one = self.docs.busy.lock().await;
        self.open_pending(&client).await;
    }

    /// Opens the queued touched files that `client` serves (the caller
    /// holds `docs.busy`).
    async fn open_pending(&self, client: &Client) {
        let server = (client.name.clone(), client.root.clone());
        let mine = self.docs.take_touched(|p| {
            self.server_for(p).map(|(s, root)| (s.name, root)) == Some(server.clone())
        });
        for path in mine {
            let Ok(text) = super::tool::read_text(&path) else {
                continue;
            };
            if self.docs.may_open(&path)
                && let Err(e) = self.docs.put(client, &path, &text).await
            {
                tracing::debug!("{}: could not open {}: {e}", client.name, path.display());
            }
        }
    }

    /// The diagnostics of `text` as `path`'s content.
    pub(super) async fn diagnostics(
        &self,
        client: &Client,
        path: &Path,
        text: &str,
        deadline: Instant,
        use_cache: bool,
    ) -> Result<Vec<Diagnostic>, String> {
        if let Some(d) = self.docs.cached(path, text).filter(|_| use_cache) {
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
        // Some servers (typescript-language-server) publish a file's
        // diagnostics only when they differ from the last ones: a text
        // whose problems are the same gets no publication. Once the server
        // is idle and quiet after the change, the last ones stand.
        let mut unchanged_at = Instant::now() + UNCHANGED_AFTER;
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
            let wake = if found.is_none() {
                until.min(unchanged_at)
            } else {
                until
            };
            match tokio::time::timeout_at(wake, ticks.changed()).await {
                Ok(Ok(())) => {
                    unchanged_at = unchanged_at.max(Instant::now() + UNCHANGED_QUIET);
                    continue;
                }
                Ok(Err(_)) => return Err("the server stopped".into()),
                Err(_) if Instant::now() >= until => break,
                Err(_) => {
                    let last = client.published(path).filter(|p| p.seq <= seen);
                    match last {
                        Some(p) if changed && client.busy().is_none() => {
                            found = Some((p.seq, p.diagnostics));
                            break;
                        }
                        _ => unchanged_at = Instant::now() + UNCHANGED_QUIET,
                    }
                }
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
