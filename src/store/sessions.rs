//! Sessions: creating, listing, naming, forking and deleting them.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, Row, params};

use super::{
    ListFilter, MessageId, NewSession, SessionId, SessionSummary, Store, StoreError, now_ms,
    path_text,
};

pub(crate) const SUMMARY_COLUMNS: &str = "id, title, cwd, project_root, provider, model, \
     created_at, updated_at, input_tokens, output_tokens, cost, parent_id, message_count, \
     first_prompt, subagent, mode, pending_note";

pub(crate) fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<SessionSummary> {
    Ok(SessionSummary {
        id: SessionId(r.get(0)?),
        title: r.get(1)?,
        cwd: PathBuf::from(r.get::<_, String>(2)?),
        project_root: r.get::<_, Option<String>>(3)?.map(PathBuf::from),
        provider: r.get(4)?,
        model: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        input_tokens: r.get::<_, i64>(8)?.max(0) as u64,
        output_tokens: r.get::<_, i64>(9)?.max(0) as u64,
        cost: r.get(10)?,
        parent_id: r.get::<_, Option<String>>(11)?.map(SessionId),
        message_count: r.get::<_, i64>(12)?.max(0) as u64,
        first_prompt: r.get(13)?,
        subagent: r.get::<_, i64>(14)? != 0,
        mode: r.get(15)?,
        pending_note: r.get(16)?,
    })
}

impl Store {
    pub fn create_session(&mut self, new: &NewSession) -> Result<SessionId, StoreError> {
        let id = SessionId(uuid::Uuid::now_v7().hyphenated().to_string());
        let now = now_ms();
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO sessions (id, cwd, project_root, provider, model, created_at,
                     updated_at, parent_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
            )?
            .execute(params![
                id.0,
                path_text(&new.cwd),
                new.project_root.as_deref().map(path_text),
                new.provider,
                new.model,
                now,
                new.parent_id.as_ref().map(|p| p.0.as_str()),
            ])?;
            Ok(())
        })?;
        Ok(id)
    }

    /// One session's summary.
    pub fn session(&self, id: &SessionId) -> Result<SessionSummary, StoreError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM sessions WHERE id = ?1"
            ))?
            .query_row([&id.0], summary_from_row)
            .optional()?
            .ok_or_else(|| StoreError::NoSession(id.0.clone()))
    }

    /// Sessions, most recently active first.
    pub fn list_sessions(
        &self,
        filter: &ListFilter<'_>,
    ) -> Result<Vec<SessionSummary>, StoreError> {
        let limit = if filter.limit == 0 {
            -1
        } else {
            filter.limit as i64
        };
        let offset = filter.offset as i64;
        // Two statements rather than `?1 IS NULL OR ...`, so each can use its
        // own index and the first page never sorts the whole table.
        let rows = match filter.project_root {
            Some(root) => {
                let mut stmt = self.conn.prepare_cached(&format!(
                    "SELECT {SUMMARY_COLUMNS} FROM sessions WHERE project_root = ?1
                     ORDER BY updated_at DESC, id DESC LIMIT ?2 OFFSET ?3"
                ))?;
                stmt.query_map(params![path_text(root), limit, offset], summary_from_row)?
                    .collect::<Result<Vec<_>, _>>()?
            }
            None => {
                let mut stmt = self.conn.prepare_cached(&format!(
                    "SELECT {SUMMARY_COLUMNS} FROM sessions
                     ORDER BY updated_at DESC, id DESC LIMIT ?1 OFFSET ?2"
                ))?;
                stmt.query_map(params![limit, offset], summary_from_row)?
                    .collect::<Result<Vec<_>, _>>()?
            }
        };
        Ok(rows)
    }

    /// The most recently active session of a project, for `--continue`;
    /// never a sub-agent's.
    pub fn latest_session(
        &self,
        project_root: &Path,
    ) -> Result<Option<SessionSummary>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM sessions WHERE project_root = ?1 AND subagent = 0
                 ORDER BY updated_at DESC, id DESC LIMIT 1"
            ))?
            .query_row([path_text(project_root)], summary_from_row)
            .optional()?)
    }

    /// Marks `id` as the session of a sub-agent (its parent is its
    /// `parent_id`).
    pub fn mark_subagent(&mut self, id: &SessionId) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached("UPDATE sessions SET subagent = 1 WHERE id = ?1")?
                .execute([&id.0])?;
            Ok(())
        })
    }

    /// Finds the one session whose id starts with `prefix` (case and
    /// surrounding spaces ignored).
    pub fn resolve_id(&self, prefix: &str) -> Result<SessionId, StoreError> {
        let wanted = prefix.trim().to_ascii_lowercase();
        if wanted.is_empty() || !wanted.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(StoreError::InvalidPrefix(prefix.to_string()));
        }
        // GLOB is case-sensitive, so it can use the primary-key index; the
        // pattern holds only hex digits and dashes, none special to GLOB.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM sessions WHERE id GLOB ?1 || '*' ORDER BY id LIMIT 6",
        )?;
        let found: Vec<String> = stmt
            .query_map([&wanted], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        match found.len() {
            0 => Err(StoreError::NoMatch(wanted)),
            1 => Ok(SessionId(found.into_iter().next().unwrap_or_default())),
            _ => Err(StoreError::Ambiguous {
                prefix: wanted,
                candidates: found,
            }),
        }
    }

    pub fn set_title(&mut self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        let title = title.trim();
        let title = (!title.is_empty()).then_some(title);
        self.write(|tx| {
            let n = tx
                .prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1")?
                .execute(params![id.0, title])?;
            if n == 0 {
                return Err(StoreError::NoSession(id.0.clone()));
            }
            Ok(())
        })
    }

    /// The model a session goes on with, after a `/model` switch.
    pub fn set_session_model(&mut self, id: &SessionId, model: &str) -> Result<(), StoreError> {
        self.set_column(id, "model", Some(model))
    }

    /// The permission mode a session goes on with (`Mode::as_str`).
    pub fn set_session_mode(&mut self, id: &SessionId, mode: &str) -> Result<(), StoreError> {
        self.set_column(id, "mode", Some(mode))
    }

    /// The note the model is to read with the session's next prompt, or
    /// none once it was sent.
    pub fn set_pending_note(
        &mut self,
        id: &SessionId,
        note: Option<&str>,
    ) -> Result<(), StoreError> {
        self.set_column(id, "pending_note", note)
    }

    fn set_column(
        &mut self,
        id: &SessionId,
        column: &'static str,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached(&format!("UPDATE sessions SET {column} = ?2 WHERE id = ?1"))?
                .execute(params![id.0, value])?;
            Ok(())
        })
    }

    /// A generated title: set only while the session has none, so it never
    /// replaces the person's own name for it.
    pub fn set_title_if_unnamed(&mut self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        let title = title.trim();
        if title.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            tx.prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title IS NULL")?
                .execute(params![id.0, title])?;
            Ok(())
        })
    }

    /// The person's rename; the same as [`Store::set_title`].
    pub fn rename(&mut self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        self.set_title(id, title)
    }

    /// Deletes a session with its messages, file versions and index entries.
    /// Its forks stay, no longer pointing at a parent.
    pub fn delete_session(&mut self, id: &SessionId) -> Result<(), StoreError> {
        self.write(|tx| {
            let n = tx
                .prepare_cached("DELETE FROM sessions WHERE id = ?1")?
                .execute([&id.0])?;
            if n == 0 {
                return Err(StoreError::NoSession(id.0.clone()));
            }
            Ok(())
        })
    }

    /// A new session with a copy of `id`'s history up to and including
    /// `up_to` (all of it when `None`), and the file versions of the turns
    /// it keeps. The copy's `parent_id` is `id`.
    pub fn fork_session(
        &mut self,
        id: &SessionId,
        up_to: Option<MessageId>,
    ) -> Result<SessionId, StoreError> {
        let new_id = SessionId(uuid::Uuid::now_v7().hyphenated().to_string());
        let now = now_ms();
        self.write(|tx| {
            let last_seq: i64 = match up_to {
                Some(m) => tx
                    .query_row(
                        "SELECT session_id, seq FROM messages WHERE id = ?1",
                        [m.0],
                        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
                    )
                    .optional()?
                    .map(|(sid, seq)| {
                        if sid == id.0 {
                            Ok(seq)
                        } else {
                            Err(StoreError::WrongSession {
                                message: m.0,
                                session: id.0.clone(),
                            })
                        }
                    })
                    .ok_or(StoreError::NoMessage(m.0))??,
                None => i64::MAX,
            };
            let n = tx.execute(
                "INSERT INTO sessions (id, title, cwd, project_root, provider, model,
                     created_at, updated_at, parent_id, first_prompt, mode)
                 SELECT ?2, title, cwd, project_root, provider, model, ?3, ?3, id, first_prompt,
                     mode
                 FROM sessions WHERE id = ?1",
                params![id.0, new_id.0, now],
            )?;
            if n == 0 {
                return Err(StoreError::NoSession(id.0.clone()));
            }
            tx.execute(
                "INSERT INTO messages (session_id, seq, role, parts, created_at, model, usage,
                     turn, status, cost, body)
                 SELECT ?2, seq, role, parts, created_at, model, usage, turn, status, cost, body
                 FROM messages WHERE session_id = ?1 AND seq <= ?3 ORDER BY seq",
                params![id.0, new_id.0, last_seq],
            )?;
            // What belongs to the turns the copy keeps comes along.
            for (table, columns, order) in PER_TURN_TABLES {
                tx.execute(
                    &format!(
                        "INSERT INTO {table} (session_id, {columns})
                         SELECT ?2, {columns} FROM {table} WHERE session_id = ?1 AND turn <=
                             (SELECT coalesce(max(turn), -1) FROM messages WHERE session_id = ?2)
                         ORDER BY {order}"
                    ),
                    params![id.0, new_id.0],
                )?;
            }
            recount(tx, &new_id)?;
            let base: Option<String> = tx.query_row(
                "SELECT coalesce(title, substr(first_prompt, 1, 60)) FROM sessions WHERE id = ?1",
                [&id.0],
                |r| r.get(0),
            )?;
            tx.execute(
                "UPDATE sessions SET title = ?2 WHERE id = ?1",
                params![new_id.0, fork_title(base.as_deref())],
            )?;
            Ok(())
        })?;
        Ok(new_id)
    }
}

/// A fork's title says it is one: `Fix the parser (fork)`, then `(fork 2)`
/// for a fork of that, so no two read the same.
pub fn fork_title(base: Option<&str>) -> String {
    let base = crate::text::first_line(base.unwrap_or("")).trim();
    let base = if base.is_empty() { "untitled" } else { base };
    if let Some(stem) = base.strip_suffix(" (fork)") {
        return format!("{stem} (fork 2)");
    }
    if let Some((stem, n)) = base
        .strip_suffix(')')
        .and_then(|b| b.rsplit_once(" (fork "))
        && let Ok(n) = n.parse::<u32>()
    {
        return format!("{stem} (fork {})", n.saturating_add(1));
    }
    format!("{base} (fork)")
}

/// Tables whose rows belong to one turn of a session: name, columns besides
/// `session_id`, and the order rows were written in. A fork copies the kept
/// turns' rows in that order (undo restores the earliest version of a
/// file); a rewind in place drops the rest.
pub(crate) const PER_TURN_TABLES: [(&str, &str, &str); 5] = [
    ("file_versions", "turn, path, content, created_at", "id"),
    (
        "tool_runs",
        "call_id, turn, status, display, elapsed_ms",
        "call_id",
    ),
    ("lost_files", "turn, path, why", "id"),
    ("turn_outcomes", "turn, outcome, detail", "turn"),
    // A compaction belongs to the first turn it kept: rewinding to that
    // turn or earlier returns to the whole history.
    (
        "compactions",
        "turn, at_count, summary, before_tokens, after_tokens, created_at",
        "id",
    ),
];

/// `NoSession` unless `session` exists, checked inside a write transaction.
pub(crate) fn require_session(
    tx: &rusqlite::Transaction<'_>,
    session: &SessionId,
) -> Result<(), StoreError> {
    let exists = tx
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .exists([&session.0])?;
    if exists {
        Ok(())
    } else {
        Err(StoreError::NoSession(session.0.clone()))
    }
}

/// Recomputes a session's counters from its messages, after rows were copied
/// or removed in bulk.
pub(crate) fn recount(tx: &rusqlite::Transaction<'_>, id: &SessionId) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE sessions SET
             message_count = (SELECT count(*) FROM messages WHERE session_id = ?1),
             input_tokens = (SELECT coalesce(sum(json_extract(usage, '$.input_tokens')), 0)
                             FROM messages WHERE session_id = ?1),
             output_tokens = (SELECT coalesce(sum(json_extract(usage, '$.output_tokens')), 0)
                              FROM messages WHERE session_id = ?1),
             cost = (SELECT coalesce(sum(cost), 0) FROM messages WHERE session_id = ?1)
         WHERE id = ?1",
        [&id.0],
    )?;
    Ok(())
}
