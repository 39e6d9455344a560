//! The interactive loop: one task per running session. It talks to a front
//! end only through the types of `crate::protocol` ([`AgentCommand`] in,
//! [`AgentEvent`] out).
//!
//! - `turn` — one user turn: request, stream, tools, repeat; `turn_context`
//!   holds what its steps share (`TurnContext`, the calls as they stream).
//! - `calls` — a response's calls judged by the gate and run concurrently;
//!   `approval` asks the person, `running` runs one call, `rerun` offers a
//!   call the sandbox stopped again with what it needed.
//! - `stop`, `compaction` — a response cut short, and a conversation too
//!   long for the context window.
//! - `prompt`, `instructions`, `mentions`, `sources` — what the model reads:
//!   the system prompt, instruction files, `@path` attachments, tool sources.
//! - `title`, `side_model` — background requests to a (cheaper) model.
//! - `undo` — undo and rewind of the files a turn changed; `resume` — a
//!   stored session taken up again (from its latest compaction).
//! - `recording`, `store_sink/` — the session store writer, which records
//!   the events a front end also sees.

mod approval;
mod calls;
mod checks;
mod compaction;
mod custom;
mod effort;
mod fixed;
mod grants;
mod grounded;
mod hook_model;
mod hooks;
pub mod instructions;
mod limits;
mod memory;
mod mentions;
mod passthrough;
mod pictures;
mod plan;
pub mod prompt;
pub mod recording;
mod rerun;
mod result_bound;
mod resume;
mod running;
mod side_model;
mod small_window;
mod sources;
mod stop;
pub mod store_sink;
mod subagent;
pub mod title;
mod turn;
mod turn_context;
mod undo;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::context::Tracker;
use crate::conversation::{ImageData, Message, Part, Role};
use crate::llm::{ModelInfo, Provider, Usage};
use crate::permission::gate::Gate;
use crate::protocol::{AgentCommand, AgentEvent, Decision, NoticeLevel, TurnOutcome};
use crate::tools::state::lock;
use crate::tools::{Registry, SessionState, ToolSource};
pub use recording::SessionSink;
pub use subagent::Delegation;

/// Everything fixed for the life of the agent task.
#[derive(Clone)]
pub struct AgentOptions {
    /// The project root; paths outside it ask.
    pub workspace: PathBuf,
    pub cwd: PathBuf,
    pub provider_name: String,
    pub model: String,
    pub model_info: ModelInfo,
    pub max_turns: u32,
    pub max_tokens: Option<u32>,
    pub reasoning: bool,
    /// `--effort`, `/effort` or the config's `effort`: over the model's
    /// own `[models.ID] effort`.
    pub effort: Option<crate::config::effort::Effort>,
    /// The model provider's own web search, at most this many searches a
    /// request (`config::native_search`); offered only where the provider
    /// has one and the person's rules allow `web_search` outright.
    pub web_search: Option<u32>,
    /// False for `cairn run`: an ask becomes a denial the model is told of.
    pub interactive: bool,
    /// The global config directory, for global instruction files.
    pub global_config_dir: Option<PathBuf>,
    pub instructions_max_bytes: usize,
    /// Where "allow always" rules are stored: the person's own file for
    /// this project, outside the repository (`config::own_rules`); `None`
    /// when there is no config directory (a rule then lasts the session).
    pub rules_file: Option<PathBuf>,
    /// The trust store (`None`: not recorded).
    pub trust_store: Option<PathBuf>,
    /// Fraction of the context window at which the conversation compacts.
    pub compact_threshold: f64,
    /// Windows smaller than this get the short prompt and compact tools.
    pub small_window: u64,
    /// A cheaper model for titles and summaries; the main model when
    /// `None` or when it is refused (`side_model`).
    pub small_model: Option<String>,
    /// Write a title after the first exchange.
    pub auto_title: bool,
    /// How failed model requests are retried.
    pub retry: crate::llm::retry::RetryPolicy,
    /// What the command line chose, which a resumed session's own settings
    /// do not replace.
    pub pinned: Pinned,
    /// When the project is trusted: its skills and commands that grant
    /// tools, as the trust covered them (`extensions::granting_entries`);
    /// one grants its `allowed-tools` only when it is among them as read.
    pub trusted_grants: Option<Vec<crate::extensions::GrantEntry>>,
}

/// Settings the command line named (`--model`, `--mode`, `--yolo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Pinned {
    pub model: bool,
    pub mode: bool,
}

/// How many times in one turn a `Stop` hook may send the model back to work.
pub(crate) const STOP_HOOK_TURNS: u32 = 5;

/// State shared between the turn and the command handler while a turn runs.
pub(crate) struct Shared {
    pub events: mpsc::UnboundedSender<AgentEvent>,
    pub sink: Option<Arc<dyn SessionSink>>,
    /// Shared with sub-agents, whose requests the person answers here.
    pub pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Decision>>>>,
    /// Input requests (MCP elicitation) waiting for the person.
    pub inputs: Mutex<HashMap<u64, oneshot::Sender<crate::tools::input::InputAnswer>>>,
    pub next_request: Arc<AtomicU64>,
    /// One gate for the agent and its sub-agents: the same mode and rules.
    pub gate: Arc<Mutex<Gate>>,
    /// What commands run under (`crate::sandbox`).
    pub sandbox: crate::sandbox::Sandbox,
    /// The messages compactions replaced, oldest first (summaries taken
    /// out), so a rewind to before a compaction finds them.
    pub earlier: Mutex<Vec<Message>>,
    /// The session's hooks (`crate::extensions::hooks`), when any.
    pub hooks: Option<Arc<crate::extensions::hooks::Hooks>>,
    /// Subfolder instruction files loaded this session, and after what.
    pub memory: Mutex<Vec<(PathBuf, String)>>,
    /// A sub-agent's: where its events go (its parent, tagged).
    pub route: Option<subagent::Route>,
    /// What sub-agents spent since the parent last counted it.
    pub sub_totals: Mutex<(Usage, Option<f64>)>,
    /// The language servers that check edits, when configured.
    pub lsp: Option<Arc<crate::lsp::LspManager>>,
    /// What formats a file after an edit (`[format]`), when configured.
    pub formatting: Option<Arc<dyn crate::tools::format::Formatting>>,
    /// The front end's copy of the files (an editor's buffers), when it
    /// offers one to the file tools.
    pub files: Option<Arc<dyn crate::tools::files::FileAccess>>,
    /// The front end's terminals, where `bash` shows foreground commands.
    pub terminals: Option<Arc<dyn crate::tools::terminals::Terminals>>,
    /// The edits open in permission dialogs (by request id), to check
    /// again as the person rejects hunks; shared with sub-agents.
    pub proposed: Arc<Mutex<HashMap<u64, checks::Proposed>>>,
    /// The session whose background jobs `/jobs` stops, also while a
    /// turn runs.
    pub jobs_of: Mutex<std::sync::Weak<SessionState>>,
    /// `Mark`s that arrived while a turn or a compaction ran, answered
    /// when it is over.
    pub marks: Mutex<Vec<u64>>,
}

impl Shared {
    pub fn emit(&self, event: AgentEvent) {
        if let Some(sink) = &self.sink {
            sink.event(&event);
        }
        // The hooks' transcript is the session's own conversation; a
        // sub-agent's messages stay in its child session.
        if let (Some(hooks), AgentEvent::MessageAdded(m), None) = (&self.hooks, &event, &self.route)
        {
            hooks.message_added(m);
        }
        match &self.route {
            Some(route) => route.forward(event),
            // The interface may be gone (quitting); the agent carries on.
            None => {
                let _ = self.events.send(event);
            }
        }
    }
}

pub struct Agent {
    opts: AgentOptions,
    provider: Arc<dyn Provider>,
    /// The same model, retried without notices: for requests in the
    /// background (the title), whose retries are not the turn's.
    quiet_provider: Arc<dyn Provider>,
    registry: Registry,
    tool_source: Option<Arc<dyn ToolSource>>,
    /// The sandbox was set and the gate has not heard what it guarantees
    /// yet: worked out when the agent's task starts, off the thread that
    /// built the agent (finding out may start bubblewrap once).
    sandbox_unsettled: bool,
    shared: Arc<Shared>,
    session: Arc<SessionState>,
    messages: Vec<Message>,
    queue: VecDeque<(String, Vec<ImageData>)>,
    turn: u64,
    usage: Usage,
    cost: Option<f64>,
    tracker: Tracker,
    /// Told to the model with the next prompt (e.g. after an undo).
    pending_note: Option<String>,
    /// Where custom commands are read from; `None`: none are.
    commands: Option<crate::extensions::commands::Roots>,
    /// Sub-agents the model may start; `None`: no `agent` tool.
    delegation: Option<Arc<Delegation>>,
    /// The model already told that it ignores the effort setting.
    effort_noticed: Option<String>,
    /// `!cmd` runs so far, for their call ids.
    shell_runs: u64,
}

impl Agent {
    /// Creates the agent and the receiver of its events.
    pub fn new(
        opts: AgentOptions,
        provider: Arc<dyn Provider>,
        registry: Registry,
        gate: Gate,
    ) -> (Agent, mpsc::UnboundedReceiver<AgentEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let session = Arc::new(SessionState::new(&opts.workspace));
        session.set_cwd(opts.cwd.clone());
        let retry_events = tx.clone();
        let quiet_provider: Arc<dyn Provider> = Arc::new(crate::llm::retry::Retrying::new(
            provider.clone(),
            opts.retry,
        ));
        let provider: Arc<dyn Provider> = Arc::new(
            crate::llm::retry::Retrying::new(provider, opts.retry).with_listener(Arc::new(
                move |n: crate::llm::retry::RetryNotice| {
                    let _ = retry_events.send(AgentEvent::Retrying {
                        attempt: n.attempt,
                        max_attempts: n.max_attempts,
                        delay_ms: n.delay.as_millis() as u64,
                        error: n.error,
                    });
                },
            )),
        );
        let agent = Agent {
            shared: Arc::new(Shared {
                events: tx,
                sink: None,
                pending: Default::default(),
                proposed: Default::default(),
                inputs: Mutex::new(HashMap::new()),
                next_request: Arc::new(AtomicU64::new(1)),
                gate: Arc::new(Mutex::new(gate)),
                sandbox: crate::sandbox::Sandbox::default_for_user(),
                earlier: Mutex::new(Vec::new()),
                hooks: None,
                memory: Mutex::new(Vec::new()),
                route: None,
                sub_totals: Default::default(),
                lsp: None,
                formatting: None,
                files: None,
                terminals: None,
                jobs_of: Mutex::new(std::sync::Weak::new()),
                marks: Mutex::default(),
            }),
            opts,
            provider,
            quiet_provider,
            registry,
            tool_source: None,
            sandbox_unsettled: false,
            session,
            messages: Vec::new(),
            queue: VecDeque::new(),
            turn: 0,
            usage: Usage::default(),
            cost: None,
            tracker: Tracker::default(),
            pending_note: None,
            effort_noticed: None,
            shell_runs: 0,
            commands: None,
            delegation: None,
        };
        (agent, rx)
    }

    /// Records the session as it happens.
    pub fn with_sink(mut self, sink: Arc<dyn SessionSink>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.sink = Some(sink);
        }
        self
    }

    /// Runs these hooks at each event (none when all are left out).
    pub fn with_hooks(mut self, hooks: Arc<crate::extensions::hooks::Hooks>) -> Self {
        // Prompt hooks ask the session's provider.
        hooks.set_asker(hook_model::asker(
            self.quiet_provider.clone(),
            self.opts.model.clone(),
        ));
        if let Some(shared) = Arc::get_mut(&mut self.shared)
            && !hooks.is_empty()
        {
            shared.hooks = Some(hooks);
        }
        self
    }

    /// Has the file tools read and write through the front end's copy of
    /// the files (an editor's buffers) instead of the disk.
    pub fn with_files(mut self, files: Arc<dyn crate::tools::files::FileAccess>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.files = Some(files);
        }
        self
    }

    /// Has `bash` show foreground commands in the front end's terminals
    /// (an editor's), still inside the sandbox.
    pub fn with_terminals(
        mut self,
        terminals: Arc<dyn crate::tools::terminals::Terminals>,
    ) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.terminals = Some(terminals);
        }
        self
    }

    /// Reads custom commands (`/name args`) from these folders.
    pub fn with_commands(mut self, roots: crate::extensions::commands::Roots) -> Self {
        self.commands = Some(roots);
        self
    }

    /// Offers the `agent` tool: sub-agents from these definitions.
    pub fn with_delegation(mut self, delegation: Delegation) -> Self {
        self.delegation = Some(Arc::new(delegation));
        self
    }

    /// Runs commands under `sandbox`, and lets the gate ask accordingly.
    pub fn with_sandbox(mut self, sandbox: crate::sandbox::Sandbox) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.sandbox = sandbox;
            self.sandbox_unsettled = true;
        }
        self
    }

    /// Tells the gate what the sandbox guarantees, before the first call
    /// can be judged. Until then the gate assumes no sandbox (asks more).
    async fn settle_sandbox(&mut self) {
        if !std::mem::take(&mut self.sandbox_unsettled) {
            return;
        }
        let sandbox = self.shared.sandbox.clone();
        let facts = tokio::task::spawn_blocking(move || sandbox.facts())
            .await
            .unwrap_or(crate::sandbox::Facts::NONE);
        lock(&self.shared.gate).set_sandbox(facts);
    }

    /// Checks edits with these language servers.
    pub fn with_lsp(mut self, lsp: Arc<crate::lsp::LspManager>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.lsp = Some(lsp);
        }
        self
    }

    /// Formats files after edits are written (`[format]`).
    pub fn with_formatting(
        mut self,
        formatting: Arc<dyn crate::tools::format::Formatting>,
    ) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.formatting = Some(formatting);
        }
        self
    }

    /// Adds tools that change while cairn runs (MCP servers).
    pub fn with_tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.tool_source = Some(source);
        self
    }

    /// Runs the agent on its own task.
    /// Where the agent's events go, for another reporter of the same
    /// session (the store writer's failures).
    pub fn event_sender(&self) -> mpsc::UnboundedSender<AgentEvent> {
        self.shared.events.clone()
    }

    pub fn spawn(
        self,
    ) -> (
        mpsc::UnboundedSender<AgentCommand>,
        tokio::task::JoinHandle<()>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        checks::watch(&self.shared);
        if let Some(source) = &self.tool_source {
            sources::watch(source.clone(), self.shared.clone());
            if self.opts.interactive {
                sources::install_asker(source.as_ref(), self.shared.clone());
            }
        }
        let handle = tokio::spawn(self.run(rx));
        (tx, handle)
    }

    /// Points `/jobs` at the current session's jobs.
    fn track_jobs(&self) {
        *lock(&self.shared.jobs_of) = Arc::downgrade(&self.session);
    }

    /// A fresh session state for `/new` or a resume. The earlier one ends
    /// here, not whenever its last holder lets go: its background jobs
    /// are stopped now and named, so none runs on where `/jobs` could no
    /// longer reach it.
    fn replace_session(&mut self) {
        let earlier = &self.session;
        let running: Vec<String> = (earlier.jobs.ids().into_iter())
            .filter(|id| earlier.jobs.get(id).is_some_and(|p| p.running()))
            .collect();
        // Its jobs are gone before the new session's census looks: none
        // can plant what that census would take as it found it.
        earlier.finish();
        self.session = Arc::new(SessionState::new(&self.opts.workspace));
        self.track_jobs();
        self.session.set_cwd(self.opts.cwd.clone());
        if !running.is_empty() {
            self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: format!(
                    "Stopped the earlier session's background {} {}: a job belongs to the session that started it.",
                    crate::text::plural(running.len(), "job", "jobs"),
                    running.join(", ")
                ),
            });
        }
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<AgentCommand>) {
        self.settle_sandbox().await;
        if self.effective_effort().is_some() {
            self.announce_effort();
        }
        self.track_jobs();
        self.start_session("startup").await;
        self.serve(&mut rx).await;
        let cwd = self.session.cwd();
        hooks::session_end(&self.shared, "other", &cwd).await;
        // Jobs killed, control files checked once more, census kept.
        self.session.finish();
        checks::stop(&self.shared).await;
    }

    async fn serve(&mut self, rx: &mut mpsc::UnboundedReceiver<AgentCommand>) {
        while let Some(cmd) = rx.recv().await {
            match cmd {
                AgentCommand::Submit { text, images } => {
                    self.queue.push_back((text, images));
                    while let Some((text, images)) = self.queue.pop_front() {
                        if !self.run_turn(text, images, rx).await {
                            return;
                        }
                    }
                }
                AgentCommand::Shutdown => return,
                AgentCommand::RunShell { command } => {
                    if !self.run_shell(command, rx).await {
                        return;
                    }
                }
                AgentCommand::Compact { focus } => {
                    if !self.run_compaction(focus, rx).await {
                        return;
                    }
                }
                other => {
                    let source = match &other {
                        AgentCommand::NewSession => Some("clear"),
                        AgentCommand::LoadHistory { .. } => Some("resume"),
                        _ => None,
                    };
                    // Each sets the session's loaded memory itself.
                    self.handle_idle(other);
                    if let Some(source) = source {
                        self.restart_hook_session(source).await;
                    }
                }
            }
            // Marks that came while a turn or a compaction ran.
            let marks = std::mem::take(&mut *lock(&self.shared.marks));
            for id in marks {
                self.shared.emit(AgentEvent::Marked(id));
            }
        }
    }

    /// `SessionStart`: what its hooks print goes to the model with the
    /// next prompt.
    async fn start_session(&mut self, source: &str) {
        // The census is the baseline for what runs next, hooks included.
        let session = self.session.clone();
        let _ = tokio::task::spawn_blocking(move || session.ready()).await;
        let cwd = self.session.cwd();
        let context = hooks::session_start(&self.shared, source, &cwd).await;
        if context.is_empty() {
            return;
        }
        let mut note = self.pending_note.take().unwrap_or_default();
        for c in context {
            if !note.is_empty() {
                note.push('\n');
            }
            note.push_str(&format!("(SessionStart hook context) {c}"));
        }
        self.pending_note = Some(note);
    }

    /// A new or resumed session: hooks see a new id and transcript (holding
    /// what was resumed), and `SessionStart` runs again.
    async fn restart_hook_session(&mut self, source: &str) {
        let Some(h) = self.shared.hooks.clone() else {
            return;
        };
        h.restart_session();
        for m in &self.messages {
            h.message_added(m);
        }
        self.start_session(source).await;
    }

    /// Commands that arrive while no turn runs.
    fn handle_idle(&mut self, cmd: AgentCommand) {
        match cmd {
            AgentCommand::Cancel => {}
            AgentCommand::PermissionReply { id, decision } => self.reply(id, decision),
            AgentCommand::InputReply { id, answer } => sources::answer(&self.shared, id, answer),
            AgentCommand::SetMode(mode) => self.set_mode(mode),
            AgentCommand::SetModel { provider, model } => {
                self.set_model(provider, model);
                self.announce_effort();
            }
            AgentCommand::SetEffort(effort) => self.set_effort(effort),
            AgentCommand::NewSession => {
                if let Some(sink) = &self.shared.sink {
                    sink.read_only(false);
                    sink.new_session();
                }
                self.messages.clear();
                lock(&self.shared.earlier).clear();
                lock(&self.shared.memory).clear();
                self.turn = 0;
                self.replace_session();
                self.usage = Usage::default();
                self.cost = None;
                self.tracker.reset();
                // A note belongs to the session it was made in.
                self.pending_note = None;
                self.shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Info,
                    text: "Started a new session.".into(),
                });
            }
            AgentCommand::LoadHistory {
                messages,
                versions,
                session_id,
                cost,
                lost,
                read_only,
                compacted,
                note,
                settings,
            } => {
                self.load_history(
                    resume::Stored {
                        messages,
                        versions,
                        lost,
                        cost,
                        compacted,
                        note,
                    },
                    session_id,
                    read_only,
                );
                self.restore_settings(settings);
            }
            AgentCommand::SetTitle(title) => self.shared.emit(AgentEvent::TitleChanged(title)),
            AgentCommand::Mark(id) => self.shared.emit(AgentEvent::Marked(id)),
            AgentCommand::ShowMemory => self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: memory::describe(&self.shared, &self.opts),
            }),
            AgentCommand::PrepareRewind { turn } => self.prepare_rewind(turn),
            AgentCommand::Rewind {
                turn,
                restore_files,
                fork,
            } => self.rewind(turn, restore_files, fork),
            AgentCommand::KillJob { job_id } => kill_job(&self.shared, &job_id),
            AgentCommand::ShowLanguageServers => checks::report(&self.shared),
            AgentCommand::RestartLanguageServer(name) => checks::restart(&self.shared, &name),
            AgentCommand::RecheckEdit { id, rejected } => {
                checks::recheck(&self.shared, id, rejected)
            }
            AgentCommand::PrepareUndo => self.prepare_undo(),
            AgentCommand::ConfirmUndo { turn } => self.confirm_undo(turn),
            AgentCommand::Submit { .. }
            | AgentCommand::Shutdown
            | AgentCommand::Compact { .. }
            | AgentCommand::RunShell { .. } => {}
        }
    }

    /// Titles the session from its first exchange.
    fn title_job(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let prompt = self.messages.first().map(|m| m.text()).unwrap_or_default();
        let answer = self
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.text().is_empty())
            .map(|m| m.text())
            .unwrap_or_default();
        let provider = self.quiet_provider.clone();
        let models = side_model::candidates(&self.opts);
        let shared = self.shared.clone();
        async move {
            match title::generate_first(provider.as_ref(), &models, &prompt, &answer).await {
                Ok(title) => shared.emit(AgentEvent::TitleGenerated(title)),
                Err(why) => shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Info,
                    text: format!("The session could not be given a title ({why})."),
                }),
            }
        }
    }

    fn reply(&self, id: u64, decision: Decision) {
        if let Some(tx) = lock(&self.shared.pending).remove(&id) {
            let _ = tx.send(decision);
        }
    }

    fn set_mode(&self, mode: crate::permission::Mode) {
        lock(&self.shared.gate).set_mode(mode);
        self.shared.emit(AgentEvent::ModeChanged(mode));
    }

    fn set_model(&mut self, provider: Option<String>, model: String) {
        if let Some(p) = provider.filter(|p| p != &self.opts.provider_name) {
            self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!(
                    "Switching provider to `{p}` needs a restart: cairn --provider {p} --model {model}"
                ),
            });
            return;
        }
        self.opts.model_info = crate::llm::ModelCatalog::global().lookup(&model);
        self.opts.model = model.clone();
        // Prompt hooks that name no model follow the session's.
        if let Some(hooks) = &self.shared.hooks {
            hooks.set_asker(hook_model::asker(
                self.quiet_provider.clone(),
                model.clone(),
            ));
        }
        self.shared.emit(AgentEvent::ModelChanged {
            provider: self.opts.provider_name.clone(),
            model,
        });
    }

    /// Runs one user turn to its end. Returns false when the agent must stop.
    async fn run_turn(
        &mut self,
        text: String,
        images: Vec<ImageData>,
        rx: &mut mpsc::UnboundedReceiver<AgentCommand>,
    ) -> bool {
        self.turn += 1;
        self.session.set_turn(self.turn);
        // The repetition guard watches the model within one prompt; a person
        // asking again ("run the tests again") is never a loop.
        lock(&self.shared.gate).reset_repetition();
        // A turn that ended early (a blocked prompt) left its grants.
        lock(&self.shared.gate).end_turn();
        // What a job still running planted since the last turn's checks
        // (and, the first time, what start-up found) goes before anything
        // of this turn runs.
        calls::moved_notice(&self.shared, &self.session.check_between());
        let turn_no = self.turn;
        self.shared.emit(AgentEvent::TurnStarted {
            turn: turn_no,
            prompt: text.clone(),
        });
        let learned = limits::learn(self.provider.as_ref(), &mut self.opts, &self.shared).await;
        self.notice_ignored_effort();
        let cancel = CancellationToken::new();
        let mut ctx = self.turn_context(cancel.clone());
        limits::report_overhead(&ctx, learned);
        let mut keep_running = true;
        let builtin = custom::builtin(&text);
        let found = match builtin {
            Some(_) => None,
            None => custom::find(self.commands.as_ref(), &self.session.cwd(), &text),
        };
        let (text, mentionable) = match found {
            None => {
                let text = builtin.unwrap_or(text);
                (text.clone(), text)
            }
            Some((command, args)) => {
                let fut = custom::expand(&ctx, &command, &args);
                let (expanded, keep) =
                    custom::drive(fut, rx, &cancel, &mut self.queue, &self.shared).await;
                keep_running = keep;
                if let Some(model) = command.model {
                    ctx.opts.model_info = crate::llm::ModelCatalog::global().lookup(&model);
                    ctx.opts.model = model;
                }
                expanded
            }
        };
        let cwd = self.session.cwd();
        let fut = hooks::prompt_submitted(&self.shared, &text, &cwd, &cancel);
        let (said, keep) = custom::drive(fut, rx, &cancel, &mut self.queue, &self.shared).await;
        keep_running &= keep;
        let context = match said {
            hooks::Prompt::Go(context) => context,
            hooks::Prompt::Blocked(why) => {
                let error = format!(
                    "a UserPromptSubmit hook blocked this prompt, so it was not sent: {why}"
                );
                self.shared.emit(AgentEvent::TurnFinished {
                    turn: turn_no,
                    outcome: TurnOutcome::Failed { error },
                });
                return keep_running;
            }
        };
        let user = self
            .user_message(&text, &mentionable, images, context)
            .await;
        if let Some(error) = pictures::refusal(&user, &ctx.opts.model, &ctx.opts.model_info) {
            // Nothing was sent or kept: the turn's number is free again.
            self.turn -= 1;
            self.session.set_turn(self.turn);
            self.shared.emit(AgentEvent::TurnFinished {
                turn: turn_no,
                outcome: TurnOutcome::Failed { error },
            });
            return keep_running;
        }
        self.shared.emit(AgentEvent::MessageAdded(user.clone()));
        self.messages.push(user);
        let mut outcome = self.drive_turn(&ctx, rx, &cancel, &mut keep_running).await;
        let mut continued = 0;
        while matches!(outcome, TurnOutcome::Completed)
            && keep_running
            && continued < STOP_HOOK_TURNS
        {
            let fut = hooks::stop(&self.shared, continued > 0, &cwd, &cancel);
            let (reason, keep) =
                custom::drive(fut, rx, &cancel, &mut self.queue, &self.shared).await;
            keep_running &= keep;
            let Some(reason) = reason else { break };
            continued += 1;
            let note = Message {
                role: Role::User,
                parts: vec![Part::Text {
                    text: format!("A Stop hook says the work is not done yet: {reason}"),
                }],
            };
            self.shared.emit(AgentEvent::MessageAdded(note.clone()));
            self.messages.push(note);
            outcome = self.drive_turn(&ctx, rx, &cancel, &mut keep_running).await;
        }
        if matches!(outcome, TurnOutcome::Cancelled) {
            // A cancelled turn drops what was queued behind it.
            self.queue.clear();
        }
        crate::conversation::repair_tool_pairs(&mut self.messages);
        if turn_no == 1 && self.opts.auto_title && matches!(outcome, TurnOutcome::Completed) {
            self.write_title().await;
        }
        turn::store_new_versions(&self.shared, &self.session);
        // What a skill or command granted held for this turn only.
        lock(&self.shared.gate).end_turn();
        self.shared.emit(AgentEvent::TurnFinished {
            turn: turn_no,
            outcome,
        });
        give_back_memory();
        keep_running
    }

    /// Runs the turn's model calls and tools to their end, answering the
    /// commands that arrive meanwhile.
    async fn drive_turn(
        &mut self,
        ctx: &turn_context::TurnContext,
        rx: &mut mpsc::UnboundedReceiver<AgentCommand>,
        cancel: &CancellationToken,
        keep_running: &mut bool,
    ) -> TurnOutcome {
        let queue = &mut self.queue;
        let shared = &self.shared;
        let totals = turn::Totals {
            usage: &mut self.usage,
            cost: &mut self.cost,
            tracker: &mut self.tracker,
        };
        let fut = turn::run(ctx, &mut self.messages, totals);
        tokio::pin!(fut);
        loop {
            tokio::select! {
                outcome = &mut fut => break outcome,
                cmd = rx.recv(), if *keep_running => {
                    *keep_running &= while_busy(cmd, cancel, queue, shared);
                }
            }
        }
    }

    /// The person's message: a pending note, what hooks and the prompt
    /// attach (before it, so its last text part stays the person's own
    /// words), the prompt, and its images. Files are attached for the
    /// `@path` mentions of `mentionable` (the prompt without what a custom
    /// command's `` !`cmd` `` printed).
    async fn user_message(
        &mut self,
        text: &str,
        mentionable: &str,
        images: Vec<ImageData>,
        hook_context: Vec<String>,
    ) -> Message {
        let mut parts = Vec::new();
        if let Some(note) = self.pending_note.take() {
            parts.push(Part::Text { text: note });
            if let Some(sink) = &self.shared.sink {
                sink.pending_note(None);
            }
        }
        for c in hook_context {
            parts.push(Part::Text {
                text: format!("(UserPromptSubmit hook context) {c}"),
            });
        }
        if let Some(note) = self.delegation.as_ref().and_then(|d| d.mention_note(text)) {
            parts.push(Part::Text { text: note });
        }
        let (cwd, workspace) = (self.session.cwd(), self.opts.workspace.clone());
        let (attached, pictures) =
            mentions::attach(mentionable, cwd, workspace, &self.shared).await;
        parts.extend(attached);
        if let Some(source) = &self.tool_source {
            let images = self.opts.model_info.supports_images;
            let found = sources::attachments(source.as_ref(), mentionable, images, &self.shared);
            parts.extend(found.await);
        }
        parts.push(Part::Text {
            text: text.to_string(),
        });
        parts.extend(pictures::parts(&self.shared, pictures, images));
        Message {
            role: Role::User,
            parts,
        }
    }

    /// Titles the session after its first turn: in the background in the
    /// interface; `cairn run` ends after this turn, so there the title is
    /// written first (so the stored session has it), but a failing title
    /// request (retried) holds the run up for 5 s at most.
    async fn write_title(&self) {
        let job = self.title_job();
        if self.opts.interactive {
            tokio::spawn(job);
        } else {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), job).await;
        }
    }
}

impl Agent {
    fn turn_context(&self, cancel: CancellationToken) -> turn_context::TurnContext {
        let mut builtin = self.registry.clone();
        if let Some(d) = &self.delegation {
            let host = subagent::Host {
                opts: self.opts.clone(),
                provider: self.provider.clone(),
                shared: self.shared.clone(),
                session: self.session.clone(),
                tools: self.registry.clone(),
                tool_source: self.tool_source.clone(),
                catalogue: Arc::new(d.catalogue(&self.shared)),
                delegation: d.clone(),
                depth: 0,
            };
            builtin.register(Arc::new(subagent::AgentTool::new(host)));
        }
        // The provider's search as a tool of its own where it cannot go
        // beside the others (`grounded`).
        let allowed = lock(&self.shared.gate)
            .rules()
            .allows_outright("web_search");
        let provider = self.provider.as_ref();
        if grounded::GroundedSearch::wanted(
            provider,
            &self.opts.model,
            self.opts.web_search,
            allowed,
        ) {
            builtin.register(Arc::new(grounded::GroundedSearch {
                provider: self.provider.clone(),
                model: self.opts.model.clone(),
                model_info: self.opts.model_info.clone(),
                uses: self.opts.web_search.unwrap_or(1),
                shared: self.shared.clone(),
            }));
        }
        // Offered only while planning (`fixed::offered_specs`).
        builtin.register(Arc::new(plan::ExitPlanTool::new(
            self.shared.clone(),
            self.opts.interactive,
        )));
        turn_context::TurnContext {
            opts: self.opts.clone(),
            provider: self.provider.clone(),
            builtin,
            tool_source: self.tool_source.clone(),
            registry: std::sync::Mutex::new(Arc::new(self.registry.clone())),
            shared: self.shared.clone(),
            session: self.session.clone(),
            cancel,
            turn: self.turn,
            extensions: self.commands.clone(),
            hook_stop: std::sync::Mutex::new(None),
            sub: None,
            own_cwd: None,
        }
    }

    /// `/compact`: summarise now. Esc cancels it like a turn.
    async fn run_compaction(
        &mut self,
        focus: Option<String>,
        rx: &mut mpsc::UnboundedReceiver<AgentCommand>,
    ) -> bool {
        let cancel = CancellationToken::new();
        let ctx = self.turn_context(cancel.clone());
        let mut keep_running = true;
        let queue = &mut self.queue;
        let result = {
            let (messages, tracker) = (&mut self.messages, &mut self.tracker);
            let fut = async {
                hooks::pre_compact(&ctx, true, focus.as_deref()).await;
                compaction::compact(&ctx, messages, focus.as_deref(), true, tracker).await
            };
            tokio::pin!(fut);
            loop {
                tokio::select! {
                    r = &mut fut => break r,
                    cmd = rx.recv(), if keep_running => {
                        keep_running &= while_busy(cmd, &cancel, queue, &self.shared);
                    }
                }
            }
        };
        if let Err(e) = result {
            self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!("Could not compact: {e}"),
            });
        }
        // Prompts typed while compacting run now.
        while keep_running && let Some((text, images)) = self.queue.pop_front() {
            keep_running = self.run_turn(text, images, rx).await;
        }
        keep_running
    }
}

/// Handles a command that arrives while a turn or a compaction runs.
/// Returns false when the agent must stop.
fn while_busy(
    cmd: Option<AgentCommand>,
    cancel: &CancellationToken,
    queue: &mut VecDeque<(String, Vec<ImageData>)>,
    shared: &Arc<Shared>,
) -> bool {
    match cmd {
        None | Some(AgentCommand::Shutdown) => {
            cancel.cancel();
            return false;
        }
        Some(AgentCommand::Cancel) => cancel.cancel(),
        Some(AgentCommand::PermissionReply { id, decision }) => {
            lock(&shared.proposed).remove(&id);
            if let Some(tx) = lock(&shared.pending).remove(&id) {
                let _ = tx.send(decision);
            }
        }
        Some(AgentCommand::InputReply { id, answer }) => sources::answer(shared, id, answer),
        Some(AgentCommand::KillJob { job_id }) => kill_job(shared, &job_id),
        Some(AgentCommand::ShowLanguageServers) => checks::report(shared),
        Some(AgentCommand::RecheckEdit { id, rejected }) => checks::recheck(shared, id, rejected),
        Some(AgentCommand::RestartLanguageServer(name)) => checks::restart(shared, &name),
        Some(AgentCommand::Submit { text, images }) => queue.push_back((text, images)),
        Some(AgentCommand::SetMode(mode)) => {
            lock(&shared.gate).set_mode(mode);
            shared.emit(AgentEvent::ModeChanged(mode));
        }
        Some(AgentCommand::SetTitle(title)) => shared.emit(AgentEvent::TitleChanged(title)),
        // Answered when what runs now is done (`serve`).
        Some(AgentCommand::Mark(id)) => lock(&shared.marks).push(id),
        Some(other) => shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: format!(
                "{} is not possible while the agent works; press Esc to stop it first.",
                command_name(&other)
            ),
        }),
    }
    true
}

/// How many prompts (user messages with text) a history holds.
fn count_prompts(messages: &[Message]) -> u64 {
    crate::context::turn_starts(messages).len() as u64
}

/// Stops a running background job of the current session; its follower
/// reports the end.
fn kill_job(shared: &Shared, job_id: &str) {
    let session = lock(&shared.jobs_of).upgrade();
    let Some(job) = session.and_then(|s| s.jobs.get(job_id)) else {
        shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: format!("There is no background job {job_id} in this session."),
        });
        return;
    };
    if job.exit_code().is_none() {
        tokio::spawn(async move { job.kill().await });
    }
}

fn command_name(cmd: &AgentCommand) -> &'static str {
    match cmd {
        AgentCommand::SetModel { .. } => "Changing the model",
        AgentCommand::SetEffort(_) => "Changing the effort",
        AgentCommand::RunShell { .. } => "Running a command of your own",
        AgentCommand::NewSession => "Starting a new session",
        AgentCommand::LoadHistory { .. } => "Loading a session",
        AgentCommand::PrepareUndo | AgentCommand::ConfirmUndo { .. } => "Undo",
        AgentCommand::PrepareRewind { .. } | AgentCommand::Rewind { .. } => "Rewinding",
        _ => "That",
    }
}

#[cfg(test)]
mod tests;

/// A turn's requests build and drop megabytes of small allocations (the
/// conversation copied and serialised) on the runtime's threads, and glibc
/// keeps the freed pages of each thread's arena resident. Handing them back
/// when a turn ends keeps a long session's resident memory near what it
/// actually holds.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free memory to the system; it may be
    // called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
