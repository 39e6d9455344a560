//! The session store: one SQLite database (WAL) holding sessions, their
//! messages (parts as JSON), file versions for undo and rewind, and a
//! full-text index of message text. It knows rows, not screens: the
//! sessions service (`crate::sessions`) and the agent's store writer turn
//! them into what a front end shows.
//!
//! - `schema` — the tables and numbered migrations; `error` — `StoreError`.
//! - `sessions`, `messages` — sessions (fork, rewind, delete) and their
//!   messages; `search` — the full-text index and its queries.
//! - `compactions` — summaries that replaced older turns, so a resumed
//!   session continues from the latest one.
//! - `tool_runs` — how each call ended as the person saw it, and files that
//!   cannot be restored; `turn_outcomes` — turns that did not complete.
//! - `lock` — one process records a session at a time; `export` — a
//!   session as markdown or JSON.
//!
//! The API is synchronous. A [`Store`] owns one connection and is `Send` but
//! not `Sync`: give it to a dedicated thread or move it into
//! `tokio::task::spawn_blocking`. Several `Store`s — in one process or in
//! several cairn processes — may use the same file at once: writes take the
//! write lock up front (`BEGIN IMMEDIATE`) and wait up to 5 s for it, so they
//! queue instead of failing or losing each other's rows.
//!
//! Every write is one small transaction, committed before the call returns:
//! if the process dies, everything acknowledged so far is on disk.

mod compactions;
mod error;
mod export;
mod file_guard;
mod lock;
mod messages;
mod schema;
mod search;
mod sessions;
mod tool_runs;
mod turn_outcomes;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, Transaction, TransactionBehavior};
use serde::{Deserialize, Serialize};

pub use compactions::{NewCompaction, StoredCompaction};
pub use error::StoreError;
pub use file_guard::FileState;
pub use lock::{HeldElsewhere, SessionLock};
#[cfg(test)]
pub(crate) use schema::BUSY_TIMEOUT;
pub use schema::{SCHEMA_VERSION, V1_SQL};
pub use search::{MATCH_END, MATCH_START, SearchHit, build_match_query, message_search_text};
pub use tool_runs::{LostFile, ToolRun};
pub use turn_outcomes::TurnEnd;

use crate::conversation::Usage;

/// A session's id: a UUID v7 in its hyphenated lowercase form, so ids sort by
/// creation time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionId(pub String);

impl SessionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SessionId {
    fn from(id: &str) -> Self {
        SessionId(id.to_string())
    }
}

impl From<String> for SessionId {
    fn from(id: String) -> Self {
        SessionId(id)
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A message's row id; unique across the whole database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MessageId(pub i64);

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a new session starts with.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    pub cwd: PathBuf,
    pub project_root: Option<PathBuf>,
    pub provider: String,
    pub model: String,
    pub parent_id: Option<SessionId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    #[default]
    Active,
    /// The turn this message belongs to was undone; kept for the record but
    /// not part of what the model sees.
    Undone,
}

impl MessageStatus {
    fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Active => "active",
            MessageStatus::Undone => "undone",
        }
    }
    fn parse(s: &str) -> Self {
        match s {
            "undone" => MessageStatus::Undone,
            _ => MessageStatus::Active,
        }
    }
}

/// Facts about a message that are not part of what the model sees.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MessageMeta {
    /// The model that wrote an assistant message.
    pub model: Option<String>,
    /// Tokens of the exchange that produced this message; added to the
    /// session's totals.
    pub usage: Option<Usage>,
    /// Price of that exchange, when known; added to the session's cost.
    pub cost: Option<f64>,
    /// The turn (one user request and everything it caused) this belongs to.
    pub turn: u64,
    pub status: MessageStatus,
}

/// One row of the session browser.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    pub id: SessionId,
    pub title: Option<String>,
    pub cwd: PathBuf,
    pub project_root: Option<PathBuf>,
    pub provider: String,
    pub model: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the last change; the browser sorts by this.
    pub updated_at: i64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    pub parent_id: Option<SessionId>,
    pub message_count: u64,
    /// The first thing the person asked, shortened; stands in for a title.
    pub first_prompt: Option<String>,
    /// A sub-agent's session; `parent_id` is the session that started it.
    #[serde(default)]
    pub subagent: bool,
    /// The permission mode it last ran in (`Mode::as_str`), if recorded.
    pub mode: Option<String>,
    /// What the model is to be told with the next prompt (after an undo).
    #[serde(skip)]
    pub pending_note: Option<String>,
}

impl SessionSummary {
    /// The title, else the first prompt, else a placeholder.
    pub fn display_title(&self) -> &str {
        self.title
            .as_deref()
            .or(self.first_prompt.as_deref())
            .unwrap_or("(empty session)")
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ListFilter<'a> {
    /// Only sessions of this project; all sessions when `None`.
    pub project_root: Option<&'a Path>,
    /// At most this many; 0 means no limit.
    pub limit: usize,
    pub offset: usize,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SearchFilter<'a> {
    pub project_root: Option<&'a Path>,
    /// At most this many hits; 0 means 50.
    pub limit: usize,
    /// Only the best-ranked message of each session.
    pub one_per_session: bool,
}

/// The content a file had before a turn changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFileVersion {
    pub id: i64,
    pub session_id: SessionId,
    pub turn: u64,
    pub path: PathBuf,
    /// `None`: the file did not exist.
    pub content: Option<Vec<u8>>,
    pub created_at: i64,
}

/// Attempts at taking the write lock, each waiting out the busy timeout.
const WRITE_TRIES: u32 = 4;

/// A handle on the session database. See the module docs for threading.
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    /// The device and inode of the file opened, to notice it deleted or
    /// replaced while open (`file_guard.rs`).
    identity: Option<(u64, u64)>,
}

/// Where the app keeps its sessions: `$XDG_DATA_HOME/cairn/sessions.db` on
/// Linux (falling back to `~/.local/share`), the platform's data directory
/// elsewhere.
pub fn default_path() -> Option<PathBuf> {
    let dirs = directories::BaseDirs::new()?;
    Some(dirs.data_dir().join("cairn").join("sessions.db"))
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Opens the database at `path`, creating it (and its directory) if
    /// missing and upgrading an older schema after copying the file to
    /// `<path>.bak-v<old version>`. A file from a newer cairn or a file that
    /// is not a database is refused and left as it was.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        let conn = schema::open_file(path)?;
        Ok(Store {
            conn,
            path: Some(path.to_path_buf()),
            identity: file_guard::identity(path),
        })
    }

    /// A private database that vanishes with the `Store`; for tests and
    /// `--no-session` style runs.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Ok(Store {
            conn: schema::open_memory()?,
            path: None,
            identity: None,
        })
    }

    /// The file behind this store; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Runs `f` inside a write transaction taken with `BEGIN IMMEDIATE`, so
    /// the lock wait happens up front (honouring the busy timeout) instead of
    /// failing halfway through on upgrade from a read lock. Another process
    /// holding the lock past the timeout is waited out a few times more
    /// before the write is given up.
    fn write<T>(
        &mut self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut tries = 1;
        let tx = loop {
            match Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
                .map_err(StoreError::from)
            {
                Err(StoreError::Busy) if tries < WRITE_TRIES => {
                    tracing::warn!("session database busy; waiting again ({tries})");
                    tries += 1;
                }
                other => break other?,
            }
        };
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Checks the whole file; `Ok(())` or the problems SQLite found.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let problems: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        if problems.len() == 1 && problems[0] == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: self.path.clone().unwrap_or_default(),
                detail: problems.join("; "),
            })
        }
    }
}

fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn bad_json(what: impl Into<String>, e: serde_json::Error) -> StoreError {
    StoreError::BadData {
        what: what.into(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;
