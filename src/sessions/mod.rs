//! What a front end asks of stored sessions: list, search, preview, load
//! (a stored session rebuilt into what the screen and the agent need),
//! rewind, fork, rename, export, delete. The interface sends a
//! `SessionRequest` from its runtime and gets a `SessionReply`; `cairn
//! sessions …` calls the same functions.

mod browse;
mod edit;
mod load;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use browse::{PAGE, SessionEntry, age, list, preview_lines, query, search};
pub use edit::{
    OpenAs, RewindTo, export, export_text, open_as, open_elsewhere, prompts, restore_files, resume,
    rewind,
};
pub use load::{LoadedSession, Runs, StoredCall, load, short_id};

pub use crate::store::SessionId;
use crate::store::{Store, StoreError};
use crate::sync::lock;
use crate::tools::restore::UndoPlan;
use crate::tools::state::FileVersion;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Gone(String),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode the session as JSON: {0}")]
    Json(serde_json::Error),
    #[error("The session store is not available (see the notice at start-up).")]
    NoStore,
}

/// A session loaded to continue in the interface.
#[derive(Debug, Clone)]
pub struct Resumed {
    pub loaded: LoadedSession,
    /// Text to put back in the prompt (after a rewind).
    pub draft: Option<String>,
    /// After a rewind: what the original's later turns changed.
    pub later: Option<Later>,
    /// Another cairn records it: shown, but nothing is sent or recorded.
    pub read_only: bool,
}

/// The files the turns after a rewind point changed in the original.
#[derive(Debug, Clone)]
pub struct Later {
    /// The first of those turns.
    pub from: u64,
    /// Their file versions, to put the files back as they were then.
    pub versions: Vec<FileVersion>,
    /// What putting them back would do (and what cannot be put back).
    pub plan: UndoPlan,
}

/// What a front end asks.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionRequest {
    /// A page of the list (empty `text`) or search results.
    Query {
        text: String,
        all_projects: bool,
        /// Rows the front end already has (the next page of the list).
        offset: usize,
    },
    Preview(SessionId),
    /// Load a stored session to continue it (or hear that another cairn
    /// has it open).
    Resume(SessionId),
    /// Open a session another cairn has open: as a fork, or read-only.
    OpenAs(SessionId, OpenAs),
    /// The prompts of a session, to pick one to rewind to.
    Prompts(SessionId),
    /// Continue a stored session from just before one of its prompts; the
    /// later turns' files are planned for restoring against `workspace`.
    Rewind {
        to: RewindTo,
        current: Option<SessionId>,
        workspace: PathBuf,
    },
    /// Put files back as they were before `from` (after a rewind).
    RestoreFiles {
        versions: Vec<FileVersion>,
        from: u64,
    },
    Rename {
        id: SessionId,
        title: String,
    },
    /// Delete a session, unless it is `current` (the one being recorded).
    Delete {
        id: SessionId,
        current: Option<SessionId>,
    },
    Fork(SessionId),
    /// Export a session next to the project.
    Export {
        id: SessionId,
        json: bool,
    },
}

/// The answer to a `SessionRequest`.
#[derive(Debug, Clone)]
pub enum SessionReply {
    Sessions {
        query: String,
        entries: Vec<SessionEntry>,
        offset: usize,
    },
    Preview {
        id: SessionId,
        lines: Vec<String>,
    },
    Resumed(Box<Resumed>),
    /// A session's prompts: (message id, text).
    Prompts {
        id: SessionId,
        prompts: Vec<(i64, String)>,
    },
    /// The session to resume is open in another cairn: ask how to open it.
    OpenElsewhere {
        id: SessionId,
        /// Who has it ("it is open in another cairn (process 123)").
        held: String,
    },
    /// A delete that was not done, and why; the list should be reloaded.
    DeleteRefused(String),
    /// Done, or not done for a reason the person should read.
    Info(String),
    Failed(String),
}

/// The sessions service: the store and the project it lists by default.
#[derive(Clone)]
pub struct Sessions {
    store: Arc<Mutex<Store>>,
    project_root: PathBuf,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("project_root", &self.project_root)
            .finish()
    }
}

impl Sessions {
    pub fn new(store: Store, project_root: PathBuf) -> Sessions {
        Sessions {
            store: Arc::new(Mutex::new(store)),
            project_root,
        }
    }

    pub fn project_root(&self) -> &Path {
        &self.project_root
    }

    /// Answers `req`; blocking (run it off the interface thread).
    pub fn handle(&self, req: SessionRequest) -> SessionReply {
        match self.try_handle(req) {
            Ok(reply) => reply,
            Err(e) => SessionReply::Failed(e.to_string()),
        }
    }

    fn try_handle(&self, req: SessionRequest) -> Result<SessionReply, SessionError> {
        let mut store = lock(&self.store);
        let root = self.project_root.as_path();
        Ok(match req {
            SessionRequest::Query {
                text,
                all_projects,
                offset,
            } => SessionReply::Sessions {
                entries: query(&store, &text, (!all_projects).then_some(root), offset)?,
                query: text,
                offset,
            },
            SessionRequest::Preview(id) => {
                let messages = store.load_messages(&id)?;
                SessionReply::Preview {
                    lines: preview_lines(messages.iter().map(|m| &m.1), 200),
                    id,
                }
            }
            SessionRequest::Resume(id) => match open_elsewhere(&store, &id) {
                Some(held) => SessionReply::OpenElsewhere {
                    id,
                    held: held.to_string(),
                },
                None => SessionReply::Resumed(Box::new(resume(&store, &id)?)),
            },
            SessionRequest::OpenAs(id, how) => {
                SessionReply::Resumed(Box::new(open_as(&mut store, &id, how)?))
            }
            SessionRequest::Prompts(id) => SessionReply::Prompts {
                prompts: prompts(&store, &id)?,
                id,
            },
            SessionRequest::Rewind {
                to,
                current,
                workspace,
            } => match rewind(&mut store, &to, current.as_ref(), &workspace)? {
                Ok(r) => SessionReply::Resumed(Box::new(r)),
                Err(why) => SessionReply::Info(why),
            },
            SessionRequest::RestoreFiles { versions, from } => {
                SessionReply::Info(restore_files(&versions, from, root))
            }
            SessionRequest::Rename { id, title } => {
                store.rename(&id, &title)?;
                SessionReply::Info(format!("Renamed the session to “{title}”."))
            }
            SessionRequest::Delete { id, current } => {
                if current.as_ref() == Some(&id) {
                    return Ok(SessionReply::DeleteRefused(
                        "That is the session you are in, so it stays: start another with /new, then delete this one.".into(),
                    ));
                }
                store.delete_session(&id)?;
                SessionReply::Info("Deleted the session.".into())
            }
            SessionRequest::Fork(id) => {
                let new = store.fork_session(&id, None)?;
                SessionReply::Info(format!(
                    "Forked into a new session {}; find it in the browser (Ctrl+S).",
                    short_id(&new)
                ))
            }
            SessionRequest::Export { id, json } => {
                let path = export(&store, &id, json, root)?;
                SessionReply::Info(format!("Exported to {}", path.display()))
            }
        })
    }

    /// Runs `f` with the store (for `cairn sessions …` and start-up).
    pub fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        f(&mut lock(&self.store))
    }
}

#[cfg(test)]
mod tests;
