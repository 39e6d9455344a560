//! The language servers of one workspace: none runs until a tool touches
//! a file of its language; then it starts in the sandbox, and its state
//! (starting, indexing, ready, failed: why) is there for the status line
//! and `/lsp`, which can restart it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::client::Client;
use super::servers::{self, ServerSpec};
use crate::config::lsp::LspConfig;
use crate::sync::lock;

/// A server's state as the person sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum ServerState {
    Starting,
    /// Ready but busy (`$/progress`): what with.
    Indexing(String),
    Ready,
    Failed(String),
}

/// A server cairn knows here, for `/lsp`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnownServer {
    pub name: String,
    /// Its file types, space-separated.
    pub filetypes: String,
    /// Its program is installed (found on the safe `PATH`).
    pub installed: bool,
}

/// One started server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerStatus {
    pub name: String,
    pub root: PathBuf,
    pub state: ServerState,
}

#[derive(Clone)]
enum Phase {
    Starting,
    Ready(Arc<Client>),
    Failed(String),
}

type Key = (String, PathBuf);

/// Why no server starts once the session has ended.
const STOPPED: &str = "cairn stopped its language servers (the session ended)";

/// How long a touched file waits for its server to open it there.
const OPEN_WAIT: Duration = Duration::from_secs(60);

/// How long `shutdown` waits for a server still starting to be stopped.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

pub struct LspManager {
    pub(super) workspace: PathBuf,
    sandbox: crate::sandbox::Sandbox,
    specs: Vec<ServerSpec>,
    /// Servers the person named a command for: shown failing when that
    /// program is missing, where a built-in one is just left out.
    configured: HashSet<String>,
    /// Config entries that cannot be servers, with why.
    problems: Vec<(String, String)>,
    /// `PATH` without relative entries and without folders inside the
    /// workspace: where programs are found, and the servers' own `PATH`.
    path_var: Option<OsString>,
    /// The project is trusted: with the sandbox off, an untrusted
    /// project's server does not start (it runs the repository's config
    /// and plugins).
    trusted: bool,
    slots: Mutex<BTreeMap<Key, watch::Sender<Phase>>>,
    /// The server chosen for each file extension (an index into `specs`,
    /// `None`: none is installed): `PATH` is searched once per language,
    /// not on every file a tool touches. The configuration is read once
    /// per manager (a new session builds a new one); `/lsp` and `/lsp
    /// restart` search again, for a program installed meanwhile.
    choices: Mutex<HashMap<String, Option<usize>>>,
    /// Set by `shutdown`, under the `slots` lock: no server starts after,
    /// and one starting is abandoned (its process killed).
    closed: watch::Sender<bool>,
    changes: Arc<watch::Sender<u64>>,
    pub(super) docs: super::documents::Documents,
}

impl LspManager {
    /// Reads the configuration; starts nothing.
    pub fn new(
        config: &LspConfig,
        workspace: PathBuf,
        sandbox: crate::sandbox::Sandbox,
        trusted: bool,
    ) -> Arc<LspManager> {
        let path = std::env::var_os("PATH");
        Self::with_path(config, workspace, sandbox, trusted, path.as_deref())
    }

    /// As `new`, with programs looked up on `path` (made safe first).
    pub(super) fn with_path(
        config: &LspConfig,
        workspace: PathBuf,
        sandbox: crate::sandbox::Sandbox,
        trusted: bool,
        path: Option<&std::ffi::OsStr>,
    ) -> Arc<LspManager> {
        let (specs, problems) = servers::specs(config);
        let configured = (config.servers.iter())
            .filter(|(_, s)| s.command.is_some())
            .map(|(n, _)| n.clone())
            .collect();
        Arc::new(LspManager {
            workspace: workspace.clone(),
            sandbox,
            specs,
            configured,
            problems,
            path_var: servers::safe_path(path, &workspace),
            trusted,
            slots: Mutex::new(BTreeMap::new()),
            choices: Mutex::new(HashMap::new()),
            closed: watch::channel(false).0,
            changes: Arc::new(watch::channel(0).0),
            docs: Default::default(),
        })
    }

    /// The server that looks after `path` and its root, if any does.
    pub fn server_for(&self, path: &Path) -> Option<(ServerSpec, PathBuf)> {
        let ext = servers::extension(path);
        let cached = lock(&self.choices).get(&ext).copied();
        let chosen = match cached {
            Some(c) => c,
            None => {
                let c = self.choose(path);
                lock(&self.choices).insert(ext, c);
                c
            }
        };
        let found = &self.specs[chosen?];
        let root = servers::root_for(found, path, &self.workspace);
        Some((found.clone(), root))
    }

    /// The first server for `path`'s type whose program is installed, else
    /// the first the person configured (shown failing, not left out).
    fn choose(&self, path: &Path) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.specs.len())
            .filter(|&i| servers::serves(&self.specs[i], path))
            .collect();
        let installed = |i: &&usize| {
            servers::find_program(&self.specs[**i].command, self.path_var.as_deref()).is_some()
        };
        (candidates.iter().find(installed))
            .or_else(|| {
                (candidates.iter()).find(|i| self.configured.contains(&self.specs[**i].name))
            })
            .copied()
    }

    /// Forgets the servers chosen per language: `PATH` is searched again.
    fn choose_again(&self) {
        lock(&self.choices).clear();
    }

    /// Starts `path`'s server in the background if it is not running, and
    /// opens the file in it once it runs (see `open_touched`).
    pub fn touch(self: &Arc<Self>, path: &Path) {
        // Only the workspace's own files: a path outside it may be a
        // secret the gate has not (or will never have) allowed, and a
        // server is the repository's program.
        if !crate::paths::lexical(path).starts_with(&self.workspace) {
            return;
        }
        if let Some((spec, root)) = self.server_for(path) {
            self.slot(&spec, &root);
            if path.is_file() && self.docs.queue_touched(path) {
                let me = self.clone();
                let path = path.to_path_buf();
                tokio::spawn(async move { me.open_touched(&path, OPEN_WAIT).await });
            }
        }
    }

    /// The slot of (server, root), started when new.
    fn slot(self: &Arc<Self>, spec: &ServerSpec, root: &Path) -> watch::Receiver<Phase> {
        let key = (spec.name.clone(), root.to_path_buf());
        let mut slots = lock(&self.slots);
        if let Some(s) = slots.get(&key) {
            return s.subscribe();
        }
        if self.is_closed() {
            return watch::channel(Phase::Failed(STOPPED.into())).1;
        }
        let (tx, rx) = watch::channel(Phase::Starting);
        slots.insert(key.clone(), tx);
        drop(slots);
        self.launch(spec.clone(), key);
        rx
    }

    fn launch(self: &Arc<Self>, spec: ServerSpec, key: Key) {
        self.changed();
        let me = self.clone();
        tokio::spawn(async move {
            let mut closed = me.closed.subscribe();
            let started = tokio::select! {
                r = me.spawn_server(&spec, &key.1) => r,
                // Dropping the start kills the process.
                _ = closed.wait_for(|c| *c) => Err(STOPPED.to_string()),
            };
            let phase = match started {
                Ok(client) => Phase::Ready(client),
                Err(why) => {
                    tracing::warn!("language server {} failed: {why}", spec.name);
                    Phase::Failed(why)
                }
            };
            // Under the lock `shutdown` closes with: a server that finished
            // starting after it looked is stopped here instead.
            let late = {
                let slots = lock(&me.slots);
                match (me.is_closed(), phase) {
                    (true, Phase::Ready(client)) => {
                        if let Some(tx) = slots.get(&key) {
                            tx.send_replace(Phase::Failed(STOPPED.into()));
                        }
                        Some(client)
                    }
                    (_, phase) => {
                        if let Some(tx) = slots.get(&key) {
                            tx.send_replace(phase);
                        }
                        None
                    }
                }
            };
            if let Some(client) = late {
                client.stop().await;
            }
            me.changed();
        });
    }

    async fn spawn_server(&self, spec: &ServerSpec, root: &Path) -> Result<Arc<Client>, String> {
        let program = servers::find_program(&spec.command, self.path_var.as_deref())
            .ok_or_else(|| format!("`{}` is not installed or not on PATH", spec.command))?;
        let program = program.to_string_lossy();
        if !self.sandbox.holds_helpers() && !self.trusted {
            return Err(
                "the sandbox is off or cannot be enforced here, and this project is not \
                 trusted: a language server runs the repository's own config, plugins and \
                 build scripts, so cairn does not start it (trust the project, or run cairn \
                 where its sandbox holds: `cairn sandbox --status`)"
                    .into(),
            );
        }
        let helper = crate::sandbox::Helper::Lsp;
        let mut cmd = crate::sandbox::helper_command(&self.sandbox, helper, &program, root)
            .map_err(|e| format!("cannot start it in the sandbox: {e}"))?;
        // `#!/usr/bin/env node` looks `node` up on the server's own PATH:
        // the same safe one, also where the entry sets its own.
        let mut spec = spec.clone();
        let own = spec.env.get("PATH").map(OsString::from);
        let path = match own {
            Some(p) => servers::safe_path(Some(&p), &self.workspace),
            None => self.path_var.clone(),
        };
        spec.env.remove("PATH");
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        for (name, value) in self.cargo_env(root) {
            cmd.env(name, value);
        }
        let spec = &spec;
        #[cfg(unix)]
        cmd.process_group(0);
        let changes = self.changes.clone();
        let on_change = move || changes.send_modify(|n| *n += 1);
        Client::start(spec, cmd, root, on_change).await
    }

    /// What cargo needs for rust-analyzer to load a project inside the
    /// sandbox: the person's own cargo home to read the crates already
    /// downloaded (commands get a private one, but a server writes nothing
    /// there: it is read-only), offline (no network), and a target folder
    /// of its own among the project's private caches, where `cargo check`
    /// and build scripts may write. A server's own `env` still wins.
    fn cargo_env(&self, root: &Path) -> Vec<(&'static str, OsString)> {
        let mut env = vec![("CARGO_NET_OFFLINE", OsString::from("true"))];
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().join(".cargo")));
        if let Some(home) = home.filter(|h| h.is_dir()) {
            env.push(("CARGO_HOME", home.into_os_string()));
        }
        let caches = self.sandbox.policy(root).and_then(|p| p.caches);
        if let Some(c) = caches {
            env.push((
                "CARGO_TARGET_DIR",
                c.dir.join("lsp-target").into_os_string(),
            ));
        }
        env
    }

    fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Ticks whenever a server's state may have changed.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The client for `path`, waiting up to `wait` for it to start. `Ok(None)`:
    /// no server looks after this file; `Err((server, why))`: one does but
    /// cannot be had.
    pub async fn client_for(
        self: &Arc<Self>,
        path: &Path,
        wait: Duration,
    ) -> Result<Option<Arc<Client>>, (String, String)> {
        let Some((spec, root)) = self.server_for(path) else {
            return Ok(None);
        };
        let mut rx = self.slot(&spec, &root);
        let waited = tokio::time::timeout(wait, rx.wait_for(|p| !matches!(p, Phase::Starting)));
        let phase = match waited.await {
            Ok(Ok(p)) => p.clone(),
            Ok(Err(_)) => Phase::Failed("it was stopped".into()),
            Err(_) => return Err((spec.name, "it is still starting".into())),
        };
        match phase {
            Phase::Ready(c) => match c.ended() {
                Some(why) => Err((spec.name, format!("it stopped: {why}"))),
                None => Ok(Some(c)),
            },
            Phase::Failed(why) => Err((spec.name, why)),
            Phase::Starting => Err((spec.name, "it is still starting".into())),
        }
    }

    /// Every started server's state, and config entries that are not
    /// servers.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let slots = lock(&self.slots);
        let mut out: Vec<ServerStatus> = slots
            .iter()
            .map(|((name, root), tx)| ServerStatus {
                name: name.clone(),
                root: root.clone(),
                state: match &*tx.borrow() {
                    Phase::Starting => ServerState::Starting,
                    Phase::Failed(why) => ServerState::Failed(why.clone()),
                    Phase::Ready(c) => match (c.ended(), c.busy()) {
                        (Some(why), _) => ServerState::Failed(format!("stopped: {why}")),
                        (None, Some(what)) => ServerState::Indexing(what),
                        (None, None) => ServerState::Ready,
                    },
                },
            })
            .collect();
        for (name, why) in &self.problems {
            out.push(ServerStatus {
                name: name.clone(),
                root: self.workspace.clone(),
                state: ServerState::Failed(why.clone()),
            });
        }
        out
    }

    /// The servers cairn would start here, by name, for `/lsp`.
    /// Searches `PATH` again (a program may have been installed since).
    pub fn known(&self) -> Vec<KnownServer> {
        self.choose_again();
        self.specs
            .iter()
            .map(|s| KnownServer {
                name: s.name.clone(),
                filetypes: s.filetypes.join(" "),
                installed: servers::find_program(&s.command, self.path_var.as_deref()).is_some(),
            })
            .collect()
    }

    /// Stops and starts again every started server called `name`.
    pub fn restart(self: &Arc<Self>, name: &str) -> Result<(), String> {
        if self.is_closed() {
            return Err(STOPPED.into());
        }
        self.choose_again();
        let keys: Vec<Key> = lock(&self.slots)
            .keys()
            .filter(|k| k.0 == name)
            .cloned()
            .collect();
        if keys.is_empty() {
            return Err(format!(
                "`{name}` has not been started; it starts with the first file of its language"
            ));
        }
        let Some(spec) = self.specs.iter().find(|s| s.name == name).cloned() else {
            return Err(format!("`{name}` is not a language server here"));
        };
        for key in keys {
            let old = lock(&self.slots)
                .get(&key)
                .map(|tx| tx.send_replace(Phase::Starting));
            if let Some(Phase::Ready(client)) = old {
                tokio::spawn(async move { client.stop().await });
            }
            self.docs.forget_server(&key.0, &key.1);
            self.launch(spec.clone(), key);
        }
        Ok(())
    }

    /// Stops every server for good (the session is over): none starts
    /// after this, and one still starting is stopped as soon as it has
    /// started. Called again, it only waits for those.
    pub async fn shutdown(&self) {
        let (clients, starting) = {
            let slots = lock(&self.slots);
            self.closed.send_replace(true);
            let mut clients = Vec::new();
            let mut starting = Vec::new();
            for tx in slots.values() {
                match &*tx.borrow() {
                    Phase::Ready(c) => clients.push(c.clone()),
                    Phase::Starting => starting.push(tx.subscribe()),
                    Phase::Failed(_) => {}
                }
            }
            (clients, starting)
        };
        futures::future::join_all(clients.iter().map(|c| c.stop())).await;
        // Their launch stops them (see `launch`); wait for it, bounded.
        let ended = starting.into_iter().map(|mut rx| async move {
            let not_starting = rx.wait_for(|p| !matches!(p, Phase::Starting));
            let _ = tokio::time::timeout(SHUTDOWN_WAIT, not_starting).await;
        });
        futures::future::join_all(ended).await;
        self.changed();
    }

    /// What every running server has published, file by file.
    pub fn published(&self) -> Vec<(PathBuf, Vec<lsp_types::Diagnostic>)> {
        let clients: Vec<Arc<Client>> = lock(&self.slots)
            .values()
            .filter_map(|tx| match &*tx.borrow() {
                Phase::Ready(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        let mut out: Vec<_> = clients.iter().flat_map(|c| c.all_published()).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Resident memory of every running server, in KiB.
    pub fn memory_kib(&self) -> u64 {
        lock(&self.slots)
            .values()
            .filter_map(|tx| match &*tx.borrow() {
                Phase::Ready(c) => c.memory_kib(),
                _ => None,
            })
            .sum()
    }
}
