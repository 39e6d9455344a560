//! Messages and file versions of a session.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use super::search::message_search_text;
use super::sessions::recount;
use super::{
    MessageId, MessageMeta, MessageStatus, SessionId, Store, StoreError, StoredFileVersion,
    bad_json, now_ms, path_text,
};
use crate::conversation::Usage;
use crate::conversation::{Message, Role};

/// How much of the first prompt the browser keeps as a stand-in title.
const FIRST_PROMPT_CHARS: usize = 200;

fn role_text(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn parse_role(s: &str) -> Result<Role, StoreError> {
    match s {
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        other => Err(StoreError::BadData {
            what: "a message role".into(),
            detail: format!("unknown role {other:?}"),
        }),
    }
}

/// The first prompt as one line, shortened on a character boundary.
fn prompt_line(message: &Message) -> Option<String> {
    if message.role != Role::User {
        return None;
    }
    let text = message.text();
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    let mut out: String = line.chars().take(FIRST_PROMPT_CHARS).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    Some(out)
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| bad_json("a message being saved", e))
}

impl Store {
    /// Appends a message at the end of a session in one small transaction,
    /// and updates the session's activity time, counters and totals.
    pub fn append_message(
        &mut self,
        session: &SessionId,
        message: &Message,
        meta: &MessageMeta,
    ) -> Result<MessageId, StoreError> {
        let parts = to_json(&message.parts)?;
        let usage = meta.usage.as_ref().map(to_json).transpose()?;
        let body = message_search_text(&message.parts);
        let first_prompt = prompt_line(message);
        let now = now_ms();
        let (input, output) = meta
            .usage
            .as_ref()
            .map(|u| (u.input_tokens as i64, u.output_tokens as i64))
            .unwrap_or((0, 0));
        self.write(|tx| {
            let changed = tx
                .prepare_cached(
                    "UPDATE sessions SET updated_at = max(updated_at, ?2),
                         message_count = message_count + 1,
                         input_tokens = input_tokens + ?3,
                         output_tokens = output_tokens + ?4,
                         cost = cost + ?5,
                         first_prompt = coalesce(first_prompt, ?6)
                     WHERE id = ?1",
                )?
                .execute(params![
                    session.0,
                    now,
                    input,
                    output,
                    meta.cost.unwrap_or(0.0),
                    first_prompt
                ])?;
            if changed == 0 {
                return Err(StoreError::NoSession(session.0.clone()));
            }
            tx.prepare_cached(
                "INSERT INTO messages (session_id, seq, role, parts, created_at, model, usage,
                     turn, status, cost, body)
                 VALUES (?1,
                     (SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?1),
                     ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                session.0,
                role_text(message.role),
                parts,
                now,
                meta.model,
                usage,
                meta.turn as i64,
                meta.status.as_str(),
                meta.cost,
                body,
            ])?;
            Ok(MessageId(tx.last_insert_rowid()))
        })
    }

    /// Replaces a message's parts, e.g. when a streamed part finished after
    /// the message was first saved. The search index follows.
    pub fn update_message(&mut self, id: MessageId, message: &Message) -> Result<(), StoreError> {
        let parts = to_json(&message.parts)?;
        let body = message_search_text(&message.parts);
        let now = now_ms();
        self.write(|tx| {
            let session: String = tx
                .prepare_cached(
                    "UPDATE messages SET role = ?2, parts = ?3, body = ?4 WHERE id = ?1
                     RETURNING session_id",
                )?
                .query_row(params![id.0, role_text(message.role), parts, body], |r| {
                    r.get(0)
                })
                .optional()?
                .ok_or(StoreError::NoMessage(id.0))?;
            tx.prepare_cached(
                "UPDATE sessions SET updated_at = max(updated_at, ?2) WHERE id = ?1",
            )?
            .execute(params![session, now])?;
            Ok(())
        })
    }

    /// Removes one message (a partly saved one that never completed); the
    /// session's counters and the search index follow.
    pub fn delete_message(&mut self, id: MessageId) -> Result<(), StoreError> {
        self.write(|tx| {
            let session: String = tx
                .prepare_cached("DELETE FROM messages WHERE id = ?1 RETURNING session_id")?
                .query_row([id.0], |r| r.get(0))
                .optional()?
                .ok_or(StoreError::NoMessage(id.0))?;
            super::sessions::recount(tx, &SessionId(session))?;
            Ok(())
        })
    }

    /// Sets the usage and cost of a message whose exchange finished after it
    /// was appended; the session's totals change by the difference.
    pub fn record_usage(
        &mut self,
        id: MessageId,
        usage: &Usage,
        cost: Option<f64>,
    ) -> Result<(), StoreError> {
        let json = to_json(usage)?;
        self.write(|tx| {
            let old: Option<(String, Option<String>, Option<f64>)> = tx
                .query_row(
                    "SELECT session_id, usage, cost FROM messages WHERE id = ?1",
                    [id.0],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let (session, old_usage, old_cost) = old.ok_or(StoreError::NoMessage(id.0))?;
            let old_usage: Usage = match old_usage {
                Some(s) => serde_json::from_str(&s)
                    .map_err(|e| bad_json(format!("usage of message {}", id.0), e))?,
                None => Usage::default(),
            };
            tx.execute(
                "UPDATE messages SET usage = ?2, cost = ?3 WHERE id = ?1",
                params![id.0, json, cost],
            )?;
            tx.execute(
                "UPDATE sessions SET input_tokens = input_tokens + ?2,
                     output_tokens = output_tokens + ?3, cost = cost + ?4 WHERE id = ?1",
                params![
                    session,
                    usage.input_tokens as i64 - old_usage.input_tokens as i64,
                    usage.output_tokens as i64 - old_usage.output_tokens as i64,
                    cost.unwrap_or(0.0) - old_cost.unwrap_or(0.0),
                ],
            )?;
            Ok(())
        })
    }

    /// A session's messages in order, undone ones included (see
    /// [`MessageMeta::status`]).
    pub fn load_messages(
        &self,
        session: &SessionId,
    ) -> Result<Vec<(MessageId, Message, MessageMeta)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, role, parts, model, usage, turn, status, cost FROM messages
             WHERE session_id = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query([&session.0])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let role = parse_role(r.get_ref(1)?.as_str()?)?;
            let parts = serde_json::from_str(r.get_ref(2)?.as_str()?)
                .map_err(|e| bad_json(format!("message {id}"), e))?;
            let usage = match r.get_ref(4)?.as_str_or_null()? {
                Some(s) => Some(
                    serde_json::from_str(s)
                        .map_err(|e| bad_json(format!("usage of message {id}"), e))?,
                ),
                None => None,
            };
            let meta = MessageMeta {
                model: r.get(3)?,
                usage,
                cost: r.get(7)?,
                turn: r.get::<_, i64>(5)?.max(0) as u64,
                status: MessageStatus::parse(r.get_ref(6)?.as_str()?),
            };
            out.push((MessageId(id), Message { role, parts }, meta));
        }
        if out.is_empty() {
            // Tell "no such session" apart from "a session with no messages".
            self.session(session)?;
        }
        Ok(out)
    }

    /// Rewinds a session in place: drops every message after `keep` (which
    /// stays), and the file versions of turns no message belongs to any more.
    pub fn truncate_after(
        &mut self,
        session: &SessionId,
        keep: MessageId,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        self.write(|tx| {
            let found: Option<(String, i64)> = tx
                .query_row(
                    "SELECT session_id, seq FROM messages WHERE id = ?1",
                    [keep.0],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let (owner, seq) = found.ok_or(StoreError::NoMessage(keep.0))?;
            if owner != session.0 {
                return Err(StoreError::WrongSession {
                    message: keep.0,
                    session: session.0.clone(),
                });
            }
            tx.execute(
                "DELETE FROM messages WHERE session_id = ?1 AND seq > ?2",
                params![session.0, seq],
            )?;
            for (table, _, _) in super::sessions::PER_TURN_TABLES {
                tx.execute(
                    &format!(
                        "DELETE FROM {table} WHERE session_id = ?1 AND turn >
                             (SELECT coalesce(max(turn), -1) FROM messages WHERE session_id = ?1)"
                    ),
                    [&session.0],
                )?;
            }
            recount(tx, session)?;
            tx.execute(
                "UPDATE sessions SET updated_at = max(updated_at, ?2) WHERE id = ?1",
                params![session.0, now],
            )?;
            Ok(())
        })
    }

    /// Marks every message of `turn` as undone. Returns how many changed.
    pub fn mark_turn_undone(
        &mut self,
        session: &SessionId,
        turn: u64,
    ) -> Result<usize, StoreError> {
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE messages SET status = 'undone' WHERE session_id = ?1 AND turn = ?2",
                params![session.0, turn as i64],
            )?;
            Ok(n)
        })
    }

    /// Keeps the content `path` had before a tool of `turn` changed it;
    /// `None` when the file did not exist yet.
    pub fn record_file_version(
        &mut self,
        session: &SessionId,
        turn: u64,
        path: &Path,
        content: Option<&[u8]>,
    ) -> Result<i64, StoreError> {
        let now = now_ms();
        self.write(|tx| {
            super::sessions::require_session(tx, session)?;
            tx.prepare_cached(
                "INSERT INTO file_versions (session_id, turn, path, content, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                session.0,
                turn as i64,
                path_text(path),
                content,
                now
            ])?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// The versions recorded during `turn`, oldest first: to undo the turn,
    /// restore them newest first (or the first one per path).
    pub fn file_versions(
        &self,
        session: &SessionId,
        turn: u64,
    ) -> Result<Vec<StoredFileVersion>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, turn, path, content, created_at FROM file_versions
             WHERE session_id = ?1 AND turn = ?2 ORDER BY id",
        )?;
        let rows = stmt
            .query_map(params![session.0, turn as i64], |r| {
                Ok(StoredFileVersion {
                    id: r.get(0)?,
                    session_id: session.clone(),
                    turn: r.get::<_, i64>(1)?.max(0) as u64,
                    path: PathBuf::from(r.get::<_, String>(2)?),
                    content: r.get(3)?,
                    created_at: r.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}
