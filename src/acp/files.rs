//! The editor's files for cairn's file tools: when the client announces
//! `fs.readTextFile` / `fs.writeTextFile`, `view`, `edit`, `multiedit` and
//! `write` read and write through `fs/read_text_file` and
//! `fs/write_text_file`, so unsaved buffers are seen and edits land in
//! them. This is only the transport: the tools check every path first
//! (`crate::tools::files`) and the gate still asks before any write.

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
    read: bool,
    write: bool,
    runtime: tokio::runtime::Handle,
}

impl EditorFiles {
    /// The editor's files for `session`, when it offers reading or writing.
    pub fn offered(
        caps: &acp::ClientCapabilities,
        cx: v1::ConnectionTo<Client>,
        session: &str,
    ) -> Option<EditorFiles> {
        let (read, write) = (caps.fs.read_text_file, caps.fs.write_text_file);
        if !read && !write {
            return None;
        }
        Some(EditorFiles {
            cx,
            session: acp::SessionId::new(session.to_string()),
            read,
            write,
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
        self.runtime.spawn(async move {
            let _ = tx.send(sent.block_task().await);
        });
        match rx.recv_timeout(PATIENCE) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(e.message.clone()),
            Err(_) => Err(format!(
                "the editor did not answer within {} seconds",
                PATIENCE.as_secs()
            )),
        }
    }
}

impl FileAccess for EditorFiles {
    fn reads(&self) -> bool {
        self.read
    }

    fn writes(&self) -> bool {
        self.write
    }

    fn read_text(&self, path: &Path) -> Result<String, String> {
        let req = acp::ReadTextFileRequest::new(self.session.clone(), path.to_path_buf());
        self.ask(req).map(|r| r.content)
    }

    fn write_text(&self, path: &Path, text: &str) -> Result<(), String> {
        let req = acp::WriteTextFileRequest::new(self.session.clone(), path.to_path_buf(), text);
        self.ask(req).map(|_| ())
    }
}
