//! cairn's side of an MCP session: what it answers to a server's
//! notifications.

// Logging notifications are deprecated by the newest protocol revision, but
// servers speaking the older ones still send them and they belong in the log.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
        let data = params.data.to_string();
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
