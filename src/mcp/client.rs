//! cairn's side of an MCP session: what it answers to a server's
//! notifications.

// Logging notifications are deprecated by the newest protocol revision, but
// servers speaking the older ones still send them and they belong in the log.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam,
};
use rmcp::model::{ElicitRequestParams, ElicitResult, ListRootsResult, Root};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use tokio::sync::mpsc::UnboundedSender;

use super::progress::ProgressRouter;

pub(crate) struct CairnClient {
    pub(crate) server: String,
    pub(crate) progress: Arc<ProgressRouter>,
    /// Told when the server's tool list changed, so its supervisor re-lists.
    pub(crate) tools_changed: UnboundedSender<()>,
    /// Raised at once on `list_changed`, so a model request about to go out
    /// waits for the new list.
    pub(crate) relisting: Arc<AtomicBool>,
    /// The workspace, offered to the server as the client's root.
    pub(crate) root: Option<std::path::PathBuf>,
    /// Who to ask when the server wants input from the person.
    pub(crate) asker: super::elicit::SharedAsker,
    /// How many of the server's log messages still go to cairn's log.
    pub(crate) log_budget: Arc<LogBudget>,
}

/// Log messages of one server written per window; the rest are counted and
/// the count is written instead, so a server flooding notifications costs
/// a line per window, not the disk.
const LOG_MESSAGES_PER_WINDOW: u32 = 20;
const LOG_WINDOW: Duration = Duration::from_secs(10);

#[derive(Default)]
pub(crate) struct LogBudget {
    state: Mutex<BudgetState>,
}

#[derive(Default)]
struct BudgetState {
    window_start: Option<Instant>,
    written: u32,
    dropped: u64,
}

impl LogBudget {
    /// Whether a message arriving `now` may be written; the count of those
    /// dropped in the window that just ended, when there were any.
    fn admit(&self, now: Instant) -> (bool, u64) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut ended = 0;
        if s.window_start
            .is_none_or(|start| now.duration_since(start) >= LOG_WINDOW)
        {
            ended = std::mem::take(&mut s.dropped);
            s.window_start = Some(now);
            s.written = 0;
        }
        if s.written < LOG_MESSAGES_PER_WINDOW {
            s.written += 1;
            (true, ended)
        } else {
            s.dropped += 1;
            (false, ended)
        }
    }

    fn take_dropped(&self) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut s.dropped)
    }
}

fn report_dropped(server: &str, dropped: u64) {
    if dropped > 0 {
        tracing::warn!(
            %server,
            "MCP server sent {dropped} more log messages than cairn writes \
             ({LOG_MESSAGES_PER_WINDOW} per {} s); they were dropped",
            LOG_WINDOW.as_secs()
        );
    }
}

impl Drop for CairnClient {
    fn drop(&mut self) {
        // The last window's count, when this handler is the last holder.
        if Arc::strong_count(&self.log_budget) == 1 {
            report_dropped(&self.server, self.log_budget.take_dropped());
        }
    }
}

impl CairnClient {
    /// Another handler for the same server, for a second connection attempt.
    pub(crate) fn twin(&self) -> CairnClient {
        CairnClient {
            server: self.server.clone(),
            progress: self.progress.clone(),
            tools_changed: self.tools_changed.clone(),
            relisting: self.relisting.clone(),
            root: self.root.clone(),
            asker: self.asker.clone(),
            log_budget: self.log_budget.clone(),
        }
    }
}

impl ClientHandler for CairnClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.dispatch(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP tool list changed");
        self.relisting.store(true, Ordering::SeqCst);
        let _ = self.tools_changed.send(());
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let server = &self.server;
        let (admitted, dropped) = self.log_budget.admit(Instant::now());
        report_dropped(server, dropped);
        if !admitted {
            return;
        }
        let data = crate::text::truncate_chars(&params.data.to_string(), 2_000);
        match params.level {
            LoggingLevel::Debug => tracing::debug!(%server, "MCP log: {data}"),
            LoggingLevel::Info | LoggingLevel::Notice => tracing::info!(%server, "MCP log: {data}"),
            LoggingLevel::Warning => tracing::warn!(%server, "MCP log: {data}"),
            _ => tracing::error!(%server, "MCP log: {data}"),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(super::elicit::answer(&self.server, &self.asker, request).await)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .root
            .as_ref()
            .and_then(|path| {
                let uri = reqwest::Url::from_file_path(path).ok()?;
                let name = path.file_name()?.to_string_lossy().into_owned();
                Some(Root::new(uri.to_string()).with_name(name))
            })
            .into_iter()
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    fn get_info(&self) -> ClientConfig {
        // Roots only when there is a workspace to offer.
        // Forms and URL requests are offered always: with nobody to ask
        // (`cairn run`) they are declined.
        let mut capabilities = serde_json::json!({"elicitation": {"form": {}, "url": {}}});
        if self.root.is_some() {
            capabilities["roots"] = serde_json::json!({"listChanged": false});
        }
        let capabilities: ClientCapabilities =
            serde_json::from_value(capabilities).unwrap_or_default();
        ClientConfig::new(
            capabilities,
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_to_the_budget_and_counted() {
        let budget = LogBudget::default();
        let start = Instant::now();
        let admitted = (0..1000).filter(|_| budget.admit(start).0).count();
        assert_eq!(admitted, LOG_MESSAGES_PER_WINDOW as usize);
        // The next window admits again and hands over the count.
        let (ok, dropped) = budget.admit(start + LOG_WINDOW);
        assert!(ok);
        assert_eq!(dropped, 1000 - u64::from(LOG_MESSAGES_PER_WINDOW));
        assert_eq!(budget.take_dropped(), 0);
    }
}
