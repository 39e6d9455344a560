//! Compactions: the summary that replaced a session's older turns. The
//! messages themselves stay (the transcript, export and rewind read them);
//! a resumed session sends the latest summary and the turns after it.

use rusqlite::params;

use super::{SessionId, Store, StoreError, now_ms};

/// A compaction as the agent reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompaction {
    /// The first turn kept verbatim; the summary stands for those before.
    pub from_turn: u64,
    /// How many messages the session had when it was compacted.
    pub at_count: u64,
    pub summary: String,
    pub before_tokens: u64,
    pub after_tokens: u64,
}

/// A recorded compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCompaction {
    pub id: i64,
    pub compaction: NewCompaction,
    pub created_at: i64,
}

impl Store {
    pub fn record_compaction(
        &mut self,
        session: &SessionId,
        c: &NewCompaction,
    ) -> Result<i64, StoreError> {
        let now = now_ms();
        self.write(|tx| {
            super::sessions::require_session(tx, session)?;
            tx.prepare_cached(
                "INSERT INTO compactions (session_id, turn, at_count, summary, before_tokens,
                     after_tokens, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                session.0,
                c.from_turn as i64,
                c.at_count as i64,
                c.summary,
                c.before_tokens as i64,
                c.after_tokens as i64,
                now
            ])?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// The compactions of `session`, oldest first.
    pub fn compactions(&self, session: &SessionId) -> Result<Vec<StoredCompaction>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, turn, at_count, summary, before_tokens, after_tokens, created_at
             FROM compactions WHERE session_id = ?1 ORDER BY id",
        )?;
        let n = |v: i64| v.max(0) as u64;
        let rows = stmt
            .query_map([&session.0], |r| {
                Ok(StoredCompaction {
                    id: r.get(0)?,
                    compaction: NewCompaction {
                        from_turn: n(r.get(1)?),
                        at_count: n(r.get(2)?),
                        summary: r.get(3)?,
                        before_tokens: n(r.get(4)?),
                        after_tokens: n(r.get(5)?),
                    },
                    created_at: r.get(6)?,
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
    use crate::store::tests::{meta, new_session};

    fn compaction(from_turn: u64, summary: &str) -> NewCompaction {
        NewCompaction {
            from_turn,
            at_count: from_turn * 2,
            summary: summary.into(),
            before_tokens: 9_000,
            after_tokens: 900,
        }
    }

    #[test]
    fn compactions_survive_reopening_and_follow_rewind_and_fork() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut store = Store::open(&path).unwrap();
        let id = new_session(&mut store, "/p");
        let mut ids = Vec::new();
        for turn in 1..=6 {
            let m = Message::user_text(format!("prompt {turn}"));
            ids.push(store.append_message(&id, &m, &meta(turn)).unwrap());
        }
        store.record_compaction(&id, &compaction(3, "one")).unwrap();
        store.record_compaction(&id, &compaction(5, "two")).unwrap();
        drop(store);
        let mut store = Store::open(&path).unwrap();
        let got: Vec<_> = store
            .compactions(&id)
            .unwrap()
            .into_iter()
            .map(|c| c.compaction)
            .collect();
        assert_eq!(got, vec![compaction(3, "one"), compaction(5, "two")]);

        // A fork that keeps turns 1..=4 keeps the first compaction only.
        let fork = store.fork_session(&id, Some(ids[3])).unwrap();
        let kept: Vec<_> = store.compactions(&fork).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].compaction.summary, "one");

        // Rewinding to before turn 3 (keeping 1..=2) drops both: turn 3
        // was the first the summary kept, so the whole history is back.
        store.truncate_after(&id, ids[1]).unwrap();
        assert!(store.compactions(&id).unwrap().is_empty());
    }
}
