//! Opening the database file safely and moving its schema forward.
//!
//! Each migration is numbered by the `PRAGMA user_version` it produces. A
//! migration, once released, never changes: a new schema is a new entry.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use super::StoreError;
use super::search::message_search_text;
use crate::conversation::{Part, ToolStatus};

/// The newest schema this build understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

type Migration = fn(&Transaction<'_>) -> rusqlite::Result<()>;

/// `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[Migration] = &[
    v1_tables,
    v2_search_and_status,
    v3_tool_runs,
    v4_tool_run_status_backfill,
    v5_turn_outcomes,
    v6_compactions,
    v7_subagent_sessions,
    v8_session_settings,
];

pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn v1_tables(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(V1_SQL)
}

/// The first released schema, kept verbatim so tests can build a v1 file.
pub const V1_SQL: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    title TEXT,
    cwd TEXT NOT NULL,
    project_root TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    first_prompt TEXT
);
CREATE INDEX sessions_by_activity ON sessions(updated_at, id);
CREATE INDEX sessions_by_project ON sessions(project_root, updated_at, id);
CREATE INDEX sessions_by_parent ON sessions(parent_id);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    model TEXT,
    usage TEXT,
    turn INTEGER NOT NULL DEFAULT 0,
    UNIQUE(session_id, seq)
);
CREATE TABLE file_versions (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL,
    path TEXT NOT NULL,
    content BLOB,
    created_at INTEGER NOT NULL
);
CREATE INDEX file_versions_by_turn ON file_versions(session_id, turn);
";

/// Adds the message status (undone turns), per-message cost, and the
/// full-text index. `body` holds the searchable text extracted from the
/// parts; the FTS table reads it as external content and triggers keep the
/// two in step inside whatever transaction changes `messages`.
fn v2_search_and_status(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE messages ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
         ALTER TABLE messages ADD COLUMN cost REAL;
         ALTER TABLE messages ADD COLUMN body TEXT NOT NULL DEFAULT '';",
    )?;
    {
        let mut read = tx.prepare("SELECT id, parts FROM messages")?;
        let mut write = tx.prepare("UPDATE messages SET body = ?2 WHERE id = ?1")?;
        let mut rows = read.query([])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let parts: String = row.get(1)?;
            // A row whose parts cannot be decoded is kept but not indexed:
            // refusing the whole upgrade for one bad row would lock the
            // person out of every other session.
            if let Ok(parts) = serde_json::from_str::<Vec<Part>>(&parts) {
                write.execute(rusqlite::params![id, message_search_text(&parts)])?;
            }
        }
    }
    tx.execute_batch(
        "CREATE VIRTUAL TABLE messages_fts USING fts5(
             body, content='messages', content_rowid='id',
             tokenize='unicode61 remove_diacritics 2');
         INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
         CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
             INSERT INTO messages_fts(rowid, body) VALUES (new.id, new.body);
         END;
         CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
             INSERT INTO messages_fts(messages_fts, rowid, body)
                 VALUES ('delete', old.id, old.body);
         END;
         CREATE TRIGGER messages_fts_update AFTER UPDATE OF body ON messages BEGIN
             INSERT INTO messages_fts(messages_fts, rowid, body)
                 VALUES ('delete', old.id, old.body);
             INSERT INTO messages_fts(rowid, body) VALUES (new.id, new.body);
         END;
         CREATE INDEX messages_by_turn ON messages(session_id, turn);",
    )
}

/// Adds how each tool call ended as the person saw it: its status, the
/// interface's display (an edit's diff with real line numbers) and how long
/// it ran, so a resumed transcript is the one that was left. Sessions from
/// before this version have no rows and are rebuilt from their messages.
/// Also the files a turn changed that cannot be put back (too large to keep
/// a copy of), so undo names them after a resume too.
fn v3_tool_runs(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE tool_runs (
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             call_id TEXT NOT NULL,
             turn INTEGER NOT NULL,
             status TEXT NOT NULL,
             display TEXT,
             elapsed_ms INTEGER,
             PRIMARY KEY (session_id, call_id)
         ) WITHOUT ROWID;
         CREATE TABLE lost_files (
             id INTEGER PRIMARY KEY,
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             turn INTEGER NOT NULL,
             path TEXT NOT NULL,
             why TEXT NOT NULL
         );
         CREATE INDEX lost_files_by_turn ON lost_files(session_id, turn);",
    )
}

/// Every tool call gets a typed status row: calls recorded before v3 kept
/// how they ended only in the words of their result, so those words are
/// read here, once, into the status they stood for. Rows that exist are
/// left as they are.
fn v4_tool_run_status_backfill(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let mut read = tx.prepare("SELECT session_id, turn, parts FROM messages ORDER BY id")?;
    let mut write = tx.prepare(
        "INSERT OR IGNORE INTO tool_runs (session_id, call_id, turn, status)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut rows = read.query([])?;
    while let Some(row) = rows.next()? {
        let session: String = row.get(0)?;
        let turn: i64 = row.get(1)?;
        let parts: String = row.get(2)?;
        // A row whose parts cannot be decoded stays as it is (see v2).
        let Ok(parts) = serde_json::from_str::<Vec<Part>>(&parts) else {
            continue;
        };
        for p in parts {
            if let Part::ToolResult {
                call_id,
                content,
                is_error,
            } = p
            {
                let status = legacy_status(&crate::conversation::result_text(&content), is_error);
                write.execute(rusqlite::params![session, call_id, turn, status.as_str()])?;
            }
        }
    }
    Ok(())
}

/// How each turn that did not complete ended (cancelled, failed with
/// its error, stopped at the turn limit), so a resumed transcript shows
/// the same markers and error lines as the live one.
fn v5_turn_outcomes(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE turn_outcomes (
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             turn INTEGER NOT NULL,
             outcome TEXT NOT NULL,
             detail TEXT NOT NULL DEFAULT '',
             PRIMARY KEY (session_id, turn)
         ) WITHOUT ROWID;",
    )
}

/// Each compaction of a session: the summary that replaced the turns
/// before `turn` (the first turn kept verbatim), and how many messages the
/// session had when it happened (where the transcript shows its marker).
/// A resumed session continues from the latest one.
/// Marks the sessions of sub-agents, so the browser lists them under
/// their parent and `--continue` never picks one. Before this version a
/// child had a parent like a fork; a fork's title says "(fork", a child's
/// never did, so that is how older rows are told apart (a fork renamed
/// since is taken for a sub-agent's: it is still listed, marked).
fn v7_subagent_sessions(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE sessions ADD COLUMN subagent INTEGER NOT NULL DEFAULT 0;
         UPDATE sessions SET subagent = 1
          WHERE parent_id IS NOT NULL AND (title IS NULL OR title NOT LIKE '%(fork%');",
    )
}

fn v6_compactions(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE compactions (
             id INTEGER PRIMARY KEY,
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             turn INTEGER NOT NULL,
             at_count INTEGER NOT NULL,
             summary TEXT NOT NULL,
             before_tokens INTEGER NOT NULL,
             after_tokens INTEGER NOT NULL,
             created_at INTEGER NOT NULL
         );
         CREATE INDEX compactions_by_session ON compactions(session_id, id);",
    )
}

/// What a session continues with when resumed: the model and permission
/// mode it last used, and a note for the model not yet sent (an undo's).
fn v8_session_settings(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE sessions ADD COLUMN mode TEXT;
         ALTER TABLE sessions ADD COLUMN pending_note TEXT;",
    )
}

/// How a result recorded before v3 ended, from the words the agent used
/// for each outcome at the time. Only the v4 migration reads them.
fn legacy_status(text: &str, is_error: bool) -> ToolStatus {
    if !is_error {
        ToolStatus::Done
    } else if text.starts_with("The person denied") || text.contains("needs the person's approval")
    {
        ToolStatus::Denied
    } else if text.starts_with("The call was cancelled")
        || text.starts_with("The turn was cancelled")
        || text.starts_with("The tool call was cancelled")
    {
        ToolStatus::Cancelled
    } else if text.starts_with("Blocked") || text.starts_with("blocked") {
        ToolStatus::Blocked
    } else {
        ToolStatus::Failed
    }
}

/// Applies connection settings every connection needs.
pub(crate) fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // NORMAL in WAL mode: a committed transaction survives the process being
    // killed (it is in the OS's hands); only power loss can drop the last few.
    conn.execute_batch(
        "PRAGMA foreign_keys = ON;
         PRAGMA synchronous = NORMAL;",
    )?;
    Ok(())
}

/// Reads the schema version without writing anything, so a file from a newer
/// cairn, or one that is not a database, is refused untouched.
fn check_existing(path: &Path) -> Result<i64, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(path, e))?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    // Touch the schema too: a damaged file can have a readable header.
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    if version == 0 && objects > 0 {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: "it is an SQLite database, but not one cairn made".into(),
        });
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(version)
}

fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) | Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        }
        _ => StoreError::Open {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// Opens (creating if needed) the database at `path` and brings its schema
/// up to date, backing the file up first when it already holds data.
pub(crate) fn open_file(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private::create_dir(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let has_data = std::fs::metadata(path)
        .map(|m| m.len() > 0)
        .unwrap_or(false);
    let found = if has_data { check_existing(path)? } else { 0 };
    make_private(path);

    let conn = Connection::open(path).map_err(|e| classify(path, e))?;
    configure(&conn).map_err(|e| classify(path, e))?;
    if found < SCHEMA_VERSION && has_data {
        backup(&conn, path, found)?;
    }
    migrate(&conn)?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
        .map_err(|e| classify(path, e))?;
    Ok(conn)
}

/// The database holds whole conversations: 0600. SQLite gives its `-wal`
/// and `-shm` files the database file's mode; older ones are tightened too.
fn make_private(path: &Path) {
    let _ = crate::private::touch(path);
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        if let Err(e) = crate::private::restrict(Path::new(&p), crate::private::FILE_MODE) {
            tracing::warn!("cannot make {} private: {e}", Path::new(&p).display());
        }
    }
}

pub(crate) fn open_memory() -> Result<Connection, StoreError> {
    let conn = Connection::open_in_memory()?;
    configure(&conn)?;
    migrate(&conn)?;
    Ok(conn)
}

/// `VACUUM INTO` reads through the connection, so pages still in the WAL are
/// part of the copy.
fn backup(conn: &Connection, path: &Path, version: i64) -> Result<PathBuf, StoreError> {
    let mut target = PathBuf::from(format!("{}.bak-v{version}", path.display()));
    if target.exists() {
        // Another cairn opening the same old file at once, or an earlier
        // attempt: keep that copy and write ours beside it.
        target = PathBuf::from(format!("{}.{}", target.display(), super::now_ms()));
    }
    let target_str = target.to_string_lossy().into_owned();
    conn.execute("VACUUM INTO ?1", [&target_str])
        .map_err(|source| StoreError::Backup {
            path: target.clone(),
            source,
        })?;
    Ok(target)
}

/// Runs every pending migration in one IMMEDIATE transaction, re-reading the
/// version under the write lock so two processes never migrate twice.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let mut conn_tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let tx = &mut conn_tx;
    let from: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if from > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: conn.path().map(PathBuf::from).unwrap_or_default(),
            found: from,
            supported: SCHEMA_VERSION,
        });
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        step(tx).map_err(|e| StoreError::Migration {
            from,
            to: i as i64 + 1,
            detail: e.to_string(),
        })?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    conn_tx.commit()?;
    Ok(())
}

#[cfg(test)]
pub(crate) fn create_at_version(path: &Path, version: i64) -> rusqlite::Result<Connection> {
    let mut conn = Connection::open(path)?;
    conn.execute_batch("PRAGMA journal_mode = WAL")?;
    let tx = conn.transaction()?;
    for step in &MIGRATIONS[..version as usize] {
        step(&tx)?;
    }
    tx.pragma_update(None, "user_version", version)?;
    tx.commit()?;
    Ok(conn)
}
