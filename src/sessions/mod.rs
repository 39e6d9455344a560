//! The sessions service: what a front end asks of stored sessions — list,
//! search, preview, load (a stored session rebuilt into what the screen and
//! the agent need), rewind, fork, rename, export, delete. The interface
//! sends a `SessionRequest` from its runtime and gets a `SessionReply`
//! (both in `crate::protocol`, with the rows and sessions they carry);
//! `cairn sessions …` calls the same functions.

mod browse;
mod edit;
mod export_to;
mod load;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use browse::{PAGE, age, list, preview_lines, query, search};
pub use edit::{
    export, export_file, export_text, holder, open_as, open_elsewhere, prompts, restore_files,
    resume, rewind,
};
pub use load::load;

use crate::protocol::{SessionReply, SessionRequest, short_id};
pub use crate::store::SessionId;
use crate::store::{Store, StoreError};
use crate::sync::lock;

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

/// The sessions service: the store and the project it lists by default.
#[derive(Clone)]
pub struct Sessions {
    store: Arc<Mutex<Store>>,
    project_root: PathBuf,
    /// Where `/export` writes: cairn's data directory, never the project
    /// (an export there gets committed by accident).
    export_dir: PathBuf,
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
        let export_dir = crate::config::data_dir()
            .map(|d| d.join("exports"))
            .unwrap_or_else(std::env::temp_dir);
        Sessions {
            store: Arc::new(Mutex::new(store)),
            project_root,
            export_dir,
        }
    }

    /// Exports go to `dir` instead (`[ui] export_dir`).
    pub fn with_export_dir(mut self, dir: PathBuf) -> Sessions {
        self.export_dir = dir;
        self
    }

    /// `[ui] export_dir` as the person wrote it (`~/…`, or relative to
    /// the project root); cairn's own when `None`.
    pub fn with_configured_export_dir(self, typed: Option<&str>) -> Sessions {
        match typed.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => {
                let home = crate::paths::home_dir();
                let dir = export_to::resolve(t, &self.project_root, home.as_deref());
                self.with_export_dir(dir)
            }
            None => self,
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
                    "Forked into a new session {} (listed in the browser, Ctrl+S).",
                    short_id(&new)
                ))
            }
            SessionRequest::Export { id, json, to: None } => SessionReply::Info(
                export_to::into_export_dir(&store, &id, json, (&self.export_dir, root))?,
            ),
            SessionRequest::Export {
                id,
                json,
                to: Some(to),
            } => {
                let home = crate::paths::home_dir();
                let place = export_to::resolve(&to, root, home.as_deref());
                SessionReply::Info(export_to::to_named_place(
                    &store,
                    &id,
                    json,
                    (&place, root),
                    &to,
                )?)
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
