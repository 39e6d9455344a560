//! The conversation with the agent: the commands a front end sends and
//! the events the agent sends back.

use serde::{Deserialize, Serialize};

use super::permission::{Decision, PermissionRequest};
use super::sessions::LoadedSession;
use crate::config::Mode;
use crate::conversation::{ImageData, Message};
use crate::llm::Usage;
use crate::tools::ToolDisplay;
use crate::tools::state::Todo;

#[derive(Debug, Clone, PartialEq)]
pub enum AgentCommand {
    /// The person's answer to `InputRequested`.
    InputReply {
        id: u64,
        answer: crate::tools::input::InputAnswer,
    },
    /// A new user prompt. Queued if a turn is running.
    Submit {
        text: String,
        images: Vec<ImageData>,
    },
    /// `!cmd`: run the person's own command (through the gate, in the
    /// sandbox) and attach its output to the next prompt.
    RunShell {
        command: String,
    },
    /// Stop the running turn: the stream and any running tools.
    Cancel,
    /// Say which instruction files are in use (`/memory`), as a notice.
    ShowMemory,
    /// The language servers started and known here (`/lsp`), answered
    /// with `LanguageServerReport`; also while a turn runs.
    ShowLanguageServers,
    /// The person changed which hunks of request `id`'s edit they keep:
    /// check the edit again with those `rejected` left out (answered with
    /// `EditCheck` for the same set).
    RecheckEdit {
        id: u64,
        rejected: Vec<usize>,
    },
    /// Stop and start again every started language server of this name
    /// (`/lsp restart NAME`); a notice says what happened.
    RestartLanguageServer(String),
    /// Stop a background job of the session (`/jobs`); its end arrives as
    /// `JobFinished`. A job that already ended is left as it is.
    KillJob {
        job_id: String,
    },
    PermissionReply {
        id: u64,
        decision: Decision,
    },
    SetMode(Mode),
    /// The reasoning effort of the next requests (`None`: the model's
    /// default).
    SetEffort(Option<crate::config::effort::Effort>),
    /// Switch model (and provider, when given by name).
    SetModel {
        provider: Option<String>,
        model: String,
    },
    /// Compact the conversation now, optionally focusing the summary.
    Compact {
        focus: Option<String>,
    },
    /// Show what undoing the last turn's file changes would do.
    PrepareUndo,
    /// Restore the files of `turn` (after the person saw the plan).
    ConfirmUndo {
        turn: u64,
    },
    /// Show what rewinding to the prompt of `turn` would do.
    PrepareRewind {
        turn: u64,
    },
    /// Return the conversation to just before the prompt of `turn`; as a
    /// fork (a new stored session) or in place; optionally the files too.
    Rewind {
        turn: u64,
        restore_files: bool,
        fork: bool,
    },
    /// Rename the session.
    SetTitle(String),
    /// Start a fresh conversation.
    NewSession,
    /// Replace the conversation (resume, rewind).
    LoadHistory {
        messages: Vec<Message>,
        /// File versions of the session, so undo works after a resume.
        versions: Vec<crate::tools::state::FileVersion>,
        /// The stored session to continue recording into.
        session_id: Option<crate::store::SessionId>,
        /// What the session has cost so far, so totals continue from it.
        cost: Option<f64>,
        /// Files changed in the session that cannot be restored.
        lost: Vec<crate::store::LostFile>,
        /// Another cairn records the session: show it, record nothing.
        read_only: bool,
        /// The latest compaction: the conversation continues from its
        /// summary and the messages from `first_kept` on.
        compacted: Option<super::sessions::CompactionMark>,
        /// What the model is still to be told with the next prompt (an
        /// undo's note), kept with the session.
        note: Option<String>,
        /// The model and mode the session last ran with; the agent goes on
        /// with them unless the command line chose others.
        settings: Option<StoredSettings>,
    },
    Shutdown,
    /// Answered with `Marked` of the same id once every command sent
    /// before it has been handled (a compaction done, an undo planned): a
    /// front end that runs commands for someone else (ACP's slash
    /// commands) knows when their answers are all out.
    Mark(u64),
}

pub use crate::conversation::ToolStatus;

/// The model and permission mode a stored session last used.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSettings {
    pub provider: String,
    pub model: String,
    pub mode: Option<Mode>,
}

impl StoredSettings {
    pub fn of(loaded: &LoadedSession) -> StoredSettings {
        StoredSettings {
            provider: loaded.summary.provider.clone(),
            model: loaded.summary.model.clone(),
            mode: loaded.summary.mode.as_deref().and_then(Mode::parse),
        }
    }

    /// The mode a resumed session goes on in: its own, unless the command
    /// line named one or its own is looser than `current` (the person's
    /// default), which needs asking anew.
    pub fn resumed_mode(&self, current: Mode, pinned: bool) -> Mode {
        use crate::config::project::strictness;
        match self.mode {
            Some(m) if !pinned && strictness(m) >= strictness(current) => m,
            _ => current,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TurnOutcome {
    Completed,
    Cancelled,
    TurnLimit { limit: u32 },
    Failed { error: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A user prompt starts a turn (also for queued prompts).
    TurnStarted {
        turn: u64,
        prompt: String,
    },
    /// A new model response begins streaming within the turn.
    ResponseStarted,
    TextDelta(String),
    ReasoningDelta(String),
    /// The provider ran a web search of its own mid-answer: its queries
    /// and the pages it found (provider text: escape before showing).
    WebSearch(crate::conversation::WebSearch),
    /// The sources the answer just finished cites, each once.
    Citations(Vec<crate::conversation::Source>),
    /// An `@path` of the prompt was attached to it for the model.
    Attached {
        mention: String,
        /// What was attached, in a few words ("120 lines").
        summary: String,
        /// The text the model reads.
        text: String,
    },
    /// A hook blocked, decided or added context: one compact line,
    /// expandable to what it said.
    Hook {
        /// Its event (`PreToolUse`) and what it did ("blocked Bash").
        summary: String,
        command: String,
        output: String,
    },
    /// The stream restarted and the partial response must be dropped.
    ResponseReset,
    /// The model asked for a tool.
    ToolCallStarted {
        call_id: String,
        name: String,
        input: serde_json::Value,
        summary: String,
    },
    ToolCallProgress {
        call_id: String,
        message: String,
    },
    /// A dialog asks the person about the call; no time counts until it
    /// runs.
    ToolCallWaiting {
        call_id: String,
    },
    /// The call was approved (or needed no approval) and starts running
    /// now: its duration counts from here, not from `ToolCallStarted`.
    ToolCallRunning {
        call_id: String,
    },
    /// More output of a running call (a command's stdout and stderr as they
    /// arrive, whole lines, colour codes kept for the screen).
    ToolCallOutput {
        call_id: String,
        chunk: String,
    },
    ToolCallFinished {
        call_id: String,
        status: ToolStatus,
        output: String,
        display: Option<ToolDisplay>,
    },
    /// More output of the background job a `bash` call started (keyed by
    /// that call), whole lines, colour codes kept for the screen; it comes
    /// after the call finished, also between turns.
    JobOutput {
        call_id: String,
        chunk: String,
    },
    /// The background job a `bash` call started ended or was stopped.
    JobFinished {
        call_id: String,
        end: crate::tools::jobs::JobEnd,
    },
    PermissionRequested {
        id: u64,
        request: PermissionRequest,
    },
    /// The language server's check of the edit a request shows: `None`
    /// while it runs ("checking…"), then its verdict.
    EditCheck {
        id: u64,
        server: String,
        verdict: Option<crate::lsp::Verdict>,
        /// The hunks left out of the checked text (none: the whole edit).
        rejected: Vec<usize>,
    },
    /// A request was answered (or dropped by a cancel).
    PermissionResolved {
        id: u64,
    },
    /// Usage after one model response.
    Usage {
        usage: Usage,
        /// Tokens in the context window now.
        context_tokens: u64,
        context_window: u64,
        /// Session cost so far in US dollars, when prices are known.
        cost: Option<f64>,
    },
    /// A request failed and will be tried again.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error: String,
    },
    Notice {
        level: NoticeLevel,
        text: String,
    },
    /// How many MCP servers are up, starting, and enabled in all.
    ServersChanged(crate::tools::SourceHealth),
    /// The language servers started so far and their states.
    LanguageServers(Vec<crate::lsp::ServerStatus>),
    /// The answer to `ShowLanguageServers`: the servers started, and
    /// the ones known here (whether their program is installed).
    LanguageServerReport {
        statuses: Vec<crate::lsp::ServerStatus>,
        known: Vec<crate::lsp::KnownServer>,
    },
    /// A server asks the person for input; answer with `InputReply`.
    InputRequested {
        id: u64,
        request: crate::tools::input::InputRequest,
    },
    /// An input request was answered or dropped.
    InputResolved {
        id: u64,
    },
    Todos(Vec<Todo>),
    ModeChanged(Mode),
    ModelChanged {
        provider: String,
        model: String,
    },
    /// The reasoning effort now in force (`None`: the model's default).
    EffortChanged(Option<crate::config::effort::Effort>),
    /// Every command sent before `Mark(id)` has been handled.
    Marked(u64),
    /// The conversation was compacted; the full history stays in the store.
    Compacted {
        before_tokens: u64,
        after_tokens: u64,
        /// The model's summary, when one replaced older turns.
        summary: Option<String>,
        /// With a summary: the first turn kept verbatim (the summary
        /// stands for the turns before it), so the store can record it.
        from_turn: u64,
    },
    /// What an undo would do; the interface asks for confirmation.
    UndoPlanned(crate::tools::restore::UndoPlan),
    /// Files were restored, or removed where the turn had created them.
    UndoApplied {
        turn: u64,
        restored: Vec<String>,
        removed: Vec<String>,
        failed: Vec<(String, String)>,
    },
    /// What a rewind would do: the prompt it returns to and the files that
    /// would be restored if asked.
    RewindPlanned {
        turn: u64,
        prompt: String,
        files: crate::tools::restore::UndoPlan,
    },
    /// The conversation went back to before `turn`; `prompt` is that turn's
    /// text, for editing and sending again.
    Rewound {
        turn: u64,
        prompt: String,
        fork: bool,
        restored: Vec<String>,
        failed: Vec<(String, String)>,
    },
    /// The person named the session.
    TitleChanged(String),
    /// The model suggested a title after the first exchange; it only
    /// applies while the session has none (a rename always wins).
    TitleGenerated(String),
    /// A message was added to the conversation (for the session store).
    MessageAdded(Message),
    /// The finished parts of a message still being formed (an answer whose
    /// tool calls are streaming, results while other calls run), so the
    /// store keeps each part as it finishes; `MessageAdded` completes it.
    PartialMessage(Message),
    TurnFinished {
        turn: u64,
        outcome: TurnOutcome,
    },
    /// The session is being recorded under this id (a new session's first
    /// write, a resume, a fork).
    SessionRecorded {
        id: crate::store::SessionId,
    },
    /// The session store refuses writes; `unsaved` writes wait in memory
    /// and are tried again until it takes them.
    StoreFailed {
        error: String,
        unsaved: usize,
    },
    /// Every waiting write is saved now.
    StoreRecovered,
    /// A sub-agent started for the `agent` call `call_id`, which is its id.
    SubagentStarted {
        call_id: String,
        agent: String,
        description: String,
        prompt: String,
    },
    /// One of a sub-agent's own events (its text, tool calls and results),
    /// for its pane and its transcript. Its permission requests come as
    /// plain `PermissionRequested` events naming it.
    Subagent {
        call_id: String,
        event: Box<AgentEvent>,
    },
    /// A sub-agent ended; its usage and cost count toward the session's.
    SubagentFinished {
        call_id: String,
        agent: String,
        outcome: TurnOutcome,
        /// One line of what it did ("4 tool calls: view ×3, grep; 2.1k tokens; 3.2 s").
        summary: String,
        usage: Usage,
        cost: Option<f64>,
    },
    /// In plan mode, the model's finished plan (markdown) for the person
    /// to approve (`Decision::ApprovePlan`) or send back (`Decision::Deny`
    /// with a note); closed by `PermissionResolved`.
    PlanProposed {
        id: u64,
        plan: String,
    },
}

impl AgentCommand {
    /// The command that has the agent continue a stored session.
    pub fn load(loaded: &LoadedSession) -> AgentCommand {
        AgentCommand::LoadHistory {
            messages: loaded.messages.clone(),
            versions: loaded.versions.clone(),
            session_id: Some(loaded.id().clone()),
            cost: loaded.cost,
            lost: loaded.lost.clone(),
            read_only: false,
            compacted: loaded.compaction().cloned(),
            note: loaded.summary.pending_note.clone(),
            settings: Some(StoredSettings::of(loaded)),
        }
    }

    /// The same, for a session another cairn records: nothing is recorded.
    pub fn load_read_only(loaded: &LoadedSession) -> AgentCommand {
        match Self::load(loaded) {
            AgentCommand::LoadHistory {
                messages,
                versions,
                session_id,
                cost,
                lost,
                compacted,
                note,
                settings,
                ..
            } => AgentCommand::LoadHistory {
                messages,
                versions,
                session_id,
                cost,
                lost,
                read_only: true,
                compacted,
                note,
                settings,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_session_keeps_its_mode_unless_pinned_or_looser() {
        let stored = |mode| StoredSettings {
            provider: "anthropic".into(),
            model: "m".into(),
            mode: Some(mode),
        };
        assert_eq!(
            stored(Mode::AlwaysAsk).resumed_mode(Mode::Smart, false),
            Mode::AlwaysAsk
        );
        // `--mode` named one: it wins.
        assert_eq!(
            stored(Mode::AlwaysAsk).resumed_mode(Mode::Smart, true),
            Mode::Smart
        );
        // Looser than the default needs asking anew.
        assert_eq!(
            stored(Mode::Auto).resumed_mode(Mode::Smart, false),
            Mode::Smart
        );
        let none = StoredSettings {
            mode: None,
            ..stored(Mode::Plan)
        };
        assert_eq!(none.resumed_mode(Mode::Smart, false), Mode::Smart);
    }
}
