//! The language servers of one workspace: none runs until a tool touches
//! a file of its language; then it starts in the sandbox, and its state
//! (starting, indexing, ready, failed: why) is there for the status line
//! and `/lsp`, which can restart it.

use std::collections::{BTreeMap, HashSet};
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
            path_var: servers::safe_path(std::env::var_os("PATH").as_deref(), &workspace),
            trusted,
            slots: Mutex::new(BTreeMap::new()),
            changes: Arc::new(watch::channel(0).0),
            docs: Default::default(),
        })
    }

    /// The server that looks after `path` and its root, if any does.
    pub fn server_for(&self, path: &Path) -> Option<(ServerSpec, PathBuf)> {
        let candidates = servers::for_file(&self.specs, path);
        let found = candidates
            .iter()
            .find(|s| servers::find_program(&s.command, self.path_var.as_deref()).is_some())
            .or_else(|| {
                candidates
                    .iter()
                    .find(|s| self.configured.contains(&s.name))
            })?;
        let root = servers::root_for(found, path, &self.workspace);
        Some(((*found).clone(), root))
    }

    /// Starts `path`'s server in the background if it is not running.
    pub fn touch(self: &Arc<Self>, path: &Path) {
        if let Some((spec, root)) = self.server_for(path) {
            self.slot(&spec, &root);
        }
    }

    /// The slot of (server, root), started when new.
    fn slot(self: &Arc<Self>, spec: &ServerSpec, root: &Path) -> watch::Receiver<Phase> {
        let key = (spec.name.clone(), root.to_path_buf());
        let mut slots = lock(&self.slots);
        if let Some(s) = slots.get(&key) {
            return s.subscribe();
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
            let phase = match me.spawn_server(&spec, &key.1).await {
                Ok(client) => Phase::Ready(client),
                Err(why) => {
                    tracing::warn!("language server {} failed: {why}", spec.name);
                    Phase::Failed(why)
                }
            };
            if let Some(tx) = lock(&me.slots).get(&key) {
                tx.send_replace(phase);
            }
            me.changed();
        });
    }

    async fn spawn_server(&self, spec: &ServerSpec, root: &Path) -> Result<Arc<Client>, String> {
        let program = servers::find_program(&spec.command, self.path_var.as_deref())
            .ok_or_else(|| format!("`{}` is not installed or not on PATH", spec.command))?;
        let program = program.to_string_lossy();
        if self.sandbox.mode() == crate::config::SandboxMode::Off && !self.trusted {
            return Err(
                "the sandbox is off and this project is not trusted: a language server \
                 runs the repository's own config and plugins, so cairn does not start it \
                 (trust the project, or turn the sandbox on)"
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
        let spec = &spec;
        #[cfg(unix)]
        cmd.process_group(0);
        let changes = self.changes.clone();
        let on_change = move || changes.send_modify(|n| *n += 1);
        Client::start(spec, cmd, root, on_change).await
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
    pub fn known(&self) -> Vec<(String, String, bool)> {
        self.specs
            .iter()
            .map(|s| {
                let found = servers::find_program(&s.command, self.path_var.as_deref()).is_some();
                (s.name.clone(), s.filetypes.join(" "), found)
            })
            .collect()
    }

    /// Stops and starts again every started server called `name`.
    pub fn restart(self: &Arc<Self>, name: &str) -> Result<(), String> {
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

    /// Stops every server (cairn is quitting).
    pub async fn shutdown(&self) {
        let clients: Vec<Arc<Client>> = lock(&self.slots)
            .values()
            .filter_map(|tx| match &*tx.borrow() {
                Phase::Ready(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        futures::future::join_all(clients.iter().map(|c| c.stop())).await;
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

/// `/lsp`'s text: the servers started, then the ones known here.
pub fn format_status(statuses: &[ServerStatus], known: &[(String, String, bool)]) -> String {
    let mut text = String::new();
    if statuses.is_empty() {
        text.push_str("No language server has started yet; one starts with the first file of its language a tool touches.\n");
    }
    for s in statuses {
        let state = match &s.state {
            ServerState::Starting => "starting…".to_string(),
            ServerState::Indexing(what) => format!("ready, busy: {what}"),
            ServerState::Ready => "ready".to_string(),
            ServerState::Failed(why) => format!("failed: {why}"),
        };
        text.push_str(&format!(
            "  {}  {}  ({})\n",
            s.name,
            state,
            s.root.display()
        ));
    }
    text.push_str("Known here (✓ installed):\n");
    for (name, types, found) in known {
        let mark = if *found { "✓" } else { "·" };
        text.push_str(&format!("  {mark} {name}  {types}\n"));
    }
    text
}
