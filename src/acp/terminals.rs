//! The editor's terminals for `bash`: when the client announces
//! `terminal: true` (and `[acp] editor_terminals` is not `false`), a
//! foreground command is started with `terminal/create` — as cairn's own
//! launcher, which rebuilds the call's sandbox (`tools::shell::launch`) —
//! and shown in its tool call (`ToolCallContent::Terminal`). cairn waits
//! with `terminal/wait_for_exit`, reads `terminal/output` for the model,
//! ends it with `terminal/kill` on cancel or timeout, and
//! `terminal/release`s it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, v1};
use async_trait::async_trait;

pub use super::updates::Shown;
use super::updates::{text, update};
use crate::tools::terminals::Terminals;

/// The most output the editor keeps for cairn to read (its tail).
pub const OUTPUT_LIMIT: u64 = 1 << 20;

pub struct EditorTerminals {
    cx: v1::ConnectionTo<Client>,
    session: acp::SessionId,
    shown: Shown,
    /// The person was told a command ran inside cairn instead.
    told: AtomicBool,
}

impl EditorTerminals {
    /// The editor's terminals for `session`, when it offers them and the
    /// person has not turned them off.
    pub fn offered(
        caps: &acp::ClientCapabilities,
        wanted: bool,
        cx: v1::ConnectionTo<Client>,
        session: &str,
        shown: Shown,
    ) -> Option<EditorTerminals> {
        // Named now, before any command runs.
        crate::tools::shell::launch::own_exe();
        (caps.terminal && wanted).then(|| EditorTerminals {
            cx,
            session: acp::SessionId::new(session.to_string()),
            shown,
            told: AtomicBool::new(false),
        })
    }

    async fn ask<R>(&self, request: R) -> Result<R::Response, String>
    where
        R: agent_client_protocol::JsonRpcRequest + Send + 'static,
        R::Response: Send + 'static,
    {
        self.cx
            .send_request(request)
            .block_task()
            .await
            .map_err(|e| e.message.clone())
    }

    fn id(&self, id: &str) -> acp::TerminalId {
        acp::TerminalId::new(id.to_string())
    }

    fn notify(&self, u: acp::SessionUpdate) {
        let n = acp::SessionNotification::new(self.session.clone(), u);
        let _ = self.cx.send_notification(n);
    }
}

fn lock(shown: &Shown) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
    shown.lock().unwrap_or_else(|e| e.into_inner())
}

/// An exit status as a shell reports it: the code, or 128 + the signal.
fn code_of(status: &acp::TerminalExitStatus) -> i32 {
    if let Some(code) = status.exit_code {
        return i32::try_from(code).unwrap_or(255);
    }
    let signal = status.signal.as_deref().unwrap_or("");
    let n = match signal.trim_start_matches("SIG") {
        "HUP" => 1,
        "INT" => 2,
        "KILL" => 9,
        "TERM" => 15,
        other => other.parse().unwrap_or(0),
    };
    128 + n
}

#[async_trait]
impl Terminals for EditorTerminals {
    async fn create(
        &self,
        call_id: &str,
        program: &Path,
        args: Vec<String>,
        cwd: &Path,
    ) -> Result<String, String> {
        let req =
            acp::CreateTerminalRequest::new(self.session.clone(), program.display().to_string())
                .args(args)
                .cwd(cwd.to_path_buf())
                .output_byte_limit(OUTPUT_LIMIT);
        let id = self.ask(req).await?.terminal_id.0.to_string();
        lock(&self.shown).insert(call_id.to_string(), id.clone());
        let content = vec![acp::ToolCallContent::Terminal(acp::Terminal::new(
            self.id(&id),
        ))];
        self.notify(update(
            call_id,
            acp::ToolCallUpdateFields::new().content(content),
        ));
        Ok(id)
    }

    async fn wait_for_exit(&self, id: &str) -> Result<i32, String> {
        let req = acp::WaitForTerminalExitRequest::new(self.session.clone(), self.id(id));
        Ok(code_of(&self.ask(req).await?.exit_status))
    }

    async fn output(&self, id: &str) -> Result<String, String> {
        let req = acp::TerminalOutputRequest::new(self.session.clone(), self.id(id));
        let answer = self.ask(req).await?;
        Ok(if answer.truncated {
            format!("[the start of the output was cut]\n{}", answer.output)
        } else {
            answer.output
        })
    }

    async fn kill(&self, id: &str) -> Result<(), String> {
        let req = acp::KillTerminalRequest::new(self.session.clone(), self.id(id));
        self.ask(req).await.map(|_| ())
    }

    async fn release(&self, id: &str) {
        let req = acp::ReleaseTerminalRequest::new(self.session.clone(), self.id(id));
        let _ = self.ask(req).await;
    }

    fn fell_back(&self, why: &str) {
        tracing::warn!("a command ran inside cairn instead of the editor's terminal: {why}");
        if self.told.swap(true, Ordering::SeqCst) {
            return;
        }
        self.notify(acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(text(
            format!("\n\n_note: {why}; commands run inside cairn (still sandboxed) and their output shows in the tool call._\n\n"),
        ))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_reads_as_a_shell_would_say_it() {
        let code = |c: Option<u32>, s: Option<&str>| {
            code_of(
                &acp::TerminalExitStatus::new()
                    .exit_code(c)
                    .signal(s.map(String::from)),
            )
        };
        assert_eq!(code(Some(3), None), 3);
        assert_eq!(code(None, Some("SIGKILL")), 137);
        assert_eq!(code(None, Some("TERM")), 143);
        assert_eq!(code(None, Some("6")), 134);
        assert_eq!(code(Some(u32::MAX), None), 255);
    }
}
