//! One running language server: its process (started in the sandbox), the
//! JSON-RPC exchange over its stdio, and the diagnostics it publishes.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::Diagnostic;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{oneshot, watch};

use super::framing::{FrameError, read_message, write_message};
use super::servers::ServerSpec;
use crate::sync::lock;

/// Lines of a server's stderr kept to explain its end.
const STDERR_TAIL: usize = 8;

type Reply = Result<Value, String>;

/// What the server last published for one file.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// Counts publications, so a waiter knows one is newer than its change.
    pub seq: u64,
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
}

/// What the reader task shares with the client.
#[derive(Default)]
struct Inbox {
    pending: HashMap<i64, oneshot::Sender<Reply>>,
    published: HashMap<PathBuf, Published>,
    seq: u64,
    /// Work the server announced with `$/progress` and has not ended.
    busy: HashMap<String, String>,
    /// It has announced work at least once.
    worked: bool,
    /// Why it ended, once it has.
    ended: Option<String>,
    stderr: VecDeque<String>,
}

pub struct Client {
    pub name: String,
    pub root: PathBuf,
    stdin: tokio::sync::Mutex<ChildStdin>,
    next_id: AtomicI64,
    inbox: Arc<Mutex<Inbox>>,
    /// Ticks on every publication, progress change and the end.
    changed: watch::Sender<u64>,
    child: Mutex<Option<Child>>,
    /// When it was initialized.
    started: tokio::time::Instant,
}

/// How long after its start a server that has announced no work yet may
/// still begin loading its project (a busy machine delays it).
const FIRST_WORK: Duration = Duration::from_secs(3);

impl Client {
    /// Starts `spec`'s program with `cmd` (already sandboxed) and
    /// initializes it; `Err` says why it could not be had.
    pub async fn start(
        spec: &ServerSpec,
        mut cmd: tokio::process::Command,
        root: &Path,
        on_change: impl Fn() + Send + Sync + 'static,
    ) -> Result<Arc<Client>, String> {
        cmd.args(&spec.args)
            .envs(&spec.env)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!("`{}` is not installed or not on PATH", spec.command)
            } else {
                format!("could not start `{}`: {e}", spec.command)
            }
        })?;
        let (Some(stdin), Some(stdout), stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the server's stdin/stdout could not be opened".into());
        };
        let (changed, _) = watch::channel(0);
        let client = Arc::new(Client {
            name: spec.name.clone(),
            root: root.to_path_buf(),
            stdin: tokio::sync::Mutex::new(stdin),
            next_id: AtomicI64::new(1),
            inbox: Arc::new(Mutex::new(Inbox::default())),
            changed,
            child: Mutex::new(Some(child)),
            started: tokio::time::Instant::now(),
        });
        let mut ticks = client.changed.subscribe();
        tokio::spawn(async move {
            while ticks.changed().await.is_ok() {
                on_change();
            }
        });
        if let Some(stderr) = stderr {
            tokio::spawn(keep_stderr(stderr, client.inbox.clone()));
        }
        tokio::spawn(read_loop(BufReader::new(stdout), Arc::downgrade(&client)));
        let init = client.request("initialize", initialize_params(spec, root));
        match tokio::time::timeout(Duration::from_secs(60), init).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(client.explain(&e).await),
            Err(_) => return Err("it did not answer `initialize` within 60 s".into()),
        }
        client.notify("initialized", json!({})).await?;
        Ok(client)
    }

    /// Why the server ended, with the last of its stderr; `fallback` when
    /// it is still running.
    async fn explain(&self, fallback: &str) -> String {
        // Give the reader a moment to see the end and the exit status.
        for _ in 0..20 {
            if self.ended().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        self.ended().unwrap_or_else(|| fallback.to_string())
    }

    /// Why it ended, if it has.
    pub fn ended(&self) -> Option<String> {
        lock(&self.inbox).ended.clone()
    }

    /// What it is busy with (`$/progress`), if anything.
    pub fn busy(&self) -> Option<String> {
        lock(&self.inbox).busy.values().next().cloned()
    }

    /// Waits, at most until `deadline`, for the server to be done with
    /// what it announced (`$/progress`) and then quiet for `quiet`: a
    /// server that loads a project after a file opens answers questions
    /// across files only about what it has loaded so far.
    pub async fn settle(&self, quiet: Duration, deadline: tokio::time::Instant) {
        let mut changes = self.subscribe();
        // Just started and silent so far: it may not have begun loading.
        let first = (self.started + FIRST_WORK).min(deadline);
        while !lock(&self.inbox).worked && self.ended().is_none() {
            let left = first.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || tokio::time::timeout(left, changes.changed()).await.is_err() {
                break;
            }
        }
        loop {
            if self.ended().is_some() {
                return;
            }
            let wait = if self.busy().is_none() {
                quiet.min(deadline.saturating_duration_since(tokio::time::Instant::now()))
            } else {
                deadline.saturating_duration_since(tokio::time::Instant::now())
            };
            match tokio::time::timeout(wait, changes.changed()).await {
                Ok(Ok(())) if tokio::time::Instant::now() < deadline => continue,
                // Quiet for long enough, gone, or out of time.
                _ => return,
            }
        }
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    pub fn published(&self, path: &Path) -> Option<Published> {
        lock(&self.inbox).published.get(path).cloned()
    }

    /// Every file's current diagnostics.
    pub fn all_published(&self) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        lock(&self.inbox)
            .published
            .iter()
            .map(|(p, d)| (p.clone(), d.diagnostics.clone()))
            .collect()
    }

    pub async fn request(&self, method: &str, params: Value) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut inbox = lock(&self.inbox);
            if let Some(why) = &inbox.ended {
                return Err(why.clone());
            }
            inbox.pending.insert(id, tx);
        }
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.send(&msg).await {
            lock(&self.inbox).pending.remove(&id);
            return Err(e);
        }
        rx.await
            .unwrap_or_else(|_| Err("the server ended before it answered".into()))
    }

    pub async fn notify(&self, method: &str, params: Value) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    async fn send(&self, msg: &Value) -> Result<(), String> {
        let body = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        let mut stdin = self.stdin.lock().await;
        write_message(&mut *stdin, &body)
            .await
            .map_err(|e| format!("writing to the server: {e}"))
    }

    /// Asks it to shut down, then ends the process.
    pub async fn stop(&self) {
        if self.ended().is_none() {
            let bye = self.request("shutdown", Value::Null);
            let _ = tokio::time::timeout(Duration::from_secs(2), bye).await;
            let _ = self.notify("exit", Value::Null).await;
        }
        let child = lock(&self.child).take();
        if let Some(mut child) = child {
            if let Some(pid) = child.id() {
                crate::sandbox::kill_group(pid as i32);
            }
            let _ = child.kill().await;
        }
    }

    /// The process's memory in KiB (its resident set), when it can be read.
    pub fn memory_kib(&self) -> Option<u64> {
        let pid = lock(&self.child).as_ref()?.id()?;
        super::memory::tree_rss_kib(pid)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(pid) = lock(&self.child).as_ref().and_then(|c| c.id()) {
            crate::sandbox::kill_group(pid as i32);
        }
    }
}

fn initialize_params(spec: &ServerSpec, root: &Path) -> Value {
    let uri = super::uri::from_path(root);
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    json!({
        // A sandboxed server lives in its own process namespace, where
        // cairn's id names no process (or another one): servers that watch
        // their parent would exit at once. The sandbox ends it with cairn.
        "processId": null,
        "clientInfo": {"name": "cairn", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": uri,
        "rootPath": root,
        "workspaceFolders": [{"uri": uri, "name": name}],
        "initializationOptions": spec.initialization_options,
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "symbol": {"dynamicRegistration": false},
            },
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "definition": {"linkSupport": false},
                "references": {},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "rename": {"prepareSupport": false},
                "formatting": {"dynamicRegistration": false},
            },
        },
    })
}

/// The files whose diagnostics are kept, the newest published.
const MAX_PUBLISHED: usize = 10_000;
/// The diagnostics kept of one file.
const MAX_DIAGNOSTICS: usize = 1_000;
/// Work a server announces at once (`$/progress`) that is waited for.
const MAX_BUSY: usize = 64;

async fn keep_stderr(stderr: tokio::process::ChildStderr, inbox: Arc<Mutex<Inbox>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut inbox = lock(&inbox);
        if inbox.stderr.len() == STDERR_TAIL {
            inbox.stderr.pop_front();
        }
        inbox.stderr.push_back(crate::text::fit(&line, 200));
    }
}

/// Reads the server's messages until it ends, then says why.
async fn read_loop<R: tokio::io::AsyncBufRead + Unpin>(mut r: R, client: std::sync::Weak<Client>) {
    let why = loop {
        let body = match read_message(&mut r).await {
            Ok(b) => b,
            Err(FrameError::Closed) => break "it exited".to_string(),
            Err(e) => break e.to_string(),
        };
        let Some(client) = client.upgrade() else {
            return;
        };
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
            tracing::warn!("{}: a message that is not JSON", client.name);
            continue;
        };
        dispatch(&client, msg).await;
    };
    let Some(client) = client.upgrade() else {
        return;
    };
    let status = {
        let child = lock(&client.child).take();
        match child {
            Some(mut c) => {
                let waited = tokio::time::timeout(Duration::from_millis(500), c.wait()).await;
                let status = waited.ok().and_then(Result::ok);
                *lock(&client.child) = Some(c);
                status
            }
            None => None,
        }
    };
    // The stderr reader may still be draining the last lines.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut inbox = lock(&client.inbox);
    let mut reason = match status {
        Some(s) => format!("{why} ({s})"),
        None => why,
    };
    let tail: Vec<String> = inbox.stderr.iter().cloned().collect();
    if !tail.is_empty() {
        reason.push_str(": ");
        reason.push_str(&tail.join(" | "));
    }
    inbox.ended = Some(reason.clone());
    for (_, tx) in inbox.pending.drain() {
        let _ = tx.send(Err(reason.clone()));
    }
    drop(inbox);
    client.changed.send_modify(|n| *n += 1);
}

async fn dispatch(client: &Client, msg: Value) {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let tx = lock(&client.inbox).pending.remove(&id);
            let reply = match msg.get("error") {
                Some(e) => Err(e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the server answered with an error")
                    .to_string()),
                None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            };
            if let Some(tx) = tx {
                let _ = tx.send(reply);
            }
        }
        (Some(method), Some(id)) => {
            // Requests from the server: answered plainly so it goes on.
            let result = match method {
                "workspace/configuration" => {
                    let n = msg["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; n])
                }
                "workspace/workspaceFolders" => {
                    let uri = super::uri::from_path(&client.root);
                    json!([{"uri": uri, "name": "workspace"}])
                }
                _ => Value::Null,
            };
            let _ = client
                .send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
                .await;
        }
        (Some(method), None) => notification(client, method, &msg["params"]),
        (None, None) => {}
    }
}

fn notification(client: &Client, method: &str, params: &Value) {
    match method {
        "textDocument/publishDiagnostics" => {
            let Ok(p) =
                serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(params.clone())
            else {
                return;
            };
            let Some(path) = super::uri::to_path(p.uri.as_str()) else {
                return;
            };
            let mut diagnostics = p.diagnostics;
            diagnostics.truncate(MAX_DIAGNOSTICS);
            let mut inbox = lock(&client.inbox);
            inbox.seq += 1;
            let seq = inbox.seq;
            // A server that publishes for endless made-up files keeps the
            // newest only.
            if inbox.published.len() >= MAX_PUBLISHED && !inbox.published.contains_key(&path) {
                let oldest = (inbox.published.iter())
                    .min_by_key(|(_, p)| p.seq)
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    inbox.published.remove(&oldest);
                }
            }
            inbox.published.insert(
                path,
                Published {
                    seq,
                    version: p.version,
                    diagnostics,
                },
            );
        }
        "$/progress" => {
            let token = params["token"].to_string();
            let value = &params["value"];
            let mut inbox = lock(&client.inbox);
            match value["kind"].as_str() {
                Some("begin") if inbox.busy.len() < MAX_BUSY => {
                    let title = value["title"].as_str().unwrap_or("working");
                    inbox.busy.insert(token, crate::text::fit(title, 40));
                    inbox.worked = true;
                }
                Some("end") => {
                    inbox.busy.remove(&token);
                }
                _ => return,
            }
        }
        _ => return,
    }
    client.changed.send_modify(|n| *n += 1);
}
