//! Changing stored sessions: continuing one from before a prompt (as a
//! fork or in place), renaming, forking, exporting, deleting.

use std::path::{Path, PathBuf};

use super::SessionError;
use super::load::load;
use crate::conversation::{Part, Role};
use crate::protocol::{Later, OpenAs, Resumed, RewindTo};
use crate::store::{SessionId, Store};
use crate::tools::state::FileVersion;

/// The prompts of a session, to pick one to rewind to: (message id, text).
pub fn prompts(store: &Store, id: &SessionId) -> Result<Vec<(i64, String)>, SessionError> {
    Ok(store
        .load_messages(id)?
        .into_iter()
        .filter(|(_, m, _)| {
            m.role == Role::User && m.parts.iter().any(|p| matches!(p, Part::Text { .. }))
        })
        .map(|(mid, m, _)| (mid.0, m.text()))
        .collect())
}

/// Continues `to.id` from just before its prompt `to.message`: the prompt
/// comes back as a draft, and what the later turns changed in the files is
/// offered for restoring (planned against `workspace` as it is now).
pub fn rewind(
    store: &mut Store,
    to: &RewindTo,
    current: Option<&SessionId>,
    workspace: &Path,
) -> Result<Result<Resumed, String>, SessionError> {
    if to.in_place && current == Some(&to.id) {
        return Ok(Err(
            "That is the session you are in: rewind it with Esc Esc.".into(),
        ));
    }
    let sid = &to.id;
    let stored = store.load_messages(sid)?;
    let pos = stored
        .iter()
        .position(|(mid, _, _)| mid.0 == to.message)
        .ok_or_else(|| SessionError::Gone("that message is no longer in the session".into()))?;
    let draft = stored[pos].1.text();
    let from = stored[pos].2.turn;
    let last = stored.iter().map(|m| m.2.turn).max().unwrap_or(from);
    let lost: Vec<(String, String)> = store
        .lost_files(sid)?
        .into_iter()
        .filter(|l| l.turn >= from)
        .map(|l| (l.path.display().to_string(), l.why))
        .collect();
    let mut versions = Vec::new();
    for turn in from..=last {
        for v in store.file_versions(sid, turn)? {
            versions.push(FileVersion {
                path: v.path,
                before: v.content,
                turn,
            });
        }
    }
    let Some(keep) = pos.checked_sub(1).map(|p| stored[p].0) else {
        return Ok(Err(
            "That is the session's first prompt: /new starts from nothing.".into(),
        ));
    };
    let new = if to.in_place {
        store.truncate_after(sid, keep)?;
        sid.clone()
    } else {
        store.fork_session(sid, Some(keep))?
    };
    let loaded = load(store, &new)?;
    let later = (!versions.is_empty() || !lost.is_empty())
        .then(|| Later::plan(from, versions, lost, workspace))
        .filter(|l| !l.plan.files.is_empty() || !l.plan.unrestorable.is_empty());
    Ok(Ok(Resumed {
        loaded,
        draft: Some(draft),
        later,
        read_only: false,
    }))
}

/// Puts files back as they were before turn `from` (after a rewind); the
/// notice says what was restored and what could not be.
pub fn restore_files(versions: &[FileVersion], from: u64, workspace: &Path) -> String {
    let to = versions.iter().map(|v| v.turn).max().unwrap_or(from);
    let (done, failed) = crate::tools::restore::apply_range(versions, from, to, workspace);
    let mut text = format!("Restored {} file(s): {}", done.len(), done.join(", "));
    for (path, why) in failed {
        text.push_str(&format!("\nCould not restore {path}: {why}"));
    }
    text
}

/// Writes `id` as Markdown or JSON into `dir`, named after the session;
/// returns the file's path.
pub fn export(
    store: &Store,
    id: &SessionId,
    json: bool,
    dir: &Path,
) -> Result<PathBuf, SessionError> {
    let path = dir.join(export_name(id, json));
    export_file(
        store,
        id,
        json,
        &path,
        &crate::config::project_file::write_no_follow,
    )?;
    Ok(path)
}

/// The file name an export of `id` gets.
pub fn export_name(id: &SessionId, json: bool) -> String {
    // The whole id: v7 ids made the same minute share their short form.
    let ext = if json { "json" } else { "md" };
    format!("cairn-session-{}.{ext}", id.as_str())
}

/// What writes one file of an export.
pub type WriteFile<'a> = &'a dyn Fn(&Path, &[u8]) -> std::io::Result<()>;

/// Writes `id` as Markdown or JSON to `path`, its pictures beside it, each
/// file by `write`.
pub fn export_file(
    store: &Store,
    id: &SessionId,
    json: bool,
    path: &Path,
    write: WriteFile,
) -> Result<(), SessionError> {
    let (text, _) = export_text(store, id, json)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    if !json {
        // The pictures the Markdown refers to, beside it (JSON has them
        // inline).
        for (name, bytes) in store.export_images(id)? {
            let file = dir.join(name);
            write(&file, &bytes).map_err(|source| SessionError::Write { path: file, source })?;
        }
    }
    write(path, text.as_bytes()).map_err(|source| SessionError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// A session as Markdown or pretty JSON, and the file extension for it.
pub fn export_text(
    store: &Store,
    id: &SessionId,
    json: bool,
) -> Result<(String, &'static str), SessionError> {
    Ok(if json {
        let value = store.export_json(id)?;
        (
            serde_json::to_string_pretty(&value).map_err(SessionError::Json)?,
            "json",
        )
    } else {
        // Markdown is for reading (`cat`, `less`, a pager): a control
        // character a model or a tool left in the session is shown in
        // caret notation, never sent to the terminal that shows the file.
        // JSON keeps the exact text (its strings escape them).
        let text = store.export_markdown(id)?;
        (crate::term_safe::escape(&text), "md")
    })
}

/// Loads a session to continue it, as a `Resumed` with nothing else to do.
pub fn resume(store: &Store, id: &SessionId) -> Result<Resumed, SessionError> {
    Ok(Resumed {
        loaded: load(store, id)?,
        draft: None,
        later: None,
        read_only: false,
    })
}

/// Another cairn (not this process) records `id`: who.
pub fn open_elsewhere(store: &Store, id: &SessionId) -> Option<crate::store::HeldElsewhere> {
    holder(store, id).filter(|h| h.pid != Some(std::process::id()))
}

/// Which cairn has `id` open, this one included.
pub fn holder(store: &Store, id: &SessionId) -> Option<crate::store::HeldElsewhere> {
    let db = store.path()?;
    crate::store::SessionLock::holder(db, id).ok().flatten()
}

/// Opens a session another cairn records, as the person chose: a fork of
/// it to continue, or the session itself, read-only.
pub fn open_as(store: &mut Store, id: &SessionId, how: OpenAs) -> Result<Resumed, SessionError> {
    match how {
        OpenAs::Fork => {
            let fork = store.fork_session(id, None)?;
            resume(store, &fork)
        }
        OpenAs::ReadOnly => Ok(Resumed {
            read_only: true,
            ..resume(store, id)?
        }),
    }
}
