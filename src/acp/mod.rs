//! `cairn acp`: cairn as an Agent Client Protocol agent on standard input
//! and output, for editors (Zed, JetBrains, Neovim clients) — a front end
//! beside `src/tui/` and `cairn run`, speaking only `crate::protocol` to
//! the agent and the sessions service for stored sessions.
//!
//! - `server.rs` answers the editor's requests (initialize, authenticate,
//!   session/new, session/load, session/list, session/prompt,
//!   session/cancel, session/set_mode);
//! - `session.rs` runs one ordinary cairn session per ACP session and
//!   forwards its events;
//! - `mcp.rs` adds the MCP servers the editor passes to the session's;
//! - `files.rs` carries the file tools' reads and writes to the editor's
//!   buffers when it offers them;
//! - `updates.rs` turns agent events into `session/update`s, `replay.rs`
//!   a stored session into the same, `permission.rs` the gate's dialog
//!   into `session/request_permission` (`questions.rs`: a plan to approve,
//!   an MCP server's choice), `prompt.rs` content blocks into a prompt;
//! - `commands.rs` lists what a prompt may name (`/compact`, a custom
//!   command, a skill), `builtins.rs` runs cairn's own commands there.
//!
//! Every tool call still passes cairn's gate (the editor answers its
//! questions) and runs in cairn's sandbox. Nothing but JSON-RPC goes to
//! standard output; logs go to cairn's log file.

mod builtins;
mod commands;
mod files;
mod mcp;
mod permission;
mod prompt;
mod questions;
mod replay;
mod server;
mod session;
mod terminals;
mod updates;

use std::sync::Arc;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, Stdio};

use crate::cli::startup::Overrides;
use server::Server;

/// Serves one editor on stdio until it closes the connection; the exit code.
pub async fn serve(mut overrides: Overrides) -> u8 {
    if overrides.trust_project {
        // The editor names the folders: trusting each one unseen would run
        // any cloned repository's hooks, servers and agents.
        eprintln!(
            "cairn acp: --trust-project is ignored here; trust a project by starting `cairn` in it once"
        );
        overrides.trust_project = false;
    }
    let server = Arc::new(Server::new(overrides));
    let result = connection(server.clone()).await;
    server.shutdown().await;
    match result {
        Ok(()) => 0,
        // The editor closed its end while cairn still had a last word for
        // it: the connection is over, as when it closes first.
        Err(e) if editor_went_away(&e) => 0,
        Err(e) => {
            tracing::error!("acp: the connection failed: {e}");
            eprintln!("cairn acp: {e}");
            1
        }
    }
}

/// Whether `e` is a write to an editor that has closed the connection
/// (the protocol crate keeps the I/O error only as text).
fn editor_went_away(e: &agent_client_protocol::Error) -> bool {
    let pipe = std::io::Error::from_raw_os_error(libc::EPIPE).to_string();
    e.data
        .as_ref()
        .is_some_and(|d| d.as_str() == Some(pipe.as_str()))
}

async fn connection(server: Arc<Server>) -> Result<(), agent_client_protocol::Error> {
    let (s1, s2, s3, s4, s5, s6, s7, s8) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server,
    );
    Agent
        .v1()
        .name("cairn")
        .on_receive_request(
            async move |req: acp::InitializeRequest, responder, _cx| {
                responder.respond(s1.initialize(req).await)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::AuthenticateRequest, responder, _cx| {
                responder.respond_with_result(s2.authenticate(req).await)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::NewSessionRequest, responder, cx| {
                let server = s3.clone();
                let c = cx.clone();
                cx.spawn(async move {
                    match server.new_session(req, c.clone()).await {
                        Ok((response, after)) => {
                            let id = response.session_id.clone();
                            responder.respond(response)?;
                            notify(&c, &id, after)
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::LoadSessionRequest, responder, cx| {
                let server = s4.clone();
                let c = cx.clone();
                cx.spawn(async move {
                    let id = req.session_id.clone();
                    match server.load_session(req, c.clone()).await {
                        Ok((response, replayed)) => {
                            notify(&c, &id, replayed)?;
                            responder.respond(response)
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::PromptRequest, responder, _cx| s5.prompt(req, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::SetSessionModeRequest, responder, _cx| {
                responder.respond_with_result(s6.set_mode(req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::ListSessionsRequest, responder, cx| {
                let server = s7.clone();
                cx.spawn(async move { responder.respond_with_result(server.list(req).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: acp::CancelNotification, _cx| {
                s8.cancel(n);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
}

fn notify(
    cx: &session::Connection,
    id: &acp::SessionId,
    updates: Vec<acp::SessionUpdate>,
) -> Result<(), agent_client_protocol::Error> {
    for u in updates {
        cx.send_notification(acp::SessionNotification::new(id.clone(), u))?;
    }
    Ok(())
}
