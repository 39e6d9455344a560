//! The answers to an editor's requests: what cairn can do, sessions new
//! and stored, prompts, cancel, modes and the session list. Each session
//! is an ordinary cairn session (`session.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode, v1};

use super::session::{self, Connection, Origin, Session, internal, invalid};
use super::{prompt, replay, updates};
use crate::cli::startup::{self, Overrides, Startup};
use crate::config::Mode;
use crate::protocol::AgentCommand;
use crate::store::SessionId;

/// Rows one `session/list` page holds.
const PAGE: usize = 50;
/// The id of the one way to authenticate: a provider set up for cairn.
const AUTH_SETUP: &str = "cairn-provider";

pub struct Server {
    overrides: Overrides,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// What the editor said it can do (its files, its terminals).
    client: Mutex<acp::ClientCapabilities>,
}

impl Server {
    pub fn new(overrides: Overrides) -> Server {
        Server {
            overrides,
            sessions: Mutex::new(HashMap::new()),
            client: Mutex::new(acp::ClientCapabilities::default()),
        }
    }

    fn session(&self, id: &acp::SessionId) -> Result<Arc<Session>, Error> {
        lock(&self.sessions)
            .get(id.0.as_ref())
            .cloned()
            .ok_or_else(|| {
                invalid(format!(
                    "no session {} here; create one with session/new or open it with session/load",
                    id.0
                ))
            })
    }

    pub async fn initialize(&self, req: acp::InitializeRequest) -> acp::InitializeResponse {
        *lock(&self.client) = req.client_capabilities.clone();
        let version = if req.protocol_version < ProtocolVersion::V1 {
            req.protocol_version
        } else {
            ProtocolVersion::V1
        };
        let capabilities = acp::AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                acp::PromptCapabilities::new()
                    .image(true)
                    .embedded_context(true),
            )
            .session_capabilities(
                acp::SessionCapabilities::new().list(acp::SessionListCapabilities::new()),
            )
            .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(true));
        let mut response = acp::InitializeResponse::new(version)
            .agent_capabilities(capabilities)
            .agent_info(
                acp::Implementation::new("cairn", env!("CARGO_PKG_VERSION"))
                    .title("cairn".to_string()),
            );
        if !self.has_provider().await {
            response = response.auth_methods(vec![auth_method()]);
        }
        response
    }

    /// Whether a model provider is set up for the current directory.
    async fn has_provider(&self) -> bool {
        match std::env::current_dir() {
            Ok(cwd) => startup::prepare_at(&self.overrides, cwd)
                .await
                .is_ok_and(|s| s.provider.is_some()),
            Err(_) => false,
        }
    }

    /// cairn has no sign-in of its own: "authenticated" means a provider
    /// is configured (a key in the environment, the config, a local server).
    pub async fn authenticate(
        &self,
        req: acp::AuthenticateRequest,
    ) -> Result<acp::AuthenticateResponse, Error> {
        if req.method_id.0.as_ref() != AUTH_SETUP {
            return Err(invalid(format!(
                "unknown auth method `{}`; cairn offers `{AUTH_SETUP}`",
                req.method_id.0
            )));
        }
        if self.has_provider().await {
            Ok(acp::AuthenticateResponse::new())
        } else {
            Err(Error::new(ErrorCode::AUTH_REQUIRED, startup::setup_help()))
        }
    }

    pub async fn new_session(
        &self,
        req: acp::NewSessionRequest,
        cx: Connection,
    ) -> Result<(acp::NewSessionResponse, Vec<acp::SessionUpdate>), Error> {
        let mut s = session::prepare(&self.overrides, req.cwd.clone()).await?;
        editor_servers(&mut s, &req.mcp_servers);
        let caps = lock(&self.client).clone();
        let session = session::start(&s, &Origin::New, cx, &caps)?;
        let response =
            acp::NewSessionResponse::new(session.id.clone()).modes(updates::modes(session.mode));
        lock(&self.sessions).insert(session.id.clone(), session);
        Ok((response, vec![commands(&s)]))
    }

    /// Opens a stored session: the updates tell its conversation again
    /// before the answer, as the protocol asks.
    pub async fn load_session(
        &self,
        req: acp::LoadSessionRequest,
        cx: Connection,
    ) -> Result<(acp::LoadSessionResponse, Vec<acp::SessionUpdate>), Error> {
        let mut s = session::prepare(&self.overrides, req.cwd.clone()).await?;
        editor_servers(&mut s, &req.mcp_servers);
        let wanted = req.session_id.0.to_string();
        let open = lock(&self.sessions).remove(&wanted);
        if let Some(open) = open {
            open.close().await;
        }
        let loaded = load_stored(&wanted).await?;
        let mut replayed = replay::updates(&loaded, &s.cwd);
        let caps = lock(&self.client).clone();
        let session = session::start(&s, &Origin::Stored(Box::new(loaded)), cx, &caps)?;
        let response = acp::LoadSessionResponse::new().modes(updates::modes(session.mode));
        lock(&self.sessions).insert(session.id.clone(), session);
        replayed.push(commands(&s));
        Ok((response, replayed))
    }

    pub fn prompt(
        &self,
        req: acp::PromptRequest,
        responder: v1::Responder<acp::PromptResponse>,
    ) -> Result<(), Error> {
        let session = match self.session(&req.session_id) {
            Ok(s) => s,
            Err(e) => return responder.respond_with_error(e),
        };
        match prompt::read(&req.prompt, &session.cwd) {
            Ok(p) => session.prompt(p.text, p.images, responder),
            Err(why) => responder.respond_with_error(invalid(why)),
        }
    }

    pub fn cancel(&self, n: acp::CancelNotification) {
        if let Ok(session) = self.session(&n.session_id) {
            session.cancel();
        }
    }

    pub fn set_mode(
        &self,
        req: acp::SetSessionModeRequest,
    ) -> Result<acp::SetSessionModeResponse, Error> {
        let session = self.session(&req.session_id)?;
        let Some(mode) = Mode::parse(&req.mode_id.0) else {
            let ids: Vec<&str> = Mode::ALL.iter().map(|m| m.as_str()).collect();
            return Err(invalid(format!(
                "no mode `{}`; cairn's modes are {}",
                req.mode_id.0,
                ids.join(", ")
            )));
        };
        session.send(AgentCommand::SetMode(mode));
        Ok(acp::SetSessionModeResponse::new())
    }

    pub async fn list(
        &self,
        req: acp::ListSessionsRequest,
    ) -> Result<acp::ListSessionsResponse, Error> {
        let offset = match req.cursor.as_deref() {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| invalid(format!("`{c}` is not a cursor cairn gave out")))?,
        };
        let root = req.cwd.as_deref().map(crate::paths::project_root);
        let rows = tokio::task::spawn_blocking(move || {
            let store = startup::open_store().map_err(|e| format!("{e:#}"))?;
            crate::sessions::list(&store, root.as_deref(), PAGE, offset).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(internal)?;
        let more = rows.len() == PAGE;
        let sessions = rows
            .into_iter()
            .map(|r| {
                let title = r.title.clone().or(r.first_prompt.clone());
                let updated =
                    chrono::DateTime::from_timestamp_millis(r.updated_at).map(|t| t.to_rfc3339());
                acp::SessionInfo::new(r.id.0, r.cwd)
                    .title(title)
                    .updated_at(updated)
            })
            .collect();
        Ok(acp::ListSessionsResponse::new(sessions)
            .next_cursor(more.then(|| (offset + PAGE).to_string())))
    }

    /// Closes every session (the editor went away).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for s in all {
            s.close().await;
        }
    }
}

fn auth_method() -> acp::AuthMethod {
    acp::AuthMethod::Agent(
        acp::AuthMethodAgent::new(AUTH_SETUP, "Set up a model provider")
            .description(startup::setup_help()),
    )
}

/// A stored session, unless another cairn is writing it.
async fn load_stored(id: &str) -> Result<crate::protocol::LoadedSession, Error> {
    let id = id.to_string();
    tokio::task::spawn_blocking(move || {
        let store = startup::open_store()
            .map_err(|e| internal(format!("the session store cannot be opened: {e:#}")))?;
        let id: SessionId = store
            .resolve_id(&id)
            .map_err(|e| invalid(format!("no stored session {id}: {e}")))?;
        // Our own session closing may hold its lock a moment longer.
        for _ in 0..20 {
            match crate::sessions::holder(&store, &id) {
                None => break,
                Some(held) if held.pid == Some(std::process::id()) => {
                    std::thread::sleep(std::time::Duration::from_millis(100))
                }
                Some(held) => {
                    return Err(invalid(format!(
                        "session {id}: {held}; close it there first, or fork it with `cairn --resume {id}`"
                    )));
                }
            }
        }
        crate::sessions::load(&store, &id).map_err(|e| internal(format!("cannot load session {id}: {e}")))
    })
    .await
    .map_err(|e| internal(e.to_string()))?
}

/// The editor's MCP servers join the session's (`super::mcp`).
fn editor_servers(s: &mut Startup, given: &[acp::McpServer]) {
    for note in super::mcp::add(&mut s.config.file.mcp, given, &s.root) {
        tracing::info!("acp: {note}");
    }
}

/// The custom commands and skills a prompt may name (`/name args`).
fn commands(s: &Startup) -> acp::SessionUpdate {
    super::commands::at(&startup::command_roots(s), &s.cwd)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
