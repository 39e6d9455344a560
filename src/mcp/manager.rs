//! Starts, watches and restarts the configured MCP servers.
//!
//! Each server has a slot holding its state; one background task per
//! connection attempt (a "generation") connects, lists the tools, then waits
//! for the session to end, a restart or a `tools/list_changed`. A task only
//! writes to its slot while its generation is current, so a restart never
//! races an old task's last words.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::Tool as McpToolDef;
use rmcp::service::Peer;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::client::CairnClient;
use super::notices::{Hub, transition_notice};
use super::progress::ProgressRouter;
use super::slot::{Live, Slot, SlotInner};
use super::transport::{self, ConnectError, Connection};
use super::{ServerState, ServerStatus, TransportKind, server_key};
use crate::config::McpServerConfig;
use crate::sync::lock;
use crate::tools::{Registry, Tool};

/// How long a stopping session gets to close before its process is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

pub struct McpManager {
    pub(super) slots: BTreeMap<String, Arc<Slot>>,
    pub(super) hub: Arc<Hub>,
    pub(super) asker: super::elicit::SharedAsker,
}

impl McpManager {
    /// Starts every enabled server in the background and returns at once.
    /// Must be called from within a Tokio runtime.
    pub fn start(servers: BTreeMap<String, McpServerConfig>) -> Arc<McpManager> {
        Self::start_in(servers, None)
    }

    /// Like [`Self::start`], offering `root` (the workspace) to the servers
    /// as the client's root.
    pub fn start_in(
        servers: BTreeMap<String, McpServerConfig>,
        root: Option<std::path::PathBuf>,
    ) -> Arc<McpManager> {
        Self::start_contained(servers, root, None)
    }

    /// Like [`Self::start_in`], running project servers (and those marked
    /// `sandbox = true`) under `sandbox`'s helper rules.
    pub fn start_contained(
        servers: BTreeMap<String, McpServerConfig>,
        root: Option<std::path::PathBuf>,
        sandbox: Option<crate::sandbox::Sandbox>,
    ) -> Arc<McpManager> {
        let asker = super::elicit::SharedAsker::default();
        let outside = |c: &McpServerConfig| {
            c.from_project && c.command.is_some() && !super::transport::sandboxed(c)
        };
        // What the project's trust was asked about: the folders every such
        // server names, and the workspace's state then (`survey_once`).
        let named = root.as_deref().map(|root| {
            let at = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            let words: Vec<String> = (servers.values())
                .filter(|c| outside(c))
                .flat_map(McpServerConfig::command_words)
                .collect();
            crate::sandbox::workspace_changes::outward::named(&at, words.iter().map(String::as_str))
        });
        let slots = servers
            .into_iter()
            .map(|(name, config)| {
                let state = if config.disabled {
                    ServerState::Disabled
                } else {
                    ServerState::Starting
                };
                let outside = outside(&config).then(|| {
                    let (Some(root), Some(named)) = (root.as_deref(), named.as_deref()) else {
                        return String::new();
                    };
                    crate::sandbox::workspace_changes::survey_once(root, named).0
                });
                let slot = Arc::new(Slot {
                    name: name.clone(),
                    outside,
                    config,
                    inner: Mutex::new(SlotInner {
                        state,
                        tools: Vec::new(),
                        live: None,
                        generation: 0,
                        stop: CancellationToken::new(),
                        task: None,
                        started: tokio::time::Instant::now(),
                        failed_before: false,
                        sse: false,
                    }),
                    relisting: Arc::new(AtomicBool::new(false)),
                    contained: std::sync::OnceLock::new(),
                    root: root.clone(),
                    sandbox: sandbox.clone(),
                    asker: asker.clone(),
                });
                (name, slot)
            })
            .collect();
        let manager = Arc::new(McpManager {
            slots,
            hub: Arc::new(Hub::default()),
            asker,
        });
        for slot in manager.slots.values() {
            if !slot.config.disabled {
                manager.launch(slot);
            }
        }
        manager.stop_outside_on_change();
        manager
    }

    /// A project's server outside the sandbox stops the moment a call may
    /// change the workspace it loads from (before that call runs).
    fn stop_outside_on_change(self: &Arc<Self>) {
        if !self.slots.values().any(|s| s.outside.is_some()) {
            return;
        }
        let mut ticks = crate::sandbox::workspace_changes::subscribe();
        let manager = Arc::downgrade(self);
        tokio::spawn(async move {
            while ticks.changed().await.is_ok() {
                let Some(manager) = manager.upgrade() else {
                    return;
                };
                for slot in manager.slots.values() {
                    manager.stop_if_outside_changed(slot);
                }
            }
        });
    }

    /// Stops `slot` when [`Slot::outside_changed`] says so; `true` then.
    pub(super) fn stop_if_outside_changed(&self, slot: &Slot) -> bool {
        let Some(reason) = slot.outside_changed() else {
            return false;
        };
        {
            let mut inner = lock(&slot.inner);
            if matches!(&inner.state, ServerState::Failed { reason: r } if *r == reason) {
                return true;
            }
            inner.failed_before = true;
            inner.halt(ServerState::Failed {
                reason: reason.clone(),
            });
        }
        self.hub.publish(crate::tools::SourceNotice {
            problem: true,
            text: format!(
                "MCP server `{}` {reason}. Its tools are unavailable in this session.",
                slot.name
            ),
        });
        self.tick();
        true
    }

    /// Ticks whenever the set of tools changes: a server connected, failed,
    /// crashed or announced a new tool list.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.hub.changes.subscribe()
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.slots.values().map(|slot| slot.status()).collect()
    }

    /// One tool per tool of every connected server.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut seen = std::collections::HashSet::new();
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for slot in self.slots.values() {
            for def in lock(&slot.inner).tools.iter() {
                if def.name.trim().is_empty() || !offers(&slot.config, &def.name) {
                    continue;
                }
                let tool = super::McpTool::new(slot.clone(), def);
                if seen.insert(tool.name().to_string()) {
                    out.push(Arc::new(tool));
                } else {
                    tracing::warn!(
                        server = %slot.name,
                        tool = %def.name,
                        "MCP tool skipped: its name clashes with another once shortened"
                    );
                }
            }
        }
        let with_resources: Vec<Arc<Slot>> = self
            .slots
            .values()
            .filter(|s| super::resources::offers_resources(s))
            .cloned()
            .collect();
        if !with_resources.is_empty() {
            out.push(Arc::new(super::resources::ListResources {
                slots: with_resources.clone(),
            }));
            out.push(Arc::new(super::resources::ReadResource {
                slots: with_resources,
            }));
        }
        out
    }

    /// Replaces the MCP tools in `registry` with the current ones; call it
    /// whenever [`Self::changes`] ticks.
    pub fn install_tools(&self, registry: &mut Registry) {
        registry.remove_where(|name| {
            super::split_tool_name(name).is_some()
                || name == super::resources::LIST
                || name == super::resources::READ
        });
        for tool in self.tools() {
            registry.register(tool);
        }
    }

    /// Whether the server (by its configured or its sanitised name, as in a
    /// tool name) is marked `trusted`.
    pub fn is_trusted(&self, server: &str) -> bool {
        self.find(server).is_some_and(|slot| slot.config.trusted)
    }

    /// Stops the server if it runs and starts it again in the background.
    pub fn restart(&self, name: &str) -> Result<(), String> {
        let slot = self.find(name).ok_or_else(|| {
            let known: Vec<&str> = self.slots.keys().map(String::as_str).collect();
            format!(
                "there is no MCP server named `{name}` (configured: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
        if slot.config.disabled {
            return Err(format!(
                "MCP server `{name}` is disabled in the configuration"
            ));
        }
        self.launch(slot);
        Ok(())
    }

    /// Stops every server and waits (briefly) for their processes to end.
    pub async fn shutdown(&self) {
        let mut tasks = Vec::new();
        for slot in self.slots.values() {
            let mut inner = lock(&slot.inner);
            if matches!(inner.state, ServerState::Disabled) {
                inner.halt(ServerState::Disabled);
            } else {
                inner.halt(ServerState::Failed {
                    reason: "cairn stopped it".to_string(),
                });
            }
            tasks.extend(inner.task.take());
        }
        for task in tasks {
            let _ = tokio::time::timeout(CLOSE_GRACE * 3, task).await;
        }
        self.tick();
    }

    pub(super) fn find(&self, name: &str) -> Option<&Arc<Slot>> {
        self.slots
            .get(name)
            .or_else(|| self.slots.values().find(|s| server_key(&s.name) == name))
    }

    fn tick(&self) {
        self.hub.tick();
    }

    /// Starts a new generation for `slot`, stopping the previous one.
    fn launch(&self, slot: &Arc<Slot>) {
        if self.stop_if_outside_changed(slot) {
            return;
        }
        let stop = CancellationToken::new();
        let generation = {
            let mut inner = lock(&slot.inner);
            inner.stop.cancel();
            inner.stop = stop.clone();
            inner.generation += 1;
            inner.state = ServerState::Starting;
            inner.live = None;
            inner.tools.clear();
            inner.started = tokio::time::Instant::now();
            inner.generation
        };
        slot.relisting.store(false, Ordering::SeqCst);
        self.tick();
        let task = tokio::spawn(supervise(slot.clone(), generation, stop, self.hub.clone()));
        let mut inner = lock(&slot.inner);
        if inner.generation == generation {
            inner.task = Some(task);
        }
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        for slot in self.slots.values() {
            lock(&slot.inner).stop.cancel();
        }
    }
}

/// Whether `enabled_tools` / `disabled_tools` let the model see `tool`.
fn offers(config: &McpServerConfig, tool: &str) -> bool {
    let enabled = config
        .enabled_tools
        .as_ref()
        .is_none_or(|list| list.iter().any(|t| t == tool));
    enabled && !config.disabled_tools.iter().any(|t| t == tool)
}

impl Slot {
    fn status(&self) -> ServerStatus {
        let inner = lock(&self.inner);
        let (transport, target) = match (&self.config.command, &self.config.url) {
            (Some(command), _) => {
                let mut line = command.clone();
                for arg in &self.config.args {
                    line.push(' ');
                    line.push_str(arg);
                }
                (TransportKind::Stdio, line)
            }
            // The transport connected, which may be the older one a
            // streamable HTTP address fell back to.
            (None, Some(url)) if self.config.transport.as_deref() == Some("sse") || inner.sse => {
                (TransportKind::Sse, url.clone())
            }
            (None, Some(url)) => (TransportKind::Http, url.clone()),
            (None, None) => (TransportKind::Stdio, String::new()),
        };
        ServerStatus {
            name: self.name.clone(),
            state: inner.state.clone(),
            tools: inner.tools.iter().map(|t| t.name.to_string()).collect(),
            transport,
            target,
            trusted: self.config.trusted,
            contained_at: self.contained.get().cloned().flatten(),
        }
    }

    /// Applies `f` if `generation` is still current; ticks the hub if so,
    /// with a notice when the server failed, crashed or came back.
    fn update(&self, generation: u64, hub: &Hub, f: impl FnOnce(&mut SlotInner)) -> bool {
        let notice = {
            let mut inner = lock(&self.inner);
            if inner.generation != generation {
                return false;
            }
            let before = inner.state.clone();
            f(&mut inner);
            let notice = transition_notice(&self.name, &before, &inner.state, inner.failed_before);
            if inner.state.is_failed() {
                inner.failed_before = true;
            }
            notice
        };
        if let Some(notice) = notice {
            hub.publish(notice);
        }
        hub.tick();
        true
    }

    fn fail(&self, generation: u64, reason: String, hub: &Hub) {
        self.fail_as(generation, ServerState::Failed { reason }, hub);
    }

    /// Marks the server failed (`state` says how) and forgets its session.
    fn fail_as(&self, generation: u64, state: ServerState, hub: &Hub) {
        tracing::warn!(server = %self.name, "MCP server not working: {state:?}");
        self.relisting.store(false, Ordering::SeqCst);
        self.update(generation, hub, |inner| {
            inner.state = state;
            inner.live = None;
            inner.tools.clear();
        });
    }

    fn set_tools(&self, generation: u64, tools: Vec<McpToolDef>, hub: &Hub) {
        self.relisting.store(false, Ordering::SeqCst);
        self.update(generation, hub, |inner| {
            inner.state = ServerState::Connected { tools: tools.len() };
            inner.tools = tools;
        });
    }
}

/// One generation of a server's life: connect, list, serve until it ends.
async fn supervise(slot: Arc<Slot>, generation: u64, stop: CancellationToken, hub: Arc<Hub>) {
    let progress = Arc::new(ProgressRouter::default());
    let (list_tx, list_rx) = mpsc::unbounded_channel();
    let client = CairnClient {
        server: slot.name.clone(),
        progress: progress.clone(),
        tools_changed: list_tx,
        relisting: slot.relisting.clone(),
        root: slot.root.clone(),
        asker: slot.asker.clone(),
        log_budget: Default::default(),
    };
    if let Some(at) = transport::decide_containment(&slot) {
        hub.publish(crate::tools::SourceNotice {
            problem: false,
            text: format!(
                "MCP server `{}` runs in the sandbox (read-only, network on): it loads from {}, \
                 which this session's commands can change. `sandbox = false` in its entry runs \
                 it as you.",
                slot.name,
                at.display()
            ),
        });
    }
    let Some((session, child, tools, sse)) = start(&slot, generation, &stop, &hub, client).await
    else {
        return;
    };
    tracing::info!(server = %slot.name, tools = tools.len(), "MCP server connected");
    let peer = session.peer().clone();
    let live = Live {
        peer: peer.clone(),
        progress,
    };
    slot.update(generation, &hub, |inner| {
        inner.state = ServerState::Connected { tools: tools.len() };
        inner.tools = tools;
        inner.live = Some(live);
        inner.sse = sse;
    });
    serve(
        &slot, generation, &stop, &hub, session, child, peer, list_rx,
    )
    .await;
}

/// A started server: its session, process, tools, and whether it speaks
/// HTTP+SSE.
type Started = (
    transport::Session,
    Option<transport::ServerProcess>,
    Vec<McpToolDef>,
    bool,
);

/// Connects and lists the tools within the start-up limit; `None` when it
/// was stopped or failed (the slot then says why).
async fn start(
    slot: &Slot,
    generation: u64,
    stop: &CancellationToken,
    hub: &Hub,
    client: CairnClient,
) -> Option<Started> {
    let limit = slot.startup_timeout();
    // Starting and the first listing share one deadline.
    let deadline = tokio::time::Instant::now() + limit;
    let late = || {
        format!(
            "it did not finish starting within {} s (raise `startup_timeout_secs` for this \
             server if it needs longer)",
            limit.as_secs()
        )
    };
    // Dropping a half-made connection (stop, timeout) kills its process.
    let connected = tokio::select! {
        _ = stop.cancelled() => return None,
        r = tokio::time::timeout_at(deadline, transport::connect(slot, client)) => {
            r.unwrap_or_else(|_| Err(late().into()))
        }
    };
    let Connection {
        session,
        mut child,
        sse,
    } = match connected {
        Ok(c) => c,
        Err(ConnectError::Failed(reason)) => {
            slot.fail(generation, reason, hub);
            return None;
        }
        Err(ConnectError::NeedsLogin(reason)) => {
            slot.fail_as(generation, ServerState::NeedsLogin { reason }, hub);
            return None;
        }
    };
    let peer = session.peer().clone();
    let listed = tokio::select! {
        _ = stop.cancelled() => None,
        r = tokio::time::timeout_at(deadline, peer.list_all_tools()) => Some(r),
    };
    let tools = match listed {
        Some(Ok(Ok(tools))) => tools,
        other => {
            if let Some(reason) = match other {
                Some(Ok(Err(e))) => Some(format!(
                    "listing its tools failed: {}",
                    super::errors::service_failure(&e)
                )),
                Some(Err(_)) => Some(late()),
                _ => None,
            } {
                slot.fail(generation, reason, hub);
            }
            match child.as_mut() {
                Some(child) if slot.outside_changed().is_some() => child.kill_now().await,
                Some(child) => {
                    let _ = session.cancel().await;
                    child.stop().await;
                }
                None => {
                    let _ = session.cancel().await;
                }
            }
            return None;
        }
    };
    Some((session, child, tools, sse))
}

/// Serves a connected session until it is stopped or ends, re-listing the
/// tools when the server says they changed.
#[allow(clippy::too_many_arguments)]
async fn serve(
    slot: &Slot,
    generation: u64,
    stop: &CancellationToken,
    hub: &Hub,
    session: transport::Session,
    mut child: Option<transport::ServerProcess>,
    peer: Peer<RoleClient>,
    mut list_rx: mpsc::UnboundedReceiver<()>,
) {
    let closer = session.cancellation_token();
    let mut ended = Box::pin(session.waiting());
    loop {
        tokio::select! {
            _ = stop.cancelled() => {
                // Outside the sandbox, with the workspace about to change:
                // a writing call waits for it to be gone.
                if let Some(child) = child.as_mut().filter(|_| slot.outside_changed().is_some()) {
                    child.kill_now().await;
                    return;
                }
                closer.cancel();
                let _ = tokio::time::timeout(CLOSE_GRACE, &mut ended).await;
                if let Some(child) = child.as_mut() {
                    child.stop().await;
                }
                return;
            }
            _ = &mut ended => {
                let reason = match child.as_mut() {
                    Some(child) => {
                        let why = child.exit_reason(CLOSE_GRACE).await;
                        child.stop().await;
                        why.unwrap_or_else(|| "the server closed its connection".to_string())
                    }
                    None => "the connection to the server closed".to_string(),
                };
                return slot.fail(generation, reason, hub);
            }
            Some(()) = list_rx.recv() => {
                // Several notifications in a burst need one listing.
                while list_rx.try_recv().is_ok() {}
                tokio::select! {
                    // The stop arm above handles it on the next turn.
                    _ = stop.cancelled() => continue,
                    _ = relist(slot, generation, &peer, hub) => {}
                }
            }
        }
    }
}

async fn relist(slot: &Slot, generation: u64, peer: &Peer<RoleClient>, hub: &Hub) {
    match tokio::time::timeout(slot.startup_timeout(), peer.list_all_tools()).await {
        Ok(Ok(tools)) => slot.set_tools(generation, tools, hub),
        other => {
            match other {
                Ok(Err(e)) => {
                    tracing::warn!(server = %slot.name, "re-listing MCP tools failed: {e}")
                }
                _ => tracing::warn!(server = %slot.name, "re-listing MCP tools timed out"),
            }
            slot.relisting.store(false, Ordering::SeqCst);
            hub.tick();
        }
    }
}
