//! What the manager tells whoever watches it: a tick on every change, and
//! notices when a server fails to start, stops, or comes back.

use tokio::sync::watch;

use super::ServerState;
use crate::tools::SourceNotice;
use crate::tools::state::lock;

/// The manager's outbox. Notices are kept, so a watcher that subscribes
/// late still sees a server that failed at once.
pub(crate) struct Hub {
    pub(crate) changes: watch::Sender<u64>,
    notices: std::sync::Mutex<Vec<SourceNotice>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            changes: watch::channel(0).0,
            notices: Default::default(),
        }
    }
}

impl Hub {
    pub(crate) fn tick(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    pub(crate) fn publish(&self, notice: SourceNotice) {
        lock(&self.notices).push(notice);
    }

    /// Notices from index `from` on.
    pub(crate) fn since(&self, from: usize) -> Vec<SourceNotice> {
        lock(&self.notices).iter().skip(from).cloned().collect()
    }
}

/// The notice for a server moving from `before` to `after`, if it is news:
/// a failure to start, a stop after running, or a return after a failure.
pub(crate) fn transition_notice(
    server: &str,
    before: &ServerState,
    after: &ServerState,
    failed_before: bool,
) -> Option<SourceNotice> {
    let restart = format!("restart it with /mcp restart {server} once fixed");
    let (problem, text) = match (before, after) {
        (ServerState::Starting, ServerState::Failed { reason }) => (
            true,
            format!(
                "MCP server `{server}` could not start: {reason}. Its tools are unavailable; {restart}."
            ),
        ),
        (ServerState::Connected { .. }, ServerState::Failed { reason }) => (
            true,
            format!(
                "MCP server `{server}` stopped: {reason}. Its tools are unavailable; {restart}."
            ),
        ),
        (before, ServerState::NeedsLogin { .. })
            if !matches!(before, ServerState::NeedsLogin { .. }) =>
        {
            (
                true,
                format!(
                    "MCP server `{server}` needs a login: run `cairn mcp login {server}` in a shell, \
                 then /mcp restart {server}. Its tools are unavailable until then."
                ),
            )
        }
        (ServerState::Starting, ServerState::Connected { tools }) if failed_before => (
            false,
            format!(
                "MCP server `{server}` is back, with {tools} tool{}.",
                if *tools == 1 { "" } else { "s" }
            ),
        ),
        _ => return None,
    };
    Some(SourceNotice { problem, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_news_makes_a_notice() {
        let failed = ServerState::Failed {
            reason: "exit 3".into(),
        };
        let up = ServerState::Connected { tools: 1 };
        let n = transition_notice("gh", &ServerState::Starting, &failed, false).unwrap();
        assert!(n.problem && n.text.contains("`gh` could not start: exit 3"));
        let n = transition_notice("gh", &up, &failed, false).unwrap();
        assert!(n.problem && n.text.contains("`gh` stopped"));
        let n = transition_notice("gh", &ServerState::Starting, &up, true).unwrap();
        assert_eq!(n.text, "MCP server `gh` is back, with 1 tool.");
        assert!(transition_notice("gh", &ServerState::Starting, &up, false).is_none());
        assert!(transition_notice("gh", &up, &up, true).is_none());
        let login = ServerState::NeedsLogin {
            reason: "needs login".into(),
        };
        let n = transition_notice("gh", &ServerState::Starting, &login, false).unwrap();
        assert!(
            n.problem && n.text.contains("run `cairn mcp login gh`"),
            "{}",
            n.text
        );
    }
}
