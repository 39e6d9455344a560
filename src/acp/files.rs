//! The editor's files for cairn's file tools: when the client announces
//! `fs.readTextFile`, `view`, `edit`, `multiedit` and `write` read through
//! `fs/read_text_file`, so unsaved buffers are seen. This is only the
//! transport: the tools check every path first and watch it while the
//! editor reads (`crate::tools::files`). cairn never writes through
//! `fs/write_text_file`: the editor opens the name itself, where a link a
//! contained command swapped in would lead it anywhere; edits go to the
//! disk, beneath the workspace, and the editor reloads them.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, v1};

use crate::tools::files::FileAccess;

/// How long a tool waits for the editor to answer a read or a write.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct EditorFiles {
    cx: v1::ConnectionTo<Client>,
    session: acp::SessionId,
    runtime: tokio::runtime::Handle,
}

impl EditorFiles {
    /// The editor's files for `session`, when it offers reading them.
    pub fn offered(
        caps: &acp::ClientCapabilities,
        cx: v1::ConnectionTo<Client>,
        session: &str,
    ) -> Option<EditorFiles> {
        if !caps.fs.read_text_file {
            return None;
        }
        Some(EditorFiles {
            cx,
            session: acp::SessionId::new(session.to_string()),
            runtime: tokio::runtime::Handle::try_current().ok()?,
        })
    }

    /// Sends `request` and waits (this thread only) for the answer.
    fn ask<R>(&self, request: R) -> Result<R::Response, String>
    where
        R: agent_client_protocol::JsonRpcRequest + Send + 'static,
        R::Response: Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        let sent = self.cx.send_request(request);
        let cancel = sent.cancellation_handle();
        self.runtime.spawn(async move {
            let _ = tx.send(sent.block_task().await);
        });
        match rx.recv_timeout(PATIENCE) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(e.message.clone()),
            Err(_) => {
                // Not left open for a late answer nobody waits for.
                let _ = cancel.cancel();
                Err(format!(
                    "the editor did not answer within {} seconds",
                    PATIENCE.as_secs()
                ))
            }
        }
    }
}

impl FileAccess for EditorFiles {
    fn read_text(&self, path: &Path) -> Result<String, String> {
        let req = acp::ReadTextFileRequest::new(self.session.clone(), path.to_path_buf());
        self.ask(req).map(|r| r.content)
    }
}
