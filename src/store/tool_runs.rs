//! How each tool call ended, as the interface showed it. The messages keep
//! what the model was told; this keeps what the person saw (the status word,
//! an edit's diff against the whole file, the time it took), so a resumed
//! transcript is drawn as it was left.

use std::collections::HashMap;

use rusqlite::params;

use super::{SessionId, Store, StoreError, bad_json};
use crate::conversation::ToolStatus;

/// One finished tool call. `display` is the interface's own serialised
/// form; the store does not interpret it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    pub call_id: String,
    pub turn: u64,
    pub status: ToolStatus,
    pub display: Option<serde_json::Value>,
    pub elapsed_ms: Option<u64>,
}

/// A file a turn changed whose earlier content was not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostFile {
    pub turn: u64,
    pub path: std::path::PathBuf,
    pub why: String,
}

impl Store {
    /// Notes that `lost.path`, changed in `lost.turn`, cannot be restored.
    pub fn record_lost_file(
        &mut self,
        session: &SessionId,
        lost: &LostFile,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            super::sessions::require_session(tx, session)?;
            tx.prepare_cached(
                "INSERT INTO lost_files (session_id, turn, path, why) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                session.0,
                lost.turn as i64,
                lost.path.to_string_lossy(),
                lost.why
            ])?;
            Ok(())
        })
    }

    /// The files of `session` that cannot be restored, oldest first.
    pub fn lost_files(&self, session: &SessionId) -> Result<Vec<LostFile>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT turn, path, why FROM lost_files WHERE session_id = ?1 ORDER BY id",
        )?;
        let rows = stmt
            .query_map([&session.0], |r| {
                Ok(LostFile {
                    turn: r.get::<_, i64>(0)?.max(0) as u64,
                    path: std::path::PathBuf::from(r.get::<_, String>(1)?),
                    why: r.get(2)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Records (or replaces) how `run.call_id` ended in `session`.
    pub fn record_tool_run(
        &mut self,
        session: &SessionId,
        run: &ToolRun,
    ) -> Result<(), StoreError> {
        let display = match &run.display {
            Some(v) => {
                Some(serde_json::to_string(v).map_err(|e| bad_json("a tool call's display", e))?)
            }
            None => None,
        };
        self.write(|tx| {
            super::sessions::require_session(tx, session)?;
            tx.prepare_cached(
                "INSERT OR REPLACE INTO tool_runs
                     (session_id, call_id, turn, status, display, elapsed_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                session.0,
                run.call_id,
                run.turn as i64,
                run.status.as_str(),
                display,
                run.elapsed_ms.map(|m| m.min(i64::MAX as u64) as i64),
            ])?;
            Ok(())
        })
    }

    /// Every recorded tool call of `session`, by call id. A row whose
    /// display cannot be read keeps its status and loses only the display;
    /// a row with a status this build does not know is left out.
    pub fn tool_runs(&self, session: &SessionId) -> Result<HashMap<String, ToolRun>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT call_id, turn, status, display, elapsed_ms FROM tool_runs
             WHERE session_id = ?1",
        )?;
        let mut rows = stmt.query([&session.0])?;
        let mut out = HashMap::new();
        while let Some(r) = rows.next()? {
            let call_id: String = r.get(0)?;
            let Some(status) = ToolStatus::parse(r.get_ref(2)?.as_str()?) else {
                continue;
            };
            let display = r
                .get_ref(3)?
                .as_str_or_null()?
                .and_then(|s| serde_json::from_str(s).ok());
            let run = ToolRun {
                call_id: call_id.clone(),
                turn: r.get::<_, i64>(1)?.max(0) as u64,
                status,
                display,
                elapsed_ms: r.get::<_, Option<i64>>(4)?.map(|m| m.max(0) as u64),
            };
            out.insert(call_id, run);
        }
        Ok(out)
    }
}
