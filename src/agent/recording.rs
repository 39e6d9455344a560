//! Where a session is kept as it happens. The agent hands every event to a
//! [`SessionSink`] before the interface sees it, so what is on screen is
//! already on its way to disk.

use crate::tools::state::FileVersion;

use crate::protocol::AgentEvent;

pub trait SessionSink: Send + Sync {
    /// Called for every event, in order, on the agent's task: must not block
    /// (queue the work).
    fn event(&self, event: &AgentEvent);
    /// The content files had before a turn changed them (each version
    /// names its turn).
    fn file_versions(&self, versions: &[FileVersion]);
    /// Files a turn changed that cannot be restored.
    fn lost_files(&self, _lost: &[crate::store::LostFile]) {}
    /// Continue an existing session instead of starting a new one.
    fn resume(&self, session_id: &crate::store::SessionId);
    /// The next message starts a new session.
    fn new_session(&self);
    /// The note the model is to read with this session's next prompt
    /// (`None`: it was sent), kept with the session so a resume sends it.
    fn pending_note(&self, _note: Option<&str>) {}
    /// While on, nothing is recorded (a session another cairn records).
    fn read_only(&self, _on: bool) {}
    /// The conversation returned to before `turn`: drop the later messages
    /// (in place) or continue in a copy of the history before it (fork).
    fn rewind(&self, turn: u64, fork: bool);
    /// A recorder for a sub-agent's session, a child of this one titled
    /// `title`; `None` when there is none to keep.
    fn child(&self, _title: &str) -> Option<std::sync::Arc<dyn SessionSink>> {
        None
    }
    /// Waits (bounded) until what was handed over is written.
    fn settle(&self) {}
}
