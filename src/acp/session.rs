//! One ACP session: an ordinary cairn agent (its own gate, sandbox, MCP
//! servers and store writer, recording under the session's id, so the
//! session is listed, searchable and resumable like any other) and the
//! task that tells the editor what it does.
//!
//! The task reads the agent's events in order and sends each as
//! `session/update`s; a permission request becomes
//! `session/request_permission` (asked on a task of its own, so updates
//! keep flowing), and the turn's end answers the waiting `session/prompt`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, Error, ErrorCode, v1};
use tokio::sync::mpsc;

use super::builtins::{self, Builtin};
use super::{permission, questions, updates::Translator};
use crate::cli::startup::{self, Closer, Overrides, Startup};
use crate::protocol::{
    AgentCommand, AgentEvent, LoadedSession, PermissionRequest, StoredSettings, TurnOutcome,
};
use crate::store::SessionId;
use crate::tools::input::{InputAnswer, InputRequest};

pub type Connection = v1::ConnectionTo<Client>;

/// How long closing a session waits for its turn to wind down.
const CLOSE_PATIENCE: Duration = Duration::from_secs(10);

pub struct Session {
    pub id: String,
    pub cwd: PathBuf,
    pub mode: crate::config::Mode,
    commands: mpsc::UnboundedSender<AgentCommand>,
    /// The `session/prompt` the running turn answers.
    prompt: Mutex<Option<v1::Responder<acp::PromptResponse>>>,
    /// The built-in command the waiting prompt runs, when it runs one.
    running: Mutex<Option<Running>>,
    next_mark: AtomicU64,
    cx: Connection,
    /// What ends the session's agent and servers (`close`).
    closer: Mutex<Option<Closer>>,
}

/// A built-in command in flight: the prompt ends at the agent's
/// `Marked(mark)`, unless an undo's question is still open.
#[derive(Debug, Default)]
struct Running {
    mark: u64,
    asking: bool,
    cancelled: bool,
}

/// What a session starts from: a new stored session, or a stored one.
pub enum Origin {
    New,
    Stored(Box<LoadedSession>),
}

/// Reads the configuration for `cwd`; an error says what to fix.
pub async fn prepare(overrides: &Overrides, cwd: PathBuf) -> Result<Startup, Error> {
    if !cwd.is_absolute() {
        return Err(invalid(format!(
            "cwd must be an absolute path, not {}",
            cwd.display()
        )));
    }
    if !cwd.is_dir() {
        return Err(invalid(format!("cwd {} is not a directory", cwd.display())));
    }
    // A workspace is writable by commands: never the whole home or disk.
    let home = crate::paths::home_dir().and_then(|h| h.canonicalize().ok());
    let real = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
    if real.parent().is_none() || home.as_ref() == Some(&real) {
        return Err(invalid(format!(
            "cwd {} is the home folder or the root; open a project folder",
            cwd.display()
        )));
    }
    // Before anything of the session starts (its MCP servers, hooks, the
    // sandbox itself): programs cairn runs as the person are no longer
    // found in this workspace's folders.
    crate::sandbox::own_path::workspace_opened(&cwd);
    startup::prepare_at(overrides, cwd)
        .await
        .map_err(|e| internal(format!("{e:#}")))
}

/// Bad parameters, said in cairn's words (the JSON-RPC message itself).
pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

pub fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

/// Starts the agent for `origin` and the task that forwards its events.
pub fn start(
    s: &Startup,
    origin: &Origin,
    cx: Connection,
    caps: &acp::ClientCapabilities,
) -> Result<Arc<Session>, Error> {
    let Some(provider) = s.provider.clone() else {
        return Err(Error::new(ErrorCode::AUTH_REQUIRED, startup::setup_help()));
    };
    let id = match origin {
        Origin::Stored(loaded) => loaded.id().clone(),
        Origin::New => create(s, &provider)?,
    };
    // The editor's buffers, when it offers them, for the file tools.
    let files = super::files::EditorFiles::offered(caps, cx.clone(), id.as_str())
        .map(|f| Arc::new(f) as Arc<dyn crate::tools::files::FileAccess>);
    // The editor's terminals for commands, when it offers them.
    let shown = super::terminals::Shown::default();
    let wanted = s.config.file.acp.editor_terminals();
    let terminals = super::terminals::EditorTerminals::offered(
        caps,
        wanted,
        cx.clone(),
        id.as_str(),
        shown.clone(),
    )
    .map(|t| Arc::new(t) as Arc<dyn crate::tools::terminals::Terminals>);
    let (commands, events, closer) =
        startup::start_agent_with(s, &provider, true, files, terminals)
            .map_err(|e| internal(format!("{e:#}")))?
            .into_parts();
    let load = match origin {
        Origin::Stored(loaded) => AgentCommand::load(loaded),
        Origin::New => AgentCommand::LoadHistory {
            messages: vec![],
            versions: vec![],
            session_id: Some(id.clone()),
            cost: None,
            lost: vec![],
            read_only: false,
            compacted: None,
            note: None,
            settings: None,
        },
    };
    let _ = commands.send(load);
    let session = Arc::new(Session {
        id: id.as_str().to_string(),
        cwd: s.cwd.clone(),
        mode: match origin {
            // The agent goes on in the stored session's mode (`restore_settings`).
            Origin::Stored(loaded) => {
                StoredSettings::of(loaded).resumed_mode(s.mode, s.mode_pinned)
            }
            Origin::New => s.mode,
        },
        closer: Mutex::new(Some(closer)),
        commands,
        prompt: Mutex::new(None),
        running: Mutex::new(None),
        next_mark: AtomicU64::new(1),
        cx: cx.clone(),
    });
    let forwarder = Forwarder {
        session: session.clone(),
        cx,
        tr: Translator::new(s.cwd.clone()).with_terminals(shown),
        asking: Default::default(),
        roots: (crate::cli::startup::command_roots(s), s.cwd.clone()),
        offered: super::commands::at(&crate::cli::startup::command_roots(s), &s.cwd),
    };
    tokio::spawn(forwarder.run(events));
    Ok(session)
}

/// A new stored session, so the editor's id is cairn's from the start.
fn create(s: &Startup, provider: &crate::llm::ResolvedProvider) -> Result<SessionId, Error> {
    startup::new_stored_session(s, provider).map_err(|e| internal(format!("{e:#}")))
}

impl Session {
    pub fn send(&self, command: AgentCommand) {
        let _ = self.commands.send(command);
    }

    /// Sends a prompt that `responder` answers when its turn ends; refused
    /// while another prompt of this session runs.
    pub fn prompt(
        &self,
        text: String,
        images: Vec<crate::conversation::ImageData>,
        responder: v1::Responder<acp::PromptResponse>,
    ) -> Result<(), Error> {
        let mut slot = lock(&self.prompt);
        if slot.is_some() {
            let _ = responder.respond_with_error(Error::new(
                ErrorCode::INVALID_REQUEST,
                "a prompt is already running in this session; cancel it or wait for its answer",
            ));
            return Ok(());
        }
        *slot = Some(responder);
        drop(slot);
        let command = match builtins::parse(&text) {
            Some(Ok(command)) if images.is_empty() => Some(command),
            Some(Err(why)) => {
                self.say(format!("{why}\n"));
                self.finish(&TurnOutcome::Completed);
                return Ok(());
            }
            _ => None,
        };
        let sent = match command {
            Some(command) => self.run_builtin(command),
            None => self
                .commands
                .send(AgentCommand::Submit { text, images })
                .is_ok(),
        };
        if !sent && let Some(r) = lock(&self.prompt).take() {
            r.respond_with_error(internal("the agent of this session has stopped"))?;
        }
        Ok(())
    }

    /// Sends what `command` asks of the agent; the prompt ends when the
    /// agent has handled it all (its `Marked`), or with a turn of its own
    /// for `/plan GOAL`. False when the agent has stopped.
    fn run_builtin(&self, command: Builtin) -> bool {
        let send = |c| self.commands.send(c).is_ok();
        let asked = match command {
            Builtin::Plan(Some(goal)) => {
                return send(AgentCommand::SetMode(crate::config::Mode::Plan))
                    && send(AgentCommand::Submit {
                        text: goal,
                        images: Vec::new(),
                    });
            }
            Builtin::Effort(None) => {
                self.say(
                    builtins::effort_levels("The effort says how hard a reasoning model thinks")
                        + ".\n",
                );
                self.finish(&TurnOutcome::Completed);
                return true;
            }
            Builtin::Plan(None) => AgentCommand::SetMode(crate::config::Mode::Plan),
            Builtin::Compact(focus) => AgentCommand::Compact { focus },
            Builtin::Undo => AgentCommand::PrepareUndo,
            Builtin::Memory => AgentCommand::ShowMemory,
            Builtin::Lsp => AgentCommand::ShowLanguageServers,
            Builtin::LspRestart(name) => AgentCommand::RestartLanguageServer(name),
            Builtin::Effort(Some(effort)) => AgentCommand::SetEffort(effort),
            Builtin::Rename(title) => AgentCommand::SetTitle(title),
        };
        // What the agent says for the command is said from here on
        // (`runs_builtin`), before it can answer.
        *lock(&self.running) = Some(Running::default());
        send(asked) && self.mark()
    }

    /// Asks the agent for a `Marked` after what was sent; the running
    /// command ends there.
    fn mark(&self) -> bool {
        let mark = self.next_mark.fetch_add(1, Ordering::Relaxed);
        {
            let mut running = lock(&self.running);
            let r = running.get_or_insert_with(Running::default);
            r.mark = mark;
            r.asking = false;
        }
        self.commands.send(AgentCommand::Mark(mark)).is_ok()
    }

    /// Stops the turn or the command the prompt runs.
    pub fn cancel(&self) {
        if let Some(r) = lock(&self.running).as_mut() {
            r.cancelled = true;
        }
        self.send(AgentCommand::Cancel);
    }

    /// Message text for the editor, outside any turn's stream.
    fn say(&self, text: String) {
        let n = acp::SessionNotification::new(
            self.id.clone(),
            acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(super::updates::text(
                text,
            ))),
        );
        let _ = self.cx.send_notification(n);
    }

    /// Whether a built-in command runs (its answers are said as text).
    fn runs_builtin(&self) -> bool {
        lock(&self.running).is_some()
    }

    /// The agent reached `mark`: the command that waited for it is done.
    fn marked(&self, mark: u64) {
        let cancelled = {
            let mut running = lock(&self.running);
            match running.as_ref() {
                Some(r) if r.mark == mark && !r.asking => {
                    running.take().is_some_and(|r| r.cancelled)
                }
                _ => return,
            }
        };
        self.finish(&if cancelled {
            TurnOutcome::Cancelled
        } else {
            TurnOutcome::Completed
        });
    }

    /// Ends the turn, stops the agent and its servers, and waits for the
    /// store to take every write.
    pub async fn close(&self) {
        self.send(AgentCommand::Cancel);
        self.send(AgentCommand::Shutdown);
        let closer = lock(&self.closer).take();
        if let Some(closer) = closer {
            closer.close(CLOSE_PATIENCE).await;
        }
    }

    fn finish(&self, outcome: &TurnOutcome) {
        lock(&self.running).take();
        let Some(responder) = lock(&self.prompt).take() else {
            return;
        };
        let stop = match outcome {
            TurnOutcome::Completed => acp::StopReason::EndTurn,
            TurnOutcome::Cancelled => acp::StopReason::Cancelled,
            TurnOutcome::TurnLimit { .. } => acp::StopReason::MaxTurnRequests,
            TurnOutcome::Failed { error } => {
                let _ = responder.respond_with_error(internal(error.clone()));
                return;
            }
        };
        let _ = responder.respond(acp::PromptResponse::new(stop));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Forwarder {
    session: Arc<Session>,
    cx: Connection,
    tr: Translator,
    /// Questions the editor has open, by cairn's request id: a cancelled
    /// turn withdraws them (`$/cancel_request`), so no dialog lingers.
    asking: std::collections::HashMap<u64, agent_client_protocol::RequestCancellationHandle>,
    /// Where the commands and skills are read from, and the list the
    /// editor last heard: one added or edited during the session is
    /// offered again after the turn.
    roots: (crate::extensions::commands::Roots, PathBuf),
    offered: acp::SessionUpdate,
}

impl Forwarder {
    async fn run(mut self, mut events: mpsc::UnboundedReceiver<AgentEvent>) {
        while let Some(event) = events.recv().await {
            match &event {
                AgentEvent::PermissionRequested { id, request } => self.ask(*id, request),
                AgentEvent::PermissionResolved { id } => {
                    if let Some(open) = self.asking.remove(id) {
                        let _ = open.cancel();
                    }
                }
                AgentEvent::PlanProposed { id, plan } => self.ask_plan(*id, plan),
                AgentEvent::InputRequested { id, request } => self.ask_input(*id, request),
                AgentEvent::InputResolved { id } => {
                    if let Some(open) = self.asking.remove(id) {
                        let _ = open.cancel();
                    }
                }
                AgentEvent::Marked(mark) => self.session.marked(*mark),
                AgentEvent::UndoPlanned(plan) if self.session.runs_builtin() => self.ask_undo(plan),
                _ if self.session.runs_builtin() => {
                    if let Some(text) = builtins::said(&event) {
                        self.session.say(text);
                    }
                }
                _ => {}
            }
            for update in self.tr.updates(&event) {
                let n = acp::SessionNotification::new(self.session.id.clone(), update);
                if self.cx.send_notification(n).is_err() {
                    return;
                }
            }
            if let AgentEvent::TurnFinished { outcome, .. } = &event {
                let now = super::commands::at(&self.roots.0, &self.roots.1);
                if now != self.offered {
                    let n = acp::SessionNotification::new(self.session.id.clone(), now.clone());
                    let _ = self.cx.send_notification(n);
                    self.offered = now;
                }
                self.session.finish(outcome);
            }
        }
        // The agent stopped: a prompt still waiting gets an answer.
        self.session.finish(&TurnOutcome::Failed {
            error: "the agent of this session stopped".into(),
        });
    }

    /// Asks the editor on a task of its own; the answer goes to the gate.
    fn ask(&mut self, id: u64, request: &PermissionRequest) {
        let call = self
            .tr
            .call_for(&request.tool, &request.summary)
            .unwrap_or_else(|| format!("permission-{id}"));
        let shown = permission::tool_call(self.tr.cwd(), &call, request);
        let request = request.clone();
        self.put(id, shown, permission::options(&request), move |outcome| {
            let decision = permission::decision(&request, outcome);
            AgentCommand::PermissionReply { id, decision }
        });
    }

    /// `/undo`'s plan, asked as a question; the files are restored only
    /// when the editor allows it.
    fn ask_undo(&mut self, plan: &crate::tools::restore::UndoPlan) {
        if let Some(r) = lock(&self.session.running).as_mut() {
            r.asking = true;
        }
        let turn = plan.turn;
        let (call, options) = builtins::undo_question(plan);
        let call_id = call.tool_call_id.0.to_string();
        let announce = acp::SessionNotification::new(
            self.session.id.clone(),
            acp::SessionUpdate::ToolCall(call.clone()),
        );
        let _ = self.cx.send_notification(announce);
        let ask = acp::RequestPermissionRequest::new(self.session.id.clone(), call.into(), options);
        let session = self.session.clone();
        let cx = self.cx.clone();
        let sent = self.cx.send_request(ask);
        tokio::spawn(async move {
            let allowed = matches!(
                sent.block_task().await.map(|a| a.outcome),
                Ok(acp::RequestPermissionOutcome::Selected(s)) if s.option_id.0.as_ref() == builtins::UNDO_ALLOW
            );
            let status = if allowed {
                session.send(AgentCommand::ConfirmUndo { turn });
                acp::ToolCallStatus::Completed
            } else {
                session.say("Nothing was restored.\n".into());
                acp::ToolCallStatus::Failed
            };
            let done =
                super::updates::update(&call_id, acp::ToolCallUpdateFields::new().status(status));
            let _ = cx.send_notification(acp::SessionNotification::new(session.id.clone(), done));
            session.mark();
        });
    }

    /// A plan waiting for approval, asked on its `exit_plan_mode` call.
    fn ask_plan(&mut self, id: u64, plan: &str) {
        let call = self
            .tr
            .open_call_of("exit_plan_mode")
            .unwrap_or_else(|| format!("plan-{id}"));
        let (shown, options) = questions::plan(&call, plan);
        self.put(id, shown, options, move |outcome| {
            let decision = questions::plan_decision(outcome);
            AgentCommand::PermissionReply { id, decision }
        });
    }

    /// An MCP server's question: as options when its form is a choice,
    /// else declined at once (the editor is told), so nothing waits.
    fn ask_input(&mut self, id: u64, request: &InputRequest) {
        let Some((shown, options)) = questions::input(id, request) else {
            self.session.send(AgentCommand::InputReply {
                id,
                answer: InputAnswer::Decline,
            });
            let note = format!(
                "\n\n_{} asked for input this editor has no form for (\"{}\"); cairn declined it._\n\n",
                request.source, request.message
            );
            let n = acp::SessionNotification::new(
                self.session.id.clone(),
                acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(
                    super::updates::text(note),
                )),
            );
            let _ = self.cx.send_notification(n);
            return;
        };
        let request = request.clone();
        self.put(id, shown, options, move |outcome| {
            AgentCommand::InputReply {
                id,
                answer: questions::input_answer(&request, outcome),
            }
        });
    }

    /// Sends the question; `answer` turns the editor's pick (a failed
    /// request counts as withdrawn) into the command for the agent.
    fn put(
        &mut self,
        id: u64,
        call: acp::ToolCallUpdate,
        options: Vec<acp::PermissionOption>,
        answer: impl FnOnce(&acp::RequestPermissionOutcome) -> AgentCommand + Send + 'static,
    ) {
        let ask = acp::RequestPermissionRequest::new(self.session.id.clone(), call, options);
        let session = self.session.clone();
        let sent = self.cx.send_request(ask);
        self.asking.insert(id, sent.cancellation_handle());
        tokio::spawn(async move {
            let outcome = match sent.block_task().await {
                Ok(answer) => answer.outcome,
                Err(e) => {
                    tracing::warn!("acp: the question to the editor failed: {e}");
                    acp::RequestPermissionOutcome::Cancelled
                }
            };
            session.send(answer(&outcome));
        });
    }
}
