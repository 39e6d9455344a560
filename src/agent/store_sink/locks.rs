//! The store writer's side of "one session, one writer": the lock of the
//! session being recorded, and what happens when another cairn holds it.
//! Also how turns that did not complete are recorded.

use super::{AgentEvent, StoreError, Writer};
use crate::protocol::TurnOutcome;
use crate::store::{SessionId, TurnEnd};

impl Writer {
    /// `id`, or a fork of it when another cairn records it: two writers
    /// would interleave their turns into one history. The front ends ask
    /// before resuming; this catches the other ways in (the session
    /// browser, two resumes racing).
    pub(super) fn unless_open_elsewhere(&mut self, id: SessionId) -> Result<SessionId, StoreError> {
        let held = match self.store.path() {
            Some(db) if self.lock.as_ref().map(|l| &l.0) != Some(&id) => {
                crate::store::SessionLock::holder(db, &id).ok().flatten()
            }
            _ => None,
        };
        let Some(held) = held else {
            return Ok(id);
        };
        let fork = self.store.fork_session(&id, None)?;
        self.tell(AgentEvent::Notice {
            level: crate::protocol::NoticeLevel::Warning,
            text: format!(
                "Session {id}: {held}, so this conversation continues in a copy of it \
                 (session {fork})."
            ),
        });
        Ok(fork)
    }

    /// Holds the lock of the session being recorded (and only of it). The
    /// front ends check before resuming; a session locked anyway (two
    /// resumes racing) is reported, not silently interleaved.
    pub(super) fn take_lock(&mut self, id: Option<&SessionId>) {
        if self.lock.as_ref().map(|l| &l.0) == id {
            return;
        }
        self.lock = None;
        let (Some(id), Some(db)) = (id, self.store.path()) else {
            return;
        };
        match crate::store::SessionLock::acquire(db, id) {
            Ok(Ok(l)) => self.lock = Some((id.clone(), l)),
            Ok(Err(held)) => self.tell(AgentEvent::Notice {
                level: crate::protocol::NoticeLevel::Warning,
                text: format!(
                    "Session {id}: {held}; turns from both will be recorded into it. \
                     Fork it (/rewind or `cairn -c` again) to keep them apart."
                ),
            }),
            Err(e) => tracing::warn!("cannot lock session {id}: {e}"),
        }
    }

    /// A cancelled, failed or limited turn, so the resumed transcript shows
    /// it as it was shown live.
    pub(super) fn turn_end(&mut self, turn: u64, outcome: &TurnOutcome) -> Result<(), StoreError> {
        let (outcome, detail) = match outcome {
            TurnOutcome::Completed => return Ok(()),
            TurnOutcome::Cancelled => ("cancelled", String::new()),
            TurnOutcome::Failed { error } => ("failed", error.clone()),
            TurnOutcome::TurnLimit { limit } => ("turn_limit", limit.to_string()),
        };
        // A turn that failed before anything was recorded has no session.
        let Some(id) = self.session() else {
            return Ok(());
        };
        self.store.record_turn_end(
            &id,
            &TurnEnd {
                turn,
                outcome: outcome.into(),
                detail,
            },
        )
    }
}
