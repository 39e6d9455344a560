//! Waiting for servers before they are needed: `cairn run` and every model
//! request wait (bounded by each server's start-up limit) for servers still
//! starting, and for a tool list a server announced but has not sent yet.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::ServerState;
use super::manager::McpManager;
use crate::tools::state::lock;
use crate::tools::{SourceHealth, SourceNotice, Tool, ToolSource};

/// How long a re-listing after `tools/list_changed` may hold a request.
const RELIST_WAIT: Duration = Duration::from_secs(5);
/// Past a server's own deadline, how long to wait for it to be marked failed.
const GRACE: Duration = Duration::from_millis(500);

/// What a request waits for.
struct Pending {
    /// Servers still starting, by name.
    starting: Vec<String>,
    /// When the last of them is due.
    deadline: Option<Instant>,
}

impl McpManager {
    fn pending(&self, relist_deadline: Instant) -> Pending {
        let mut starting = Vec::new();
        let mut deadline: Option<Instant> = None;
        for slot in self.slots.values() {
            let due = {
                let inner = lock(&slot.inner);
                if inner.state == ServerState::Starting {
                    starting.push(slot.name.clone());
                    Some(inner.started + slot.startup_timeout() + GRACE)
                } else if slot.relisting.load(Ordering::SeqCst) {
                    Some(relist_deadline)
                } else {
                    None
                }
            };
            if let Some(due) = due {
                deadline = Some(deadline.map_or(due, |d| d.max(due)));
            }
        }
        Pending { starting, deadline }
    }

    /// Waits until no server is starting or re-listing its tools, each for at
    /// most its start-up limit. Calls `waiting` once, naming the servers, if
    /// it has to wait for one to start.
    pub async fn ready(&self, waiting: &(dyn Fn(String) + Send + Sync)) {
        let mut rx = self.changes();
        let relist_deadline = Instant::now() + RELIST_WAIT;
        let mut announced = false;
        loop {
            rx.borrow_and_update();
            let pending = self.pending(relist_deadline);
            let Some(deadline) = pending.deadline else {
                return;
            };
            if Instant::now() >= deadline {
                return;
            }
            if !announced && !pending.starting.is_empty() {
                announced = true;
                let secs = deadline.saturating_duration_since(Instant::now()).as_secs() + 1;
                waiting(format!(
                    "Waiting for MCP server{} {} to start (up to {secs} s)…",
                    if pending.starting.len() == 1 { "" } else { "s" },
                    pending
                        .starting
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// Waits until no server is still starting (each is bounded by its own
    /// start-up limit), or `within` has passed.
    pub async fn settle(&self, within: Duration) {
        let _ = tokio::time::timeout(within, self.ready(&|_| {})).await;
    }

    /// The longest start-up limit of the enabled servers.
    pub fn longest_startup(&self) -> Duration {
        self.slots
            .values()
            .filter(|s| !s.config.disabled)
            .map(|s| s.startup_timeout())
            .max()
            .unwrap_or_default()
    }

    /// Servers connected, starting and enabled, for a status line.
    pub fn health(&self) -> SourceHealth {
        let mut health = SourceHealth::default();
        for slot in self.slots.values() {
            match lock(&slot.inner).state {
                ServerState::Disabled => continue,
                ServerState::Connected { .. } => health.ready += 1,
                ServerState::Starting => health.starting += 1,
                ServerState::Failed { .. } | ServerState::NeedsLogin { .. } => {}
            }
            health.total += 1;
        }
        health
    }
}

#[async_trait]
impl ToolSource for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        McpManager::tools(self)
    }

    async fn ready(&self, waiting: &(dyn Fn(String) + Send + Sync)) {
        McpManager::ready(self, waiting).await
    }

    fn notices(&self, from: usize) -> Vec<SourceNotice> {
        self.hub.since(from)
    }

    fn health(&self) -> Option<SourceHealth> {
        (!self.slots.is_empty()).then(|| McpManager::health(self))
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(McpManager::changes(self))
    }

    fn set_asker(&self, asker: crate::tools::input::Asker) {
        *lock(&self.asker) = Some(asker);
    }

    async fn attachables(&self) -> Vec<String> {
        self.resource_refs().await
    }

    async fn attach(
        &self,
        reference: &str,
        images: bool,
    ) -> Result<Vec<crate::conversation::ResultContent>, String> {
        self.read_ref(reference, images).await
    }
}
