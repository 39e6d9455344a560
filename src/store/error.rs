//! What can go wrong with the session database, worded so a person knows what
//! to do next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the session database {} was written by a newer cairn (schema version {found}; this cairn understands up to {supported}). Upgrade cairn or use another database file; this one was left untouched.",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    #[error(
        "{} is not a readable cairn session database ({detail}). Move the file aside to start with a fresh one; it was left untouched.",
        path.display()
    )]
    Corrupt { path: PathBuf, detail: String },

    #[error("cannot open the session database {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "the session database {} was deleted or replaced while cairn ran, and writing it back failed: {source}",
        path.display()
    )]
    Restore {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot create the directory for the session database {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "could not back up the session database to {} before upgrading its schema: {source}. Nothing was changed; free some disk space or check permissions and try again.",
        path.display()
    )]
    Backup {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "upgrading the session database schema from version {from} to {to} failed: {detail}. The database was left at version {from}."
    )]
    Migration { from: i64, to: i64, detail: String },

    #[error("no session with id {0}")]
    NoSession(String),

    #[error("no message with id {0}")]
    NoMessage(i64),

    #[error("message {message} does not belong to session {session}")]
    WrongSession { message: i64, session: String },

    #[error("no session id starts with \"{0}\"")]
    NoMatch(String),

    #[error("\"{prefix}\" matches several sessions ({}); type more characters of the id", candidates.join(", "))]
    Ambiguous {
        prefix: String,
        candidates: Vec<String>,
    },

    #[error(
        "\"{0}\" is not a session id or prefix: ids contain only the hexadecimal digits 0-9, a-f and dashes"
    )]
    InvalidPrefix(String),

    #[error("stored data for {what} cannot be read: {detail}")]
    BadData { what: String, detail: String },

    #[error("the session database is busy: another process holds its write lock")]
    Busy,

    #[error("session database error: {0}")]
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
            || e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseLocked)
        {
            StoreError::Busy
        } else {
            StoreError::Sqlite(e)
        }
    }
}

impl From<rusqlite::types::FromSqlError> for StoreError {
    fn from(e: rusqlite::types::FromSqlError) -> Self {
        StoreError::BadData {
            what: "a stored value".into(),
            detail: e.to_string(),
        }
    }
}
