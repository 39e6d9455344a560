//! Records a session into the SQLite store on a writer thread of its own,
//! so the agent never waits on the disk. Each message is committed when it
//! is added, so a crash loses at most the response being streamed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use super::events::AgentEvent;
use super::recording::SessionSink;
use crate::conversation::Role;
use crate::llm::Usage;
use crate::store::{MessageId, MessageMeta, NewSession, SessionId, Store, StoreError, ToolRun};
use crate::sync::lock;
use crate::tools::ToolDisplay;
use crate::tools::state::FileVersion;
use tokio::sync::mpsc::UnboundedSender;

/// What a new session is created with.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub cwd: PathBuf,
    pub project_root: PathBuf,
    pub provider: String,
    pub model: String,
}

enum Job {
    /// An event and when the agent sent it (tool durations are measured
    /// from these, not from when the writer got to them).
    Event(Box<AgentEvent>, Instant),
    Versions(Vec<FileVersion>),
    Lost(Vec<crate::store::LostFile>),
    Resume(SessionId),
    New,
    Rewind(u64, bool),
    Flush(Sender<()>),
    /// Where to report the recorded session and store failures.
    Attach(UnboundedSender<AgentEvent>),
    Recorded(Sender<Recorded>),
}

/// What the writer has recorded so far (a snapshot; front ends learn it
/// from `AgentEvent::SessionRecorded` and `AgentEvent::StoreFailed`).
#[derive(Debug, Default, Clone)]
pub struct Recorded {
    pub session: Option<SessionId>,
    /// The last error writing to the store.
    pub error: Option<String>,
}

pub struct StoreSink {
    tx: Mutex<Sender<Job>>,
}

impl StoreSink {
    pub fn start(store: Store, info: SessionInfo) -> StoreSink {
        let (tx, rx) = channel();
        let writer = Writer {
            store,
            info,
            recorded: Recorded::default(),
            events: None,
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
        StoreSink { tx: Mutex::new(tx) }
    }

    fn send(&self, job: Job) {
        let _ = lock(&self.tx).send(job);
    }

    /// What has been recorded once everything sent so far is on disk.
    pub fn recorded(&self) -> Recorded {
        let (tx, rx) = channel();
        self.send(Job::Recorded(tx));
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .unwrap_or_default()
    }

    /// Waits until everything sent so far is on disk.
    pub fn flush(&self) {
        let (tx, rx) = channel();
        self.send(Job::Flush(tx));
        let _ = rx.recv_timeout(std::time::Duration::from_secs(5));
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
                | AgentEvent::UndoApplied { .. }
                | AgentEvent::TitleChanged(_)
                | AgentEvent::TitleGenerated(_)
                | AgentEvent::ToolCallStarted { .. }
                | AgentEvent::ToolCallFinished { .. }
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
    fn rewind(&self, turn: u64, fork: bool) {
        self.send(Job::Rewind(turn, fork));
    }
    fn attach(&self, events: UnboundedSender<AgentEvent>) {
        self.send(Job::Attach(events));
    }
}

struct Writer {
    store: Store,
    info: SessionInfo,
    recorded: Recorded,
    events: Option<UnboundedSender<AgentEvent>>,
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
    if let ToolDisplay::Diff(crate::diff::FileDiff { old, new, .. }) = d
        && old.len() + new.len() > MAX_DISPLAY_BYTES
    {
        return None;
    }
    serde_json::to_value(d).ok()
}

impl Writer {
    fn run(mut self, rx: Receiver<Job>) {
        while let Ok(job) = rx.recv() {
            if let Err(e) = self.handle(job) {
                tracing::error!("session store: {e}");
                self.recorded.error = Some(e.to_string());
                self.report(AgentEvent::StoreFailed(e.to_string()));
            }
        }
    }

    fn session(&self) -> Option<SessionId> {
        self.recorded.session.clone()
    }

    fn set_session(&mut self, id: Option<SessionId>) {
        if self.recorded.session != id {
            self.report(AgentEvent::SessionRecorded(id.clone()));
        }
        self.recorded.session = id;
    }

    fn report(&self, event: AgentEvent) {
        if let Some(events) = &self.events {
            // The front end may be gone (quitting); recording carries on.
            let _ = events.send(event);
        }
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
            parent_id: None,
        })?;
        self.set_session(Some(id.clone()));
        Ok(id)
    }

    fn handle(&mut self, job: Job) -> Result<(), StoreError> {
        match job {
            Job::Flush(done) => {
                let _ = done.send(());
            }
            Job::Attach(events) => self.events = Some(events),
            Job::Recorded(answer) => {
                let _ = answer.send(self.recorded.clone());
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
            AgentEvent::ToolCallStarted { call_id, .. } => {
                self.started.insert(call_id, at);
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                display,
                ..
            } => {
                let elapsed_ms = self
                    .started
                    .remove(&call_id)
                    .map(|t| at.saturating_duration_since(t).as_millis() as u64);
                let id = self.ensure_session()?;
                self.store.record_tool_run(
                    &id,
                    &ToolRun {
                        call_id,
                        turn: self.turn,
                        status,
                        display: stored_display(display.as_ref()),
                        elapsed_ms,
                    },
                )?;
            }
            AgentEvent::ModelChanged { model, .. } => self.info.model = model,
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
            AgentEvent::MessageAdded(message) => {
                let id = self.ensure_session()?;
                let mut meta = MessageMeta {
                    turn: self.turn,
                    ..MessageMeta::default()
                };
                if message.role == Role::Assistant {
                    meta.model = Some(self.info.model.clone());
                    if let Some((usage, cost)) = self.pending_usage.take() {
                        meta.usage = Some(usage);
                        meta.cost = cost;
                    }
                }
                match self.partial.take() {
                    // Complete the row its finished parts were saved in.
                    Some((mid, role)) if role == message.role => {
                        self.store.update_message(mid, &message)?;
                        if let Some(usage) = &meta.usage {
                            self.store.record_usage(mid, usage, meta.cost)?;
                        }
                    }
                    stale => {
                        self.drop_partial(stale)?;
                        let mid = self.store.append_message(&id, &message, &meta)?;
                        self.ids.push((mid, self.turn));
                    }
                }
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
            AgentEvent::ResponseReset | AgentEvent::TurnFinished { .. } => {
                // A response that restarted or never completed: what was
                // kept of it is not part of the conversation.
                let stale = self.partial.take();
                self.drop_partial(stale)?;
            }
            _ => {}
        }
        Ok(())
    }
}
