//! Which stored session a front end continues, and what to do when another
//! cairn has it open. One process writes a session at a time (see
//! `store::SessionLock`): `cairn run --continue/--session` on a session
//! open elsewhere continues in a fork of it and says so; the interface asks
//! (fork, the default, or read-only).

use std::path::Path;

use anyhow::{Context, Result};

use crate::protocol::AgentCommand;
use crate::protocol::LoadedSession;
use crate::store::{HeldElsewhere, SessionId, Store};

/// What the command line asked to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    New,
    Latest,
    Id(String),
}

impl Resume {
    pub fn from_flags(continue_latest: bool, session: Option<String>) -> Resume {
        match (continue_latest, session) {
            (_, Some(id)) => Resume::Id(id),
            (true, None) => Resume::Latest,
            (false, None) => Resume::New,
        }
    }
}

/// Finds the session to continue, and who else has it open.
pub fn find(store: &Store, resume: &Resume, root: &Path) -> Result<Option<SessionId>> {
    match resume {
        Resume::New => Ok(None),
        Resume::Latest => Ok(store.latest_session(root)?.map(|s| s.id)),
        Resume::Id(id) => Ok(Some(store.resolve_id(id)?)),
    }
}

/// What the person chose for a session open in another cairn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Fork,
    ReadOnly,
    Quit,
}

/// Asks on the terminal, before the full screen starts, what to do with a
/// session another cairn has open. Enter (or anything unrecognised) forks.
pub fn ask(id: &SessionId, held: &HeldElsewhere) -> Offer {
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "Session {id}: {held}.\n\
         Writing into it from here too would interleave both conversations.\n\
         [F]ork it into a new session (default), open it [r]ead-only, or [q]uit? "
    );
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return Offer::Quit;
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "r" | "read-only" | "readonly" => Offer::ReadOnly,
        "q" | "quit" => Offer::Quit,
        _ => Offer::Fork,
    }
}

/// For the interface, before its screen starts: a resumed session another
/// cairn has open becomes a fork of it or stays read-only (`true`), as the
/// person chooses; `None` when they chose to quit.
pub fn offer(store: &mut Store, resumed: LoadedSession) -> Result<Option<(LoadedSession, bool)>> {
    let id = resumed.summary.id.clone();
    let Some(held) = crate::sessions::holder(store, &id) else {
        return Ok(Some((resumed, false)));
    };
    match ask(&id, &held) {
        Offer::Fork => {
            let fork = store.fork_session(&id, None)?;
            let loaded = crate::sessions::load(store, &fork)
                .with_context(|| format!("cannot load session {fork}"))?;
            Ok(Some((loaded, false)))
        }
        Offer::ReadOnly => Ok(Some((resumed, true))),
        Offer::Quit => Ok(None),
    }
}

/// For `cairn run`: the history to load, continuing in a fork when the
/// session is open in another cairn.
pub fn prepare(resume: &Resume, root: &Path) -> Result<Option<AgentCommand>> {
    if *resume == Resume::New {
        return Ok(None);
    }
    let mut store = crate::cli::sessions::open_store()
        .context("cannot continue a session: the session store could not be opened")?;
    let Some(mut id) = find(&store, resume, root)? else {
        eprintln!("cairn: no earlier session in this project to continue; starting a new one");
        return Ok(None);
    };
    if let Some(held) = crate::sessions::holder(&store, &id) {
        let fork = store.fork_session(&id, None)?;
        eprintln!(
            "cairn: not writing into session {id}: {held}; continuing in a copy of it (session {fork})"
        );
        id = fork;
    }
    let loaded =
        crate::sessions::load(&store, &id).with_context(|| format!("cannot load session {id}"))?;
    Ok(Some(AgentCommand::load(&loaded)))
}
