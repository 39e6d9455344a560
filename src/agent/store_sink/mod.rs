//! Records a session into the SQLite store on a writer thread of its own,
//! so the agent never waits on the disk. Each message is committed when it
//! is added, so a crash loses at most the response being streamed.
//!
//! A write that fails (a full disk, a read-only or immutable file, a
//! database another process keeps locked) is never dropped: it and every
//! write after it wait in order in memory and are tried again every
//! [`RETRY_EVERY`] until the store takes them. The front end is told
//! (`AgentEvent::StoreFailed` / `StoreRecovered`), and [`StoreSink::flush`]
//! says what is still unsaved.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::recording::SessionSink;
use crate::conversation::Role;
use crate::llm::Usage;
use crate::protocol::AgentEvent;
use crate::store::{MessageId, MessageMeta, NewSession, SessionId, Store, StoreError};
use crate::sync::lock;
use crate::tools::ToolDisplay;
use crate::tools::state::FileVersion;

/// What a new session is created with.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub cwd: PathBuf,
    pub project_root: PathBuf,
    pub provider: String,
    pub model: String,
    /// The permission mode it starts in (`Mode::as_str`).
    pub mode: Option<String>,
}

/// How often unsaved writes are tried again.
pub const RETRY_EVERY: Duration = Duration::from_secs(1);

#[derive(Clone)]
enum Job {
    /// An event and when the agent sent it (tool durations are measured
    /// from these, not from when the writer got to them).
    Event(Box<AgentEvent>, Instant),
    Versions(Vec<FileVersion>),
    Lost(Vec<crate::store::LostFile>),
    Resume(SessionId),
    New,
    Rewind(u64, bool),
    Note(Option<String>),
    Flush(Sender<()>),
}

/// What the writer has recorded: a snapshot `flush` returns. Front ends
/// learn of changes from `AgentEvent::SessionRecorded`, `StoreFailed` and
/// `StoreRecovered`; nothing else is shared with them.
#[derive(Debug, Default, Clone)]
pub struct Recorded {
    pub session: Option<SessionId>,
    /// Why the store refuses writes, while it does.
    pub error: Option<String>,
    /// Writes kept in memory until the store takes them.
    pub unsaved: usize,
    /// Whether the refusal is another process holding the write lock (worth
    /// waiting for) rather than the disk or the file refusing writes.
    pub busy: bool,
}

pub struct StoreSink {
    tx: Mutex<Sender<Job>>,
    /// The database file and the session facts, for a sub-agent's writer.
    path: Option<PathBuf>,
    info: SessionInfo,
    state: Arc<Mutex<Recorded>>,
    /// Viewing a session another cairn writes: nothing is recorded.
    read_only: std::sync::atomic::AtomicBool,
}

impl StoreSink {
    /// Starts the writer; `events` hears about store failures, recoveries
    /// and the recorded session's id.
    pub fn start(
        store: Store,
        info: SessionInfo,
        events: Option<UnboundedSender<AgentEvent>>,
    ) -> StoreSink {
        Self::start_with(store, info, events, None)
    }

    /// Starts the writer of a sub-agent's session: a child of `parent`,
    /// titled, whose store events are its parent's business.
    fn start_with(
        store: Store,
        info: SessionInfo,
        events: Option<UnboundedSender<AgentEvent>>,
        child_of: Option<(SessionId, String)>,
    ) -> StoreSink {
        let (tx, rx) = channel();
        let state = Arc::new(Mutex::new(Recorded::default()));
        let path = store.path().map(|p| p.to_path_buf());
        let writer = Writer {
            store,
            info: info.clone(),
            child_of,
            state: state.clone(),
            events,
            unsaved: VecDeque::new(),
            lock: None,
            turn: 0,
            ids: Vec::new(),
            pending_usage: None,
            last_cost: 0.0,
            started: HashMap::new(),
            partial: None,
        };
        std::thread::Builder::new()
            .name("cairn-store".into())
            .spawn(move || writer.run(rx))
            .ok();
        StoreSink {
            tx: Mutex::new(tx),
            path,
            info,
            state,
            read_only: Default::default(),
        }
    }

    fn send(&self, job: Job) {
        let read_only = self.read_only.load(std::sync::atomic::Ordering::SeqCst);
        if read_only && !matches!(job, Job::Flush(_)) {
            return;
        }
        let _ = lock(&self.tx).send(job);
    }

    /// From now on nothing is recorded (a session opened read-only).
    pub fn set_read_only(&self) {
        SessionSink::read_only(self, true);
    }

    /// Waits (at most `timeout`) until the writer has tried everything sent
    /// so far, and says what is still unsaved.
    pub fn flush_within(&self, timeout: Duration) -> Recorded {
        let (tx, rx) = channel();
        self.send(Job::Flush(tx));
        let _ = rx.recv_timeout(timeout);
        lock(&self.state).clone()
    }

    /// Waits until everything sent so far is on disk, or up to 5 s.
    pub fn flush(&self) -> Recorded {
        self.flush_within(Duration::from_secs(5))
    }
}

impl SessionSink for StoreSink {
    fn event(&self, event: &AgentEvent) {
        let wanted = matches!(
            event,
            AgentEvent::TurnStarted { .. }
                | AgentEvent::MessageAdded(_)
                | AgentEvent::PartialMessage(_)
                | AgentEvent::ResponseReset
                | AgentEvent::TurnFinished { .. }
                | AgentEvent::Usage { .. }
                | AgentEvent::ModelChanged { .. }
                | AgentEvent::ModeChanged(_)
                | AgentEvent::UndoApplied { .. }
                | AgentEvent::TitleChanged(_)
                | AgentEvent::TitleGenerated(_)
                | AgentEvent::ToolCallStarted { .. }
                | AgentEvent::ToolCallRunning { .. }
                | AgentEvent::ToolCallFinished { .. }
                | AgentEvent::Compacted {
                    summary: Some(_),
                    ..
                }
        );
        if wanted {
            self.send(Job::Event(Box::new(event.clone()), Instant::now()));
        }
    }
    fn file_versions(&self, versions: &[FileVersion]) {
        self.send(Job::Versions(versions.to_vec()));
    }
    fn lost_files(&self, lost: &[crate::store::LostFile]) {
        self.send(Job::Lost(lost.to_vec()));
    }
    fn resume(&self, session_id: &SessionId) {
        self.send(Job::Resume(session_id.clone()));
    }
    fn new_session(&self) {
        self.send(Job::New);
    }
    fn pending_note(&self, note: Option<&str>) {
        self.send(Job::Note(note.map(str::to_string)));
    }
    fn read_only(&self, on: bool) {
        self.read_only
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }
    fn rewind(&self, turn: u64, fork: bool) {
        self.send(Job::Rewind(turn, fork));
    }
    fn child(&self, title: &str) -> Option<Arc<dyn SessionSink>> {
        // The parent's session must exist first, to be linked to.
        let parent = self.flush_within(Duration::from_secs(5)).session?;
        let store = match Store::open(self.path.as_ref()?) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot record a sub-agent's session: {e}");
                return None;
            }
        };
        let info = self.info.clone();
        let child = StoreSink::start_with(store, info, None, Some((parent, title.to_string())));
        Some(Arc::new(child))
    }
    fn settle(&self) {
        self.flush();
    }
}

struct Writer {
    store: Store,
    info: SessionInfo,
    /// A sub-agent's session: its parent and its title.
    child_of: Option<(SessionId, String)>,
    state: Arc<Mutex<Recorded>>,
    events: Option<UnboundedSender<AgentEvent>>,
    /// Jobs the store refused, oldest first; later jobs queue behind them.
    unsaved: VecDeque<Job>,
    /// The recorded session's lock: one process writes a session.
    lock: Option<(SessionId, crate::store::SessionLock)>,
    turn: u64,
    /// Message ids of the session with their turns, in order.
    ids: Vec<(MessageId, u64)>,
    pending_usage: Option<(Usage, Option<f64>)>,
    last_cost: f64,
    /// When each running tool call started, for its recorded duration.
    started: HashMap<String, Instant>,
    /// The row holding the finished parts of a message still being formed.
    partial: Option<(MessageId, Role)>,
}

/// Displays larger than this (an edit of a huge file keeps the whole text
/// twice) are not kept; the resumed cell then shows the diff rebuilt from
/// the call's arguments instead.
const MAX_DISPLAY_BYTES: usize = 4 * 1024 * 1024;

fn stored_display(display: Option<&ToolDisplay>) -> Option<serde_json::Value> {
    let d = display?;
    let size: usize = (d.diffs().iter()).map(|f| f.old.len() + f.new.len()).sum();
    if size > MAX_DISPLAY_BYTES {
        return None;
    }
    serde_json::to_value(d).ok()
}

/// Whether a refused write may succeed later: the database busy, or the
/// disk or file refusing writes (full, read-only, I/O errors). A missing
/// session or unreadable stored data will not change by waiting.
fn worth_retrying(e: &StoreError) -> bool {
    use rusqlite::ErrorCode as C;
    match e {
        StoreError::Busy
        | StoreError::Open { .. }
        | StoreError::CreateDir { .. }
        | StoreError::Restore { .. } => true,
        StoreError::Sqlite(e) => matches!(
            e.sqlite_error_code(),
            Some(
                C::DiskFull
                    | C::ReadOnly
                    | C::SystemIoFailure
                    | C::CannotOpen
                    | C::PermissionDenied
                    | C::FileLockingProtocolFailed
                    | C::OutOfMemory
                    | C::DatabaseBusy
                    | C::DatabaseLocked
            )
        ),
        _ => false,
    }
}

impl Writer {
    fn run(mut self, rx: Receiver<Job>) {
        loop {
            let job = if self.unsaved.is_empty() {
                rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                rx.recv_timeout(RETRY_EVERY)
            };
            match job {
                Ok(Job::Flush(done)) => {
                    self.retry();
                    let _ = done.send(());
                }
                Ok(job) => {
                    self.unsaved.push_back(job);
                    self.retry();
                }
                Err(RecvTimeoutError::Timeout) => self.retry(),
                Err(RecvTimeoutError::Disconnected) => {
                    self.retry();
                    return;
                }
            }
        }
    }

    /// Writes the waiting jobs in order, stopping at the first refusal.
    fn retry(&mut self) {
        self.guard_file();
        let was_failing = lock(&self.state).error.is_some();
        while let Some(job) = self.unsaved.front().cloned() {
            match self.handle(job) {
                Ok(()) => {
                    self.unsaved.pop_front();
                }
                Err(e) if !worth_retrying(&e) => {
                    // Trying again cannot help (the session was deleted
                    // meanwhile, say); keep the writes behind it moving.
                    tracing::error!("session store: {e}; this write is dropped");
                    self.unsaved.pop_front();
                    self.tell(AgentEvent::Notice {
                        level: super::NoticeLevel::Error,
                        text: format!("Part of this session could not be saved: {e}"),
                    });
                }
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            }
        }
        let mut state = lock(&self.state);
        state.unsaved = 0;
        state.busy = false;
        if state.error.take().is_some() && was_failing {
            drop(state);
            tracing::info!("session store: every waiting write is saved now");
            self.tell(AgentEvent::StoreRecovered);
        }
    }

    /// The database file deleted or replaced under the open store is
    /// written back whole before anything more is written.
    fn guard_file(&mut self) {
        let state = self.store.file_state();
        if state == crate::store::FileState::Same {
            return;
        }
        let shown = self
            .store
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let text = match self.store.restore_file() {
            Ok(Some(kept)) => format!(
                "The session database {shown} was replaced while cairn ran; cairn wrote its \
                 sessions back there and kept the other file as {}.",
                kept.display()
            ),
            Ok(None) => format!(
                "The session database {shown} was deleted while cairn ran; cairn wrote it \
                 back whole from what it had open."
            ),
            Err(e) => {
                self.failed(&e);
                return;
            }
        };
        tracing::warn!("{text}");
        self.tell(AgentEvent::Notice {
            level: super::NoticeLevel::Warning,
            text,
        });
    }

    fn failed(&mut self, e: &StoreError) {
        let reason = e.to_string();
        let unsaved = self.unsaved.len();
        let changed = {
            let mut state = lock(&self.state);
            let changed = state.error.as_deref() != Some(reason.as_str());
            state.error = Some(reason.clone());
            state.unsaved = unsaved;
            state.busy = matches!(e, StoreError::Busy);
            changed
        };
        if changed {
            tracing::error!("session store: {reason} ({unsaved} writes waiting)");
            self.tell(AgentEvent::StoreFailed {
                error: reason,
                unsaved,
            });
        }
    }

    fn tell(&self, event: AgentEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    fn session(&self) -> Option<SessionId> {
        lock(&self.state).session.clone()
    }

    fn set_session(&mut self, id: Option<SessionId>) {
        if let Some(id) = &id
            && lock(&self.state).session.as_ref() != Some(id)
        {
            self.tell(AgentEvent::SessionRecorded { id: id.clone() });
        }
        self.take_lock(id.as_ref());
        lock(&self.state).session = id;
    }

    fn ensure_session(&mut self) -> Result<SessionId, StoreError> {
        if let Some(id) = self.session() {
            return Ok(id);
        }
        let id = self.store.create_session(&NewSession {
            cwd: self.info.cwd.clone(),
            project_root: Some(self.info.project_root.clone()),
            provider: self.info.provider.clone(),
            model: self.info.model.clone(),
            parent_id: self.child_of.as_ref().map(|c| c.0.clone()),
        })?;
        if let Some((_, title)) = &self.child_of {
            self.store.set_title(&id, title)?;
            self.store.mark_subagent(&id)?;
        }
        if let Some(mode) = &self.info.mode {
            self.store.set_session_mode(&id, mode)?;
        }
        self.set_session(Some(id.clone()));
        Ok(id)
    }

    fn handle(&mut self, job: Job) -> Result<(), StoreError> {
        match job {
            Job::Flush(done) => {
                let _ = done.send(());
            }
            Job::New => {
                self.partial = None;
                self.set_session(None);
                self.ids.clear();
                self.turn = 0;
                self.last_cost = 0.0;
            }
            Job::Resume(id) => {
                self.partial = None;
                let id = self.unless_open_elsewhere(id)?;
                let msgs = self.store.load_messages(&id)?;
                self.ids = msgs
                    .iter()
                    .map(|(mid, _, meta)| (*mid, meta.turn))
                    .collect();
                self.turn = self.ids.last().map(|x| x.1).unwrap_or(0);
                self.last_cost = self.store.session(&id)?.cost;
                self.set_session(Some(id));
            }
            Job::Lost(lost) => {
                let id = self.ensure_session()?;
                for l in lost {
                    self.store.record_lost_file(&id, &l)?;
                }
            }
            Job::Versions(versions) => {
                let id = self.ensure_session()?;
                for v in versions {
                    self.store
                        .record_file_version(&id, v.turn, &v.path, v.before.as_deref())?;
                }
            }
            Job::Rewind(turn, fork) => self.rewind(turn, fork)?,
            // Clearing a note never creates a session to clear it in.
            Job::Note(None) if self.session().is_none() => {}
            Job::Note(note) => {
                let id = self.ensure_session()?;
                self.store.set_pending_note(&id, note.as_deref())?;
            }
            Job::Event(ev, at) => self.event(*ev, at)?,
        }
        Ok(())
    }

    fn rewind(&mut self, turn: u64, fork: bool) -> Result<(), StoreError> {
        self.partial = None;
        let Some(id) = self.session() else {
            return Ok(());
        };
        let keep = self.ids.iter().rev().find(|(_, t)| *t < turn).map(|x| x.0);
        if fork {
            let new_id = match keep {
                Some(m) => Some(self.store.fork_session(&id, Some(m))?),
                None => None,
            };
            if let Some(n) = &new_id {
                let msgs = self.store.load_messages(n)?;
                self.ids = msgs
                    .iter()
                    .map(|(mid, _, meta)| (*mid, meta.turn))
                    .collect();
            } else {
                self.ids.clear();
            }
            self.set_session(new_id);
        } else {
            match keep {
                Some(m) => {
                    self.store.truncate_after(&id, m)?;
                    self.ids.retain(|(_, t)| *t < turn);
                }
                None => {
                    self.store.delete_session(&id)?;
                    self.ids.clear();
                    self.set_session(None);
                }
            }
        }
        self.turn = turn.saturating_sub(1);
        Ok(())
    }

    /// Removes a partly saved message that will not be completed.
    fn drop_partial(&mut self, partial: Option<(MessageId, Role)>) -> Result<(), StoreError> {
        if let Some((mid, _)) = partial {
            self.ids.retain(|(m, _)| *m != mid);
            match self.store.delete_message(mid) {
                Ok(()) | Err(StoreError::NoMessage(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn event(&mut self, ev: AgentEvent, at: Instant) -> Result<(), StoreError> {
        match ev {
            AgentEvent::TurnStarted { turn, .. } => self.turn = turn,
            // The recorded duration is the tool's own run time, without
            // the time a dialog waited for the person.
            AgentEvent::ToolCallStarted { call_id, .. }
            | AgentEvent::ToolCallRunning { call_id } => {
                self.started.insert(call_id, at);
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                display,
                ..
            } => self.tool_finished(call_id, status, display.as_ref(), at)?,
            AgentEvent::ModelChanged { model, .. } => {
                if let Some(id) = self.session() {
                    self.store.set_session_model(&id, &model)?;
                }
                self.info.model = model;
            }
            AgentEvent::ModeChanged(mode) => {
                if let Some(id) = self.session() {
                    self.store.set_session_mode(&id, mode.as_str())?;
                }
                self.info.mode = Some(mode.as_str().to_string());
            }
            AgentEvent::Usage { usage, cost, .. } => {
                let delta = cost.map(|c| {
                    let d = c - self.last_cost;
                    self.last_cost = c;
                    d
                });
                self.pending_usage = Some((usage, delta));
            }
            AgentEvent::TitleGenerated(title) => {
                if let Some(id) = self.session() {
                    self.store.set_title_if_unnamed(&id, &title)?;
                }
            }
            AgentEvent::TitleChanged(title) => {
                if let Some(id) = self.session() {
                    self.store.set_title(&id, &title)?;
                }
            }
            AgentEvent::UndoApplied { turn, .. } => {
                if let Some(id) = self.session() {
                    self.store.mark_turn_undone(&id, turn)?;
                }
            }
            AgentEvent::MessageAdded(message) => self.message_added(message)?,
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                summary: Some(summary),
                from_turn,
            } => {
                let id = self.ensure_session()?;
                let c = crate::store::NewCompaction {
                    from_turn,
                    at_count: self.ids.len() as u64,
                    summary,
                    before_tokens,
                    after_tokens,
                };
                self.store.record_compaction(&id, &c)?;
            }
            AgentEvent::PartialMessage(message) => {
                let id = self.ensure_session()?;
                match self.partial {
                    Some((mid, role)) if role == message.role => {
                        self.store.update_message(mid, &message)?;
                    }
                    stale => {
                        self.drop_partial(stale)?;
                        let meta = MessageMeta {
                            turn: self.turn,
                            model: (message.role == Role::Assistant)
                                .then(|| self.info.model.clone()),
                            ..MessageMeta::default()
                        };
                        let mid = self.store.append_message(&id, &message, &meta)?;
                        self.ids.push((mid, self.turn));
                        self.partial = Some((mid, message.role));
                    }
                }
            }
            AgentEvent::ResponseReset => {
                // A response that restarted: what was kept of it is not
                // part of the conversation.
                let stale = self.partial.take();
                self.drop_partial(stale)?;
            }
            AgentEvent::TurnFinished { turn, outcome } => {
                // Nor is one that never completed.
                let stale = self.partial.take();
                self.drop_partial(stale)?;
                self.turn_end(turn, &outcome)?;
            }
            _ => {}
        }
        Ok(())
    }
}

mod locks;
mod writes;

#[cfg(test)]
mod tests;
