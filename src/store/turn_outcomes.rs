//! How turns that did not complete ended: cancelled, failed (with the
//! error the person read), or stopped at the turn limit.

use rusqlite::params;

use super::{SessionId, Store, StoreError};

/// The end of one turn that did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    pub turn: u64,
    /// `cancelled`, `failed` or `turn_limit`.
    pub outcome: String,
    /// The error of a failed turn; the limit of a stopped one.
    pub detail: String,
}

impl Store {
    /// Notes how `end.turn` of `session` ended (the last word counts).
    pub fn record_turn_end(
        &mut self,
        session: &SessionId,
        end: &TurnEnd,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            super::sessions::require_session(tx, session)?;
            tx.prepare_cached(
                "INSERT OR REPLACE INTO turn_outcomes (session_id, turn, outcome, detail)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![session.0, end.turn as i64, end.outcome, end.detail])?;
            Ok(())
        })
    }

    /// The turns of `session` that did not complete, in order.
    pub fn turn_ends(&self, session: &SessionId) -> Result<Vec<TurnEnd>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT turn, outcome, detail FROM turn_outcomes WHERE session_id = ?1 ORDER BY turn",
        )?;
        let rows = stmt
            .query_map([&session.0], |r| {
                Ok(TurnEnd {
                    turn: r.get::<_, i64>(0)?.max(0) as u64,
                    outcome: r.get(1)?,
                    detail: r.get(2)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;
    use crate::store::sessions::fork_title;
    use crate::store::tests::{meta, new_session};

    #[test]
    fn turn_ends_are_kept_and_a_fork_keeps_those_of_its_turns() {
        let mut store = Store::open_in_memory().unwrap();
        let id = new_session(&mut store, "/p");
        let first = store
            .append_message(&id, &Message::user_text("one"), &meta(1))
            .unwrap();
        store
            .append_message(&id, &Message::user_text("two"), &meta(2))
            .unwrap();
        let end = |turn, outcome: &str, detail: &str| TurnEnd {
            turn,
            outcome: outcome.into(),
            detail: detail.into(),
        };
        store
            .record_turn_end(&id, &end(1, "cancelled", ""))
            .unwrap();
        store
            .record_turn_end(&id, &end(2, "failed", "boom"))
            .unwrap();
        assert_eq!(
            store.turn_ends(&id).unwrap(),
            vec![end(1, "cancelled", ""), end(2, "failed", "boom")]
        );
        let fork = store.fork_session(&id, Some(first)).unwrap();
        assert_eq!(
            store.turn_ends(&fork).unwrap(),
            vec![end(1, "cancelled", "")]
        );
    }

    #[test]
    fn fork_titles_say_they_are_forks_and_differ() {
        assert_eq!(fork_title(Some("Fix the parser")), "Fix the parser (fork)");
        assert_eq!(
            fork_title(Some("Fix the parser (fork)")),
            "Fix the parser (fork 2)"
        );
        assert_eq!(fork_title(Some("X (fork 2)")), "X (fork 3)");
        assert_eq!(fork_title(None), "untitled (fork)");
    }
}
