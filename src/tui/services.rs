//! Slow work the interface asks for (the session store, the file list,
//! MCP): run off the interface thread, answered with `Msg::Service`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedSender;

use crate::agent::NoticeLevel;
use crate::agent::store_sink::Recorded;
use crate::conversation::{Message, Part, Role, result_text};
use crate::mcp::McpManager;
use crate::store::{ListFilter, SearchFilter, SessionId, Store};
use crate::tools::state::{FileVersion, lock};
use crate::tui::msg::Msg;
use crate::tui::widgets::session_browser::BrowserEntry;

#[derive(Debug, Clone, PartialEq)]
pub enum ServiceCmd {
    ListFiles,
    /// Fetch an MCP prompt (`mcp__SERVER__PROMPT args`) and send its text.
    McpPrompt(String),
    QuerySessions {
        text: String,
        all: bool,
        /// Rows the browser already has (the next page of the list).
        offset: usize,
    },
    Preview(String),
    /// Load a stored session to continue it.
    Resume(String),
    Rename {
        id: Option<String>,
        title: String,
    },
    Delete(String),
    Fork(String),
    /// The prompts of a session, to pick one to rewind to.
    Prompts(String),
    /// Continue a stored session from just before one of its prompts, as
    /// a fork or in place; the prompt comes back to the input.
    ForkBefore {
        id: String,
        message: i64,
        /// Cut the session itself back instead of forking it.
        in_place: bool,
    },
    /// Put files back as they were before `from` (after a rewind).
    RestoreFiles {
        versions: Vec<FileVersion>,
        from: u64,
    },
    /// Export a session (`None`: the current one) next to the project.
    Export {
        id: Option<String>,
        json: bool,
    },
    McpStatus,
    McpRestart(String),
    Permissions,
    /// Remember the theme in the global config.
    SaveTheme(String),
}

#[derive(Debug, Clone)]
pub enum ServiceMsg {
    Files(Vec<String>),
    Sessions {
        query: String,
        entries: Vec<BrowserEntry>,
        offset: usize,
    },
    Preview {
        id: String,
        lines: Vec<String>,
    },
    Resumed(Box<Resumed>),
    /// A delete that was not done, and why; the browser reloads its list.
    DeleteRefused(String),
    /// A session's prompts: (message id, text).
    Prompts {
        id: String,
        prompts: Vec<(i64, String)>,
    },
    /// A text to show in a panel (`/mcp`, `/permissions`).
    Text {
        title: String,
        text: String,
    },
    Info(NoticeLevel, String),
    /// Text to send as the person's prompt (an MCP prompt's result).
    SubmitPrompt(String),
}

/// Handles to the services; all optional so the interface runs without them.
#[derive(Clone, Default)]
pub struct Services {
    pub store: Option<Arc<Mutex<Store>>>,
    pub recorded: Option<Arc<Mutex<Recorded>>>,
    pub mcp: Option<Arc<McpManager>>,
    pub project_root: PathBuf,
    pub project_config: PathBuf,
    pub global_config: Option<PathBuf>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("store", &self.store.is_some())
            .field("mcp", &self.mcp.is_some())
            .field("project_root", &self.project_root)
            .finish()
    }
}

impl Services {
    pub fn current_session(&self) -> Option<SessionId> {
        self.recorded.as_ref().and_then(|r| lock(r).session.clone())
    }

    /// Runs `cmd` in the background; the answer comes back through `tx`.
    pub fn run(&self, cmd: ServiceCmd, tx: UnboundedSender<Msg>) {
        let svc = self.clone();
        match cmd {
            ServiceCmd::McpStatus => {
                let text = match &self.mcp {
                    Some(m) => {
                        let s = m.statuses();
                        if s.is_empty() {
                            format!(
                                "No MCP servers are configured. Add one as [mcp.NAME] in {}.",
                                self.project_config.display()
                            )
                        } else {
                            format!(
                                "{}\nRestart one with /mcp restart <name>.",
                                crate::mcp::format_status(&s)
                            )
                        }
                    }
                    None => "MCP is not running.".into(),
                };
                let mcp = self.mcp.clone();
                tokio::spawn(async move {
                    let mut text = text;
                    let prompts = match &mcp {
                        Some(m) => m.prompt_commands().await,
                        None => Vec::new(),
                    };
                    if !prompts.is_empty() {
                        text.push_str("\nPrompts (type one to send it):\n");
                        for p in prompts {
                            text.push_str(&format!("  {p}\n"));
                        }
                    }
                    let _ = tx.send(Msg::Service(ServiceMsg::Text {
                        title: "MCP servers".into(),
                        text,
                    }));
                });
            }
            ServiceCmd::McpPrompt(command) => {
                let mcp = self.mcp.clone();
                tokio::spawn(async move {
                    let reply = match mcp {
                        Some(m) => match m.expand_prompt(&command).await {
                            Ok(text) => ServiceMsg::SubmitPrompt(text),
                            Err(why) => ServiceMsg::Info(NoticeLevel::Warning, why),
                        },
                        None => {
                            ServiceMsg::Info(NoticeLevel::Warning, "MCP is not running.".into())
                        }
                    };
                    let _ = tx.send(Msg::Service(reply));
                });
            }
            ServiceCmd::ListFiles => {
                let root = self.project_root.clone();
                let mcp = self.mcp.clone();
                tokio::spawn(async move {
                    let mut files = tokio::task::spawn_blocking(move || {
                        crate::tui::widgets::picker::workspace_files(&root, 20_000)
                    })
                    .await
                    .unwrap_or_default();
                    if let Some(m) = mcp {
                        files.extend(m.resource_refs().await);
                    }
                    let _ = tx.send(Msg::Service(ServiceMsg::Files(files)));
                });
            }
            ServiceCmd::McpRestart(name) => {
                let msg = match self.mcp.as_ref().map(|m| m.restart(&name)) {
                    Some(Ok(())) => (
                        NoticeLevel::Info,
                        format!("Restarting MCP server `{name}`…"),
                    ),
                    Some(Err(e)) => (NoticeLevel::Warning, e),
                    None => (NoticeLevel::Warning, "MCP is not running.".into()),
                };
                let _ = tx.send(Msg::Service(ServiceMsg::Info(msg.0, msg.1)));
            }
            other => {
                tokio::task::spawn_blocking(move || {
                    let reply = svc.blocking(other);
                    let _ = tx.send(Msg::Service(reply));
                });
            }
        }
    }

    fn blocking(&self, cmd: ServiceCmd) -> ServiceMsg {
        match self.try_blocking(cmd) {
            Ok(m) => m,
            Err(e) => ServiceMsg::Info(NoticeLevel::Error, e),
        }
    }

    fn store(&self) -> Result<std::sync::MutexGuard<'_, Store>, String> {
        self.store.as_ref().map(|s| lock(s)).ok_or_else(|| {
            "The session store is not available (see the notice at start-up).".into()
        })
    }

    fn try_blocking(&self, cmd: ServiceCmd) -> Result<ServiceMsg, String> {
        let err = |e: crate::store::StoreError| e.to_string();
        Ok(match cmd {
            ServiceCmd::QuerySessions { text, all, offset } => {
                let store = self.store()?;
                let root = (!all).then_some(self.project_root.as_path());
                let entries = if text.trim().is_empty() {
                    store
                        .list_sessions(&ListFilter {
                            project_root: root,
                            limit: crate::tui::widgets::session_browser::BROWSER_PAGE,
                            offset,
                        })
                        .map_err(err)?
                        .iter()
                        .map(|s| entry(s, None))
                        .collect()
                } else if offset > 0 {
                    // Search results come ranked in one page.
                    Vec::new()
                } else {
                    let hits = store
                        .search(
                            &text,
                            &SearchFilter {
                                project_root: root,
                                limit: 200,
                                one_per_session: true,
                            },
                        )
                        .map_err(err)?;
                    let mut seen = std::collections::HashSet::new();
                    let mut out = Vec::new();
                    for h in hits {
                        if !seen.insert(h.session_id.clone()) {
                            continue;
                        }
                        let s = store.session(&h.session_id).map_err(err)?;
                        out.push(entry(&s, Some(h.snippet)));
                    }
                    out
                };
                ServiceMsg::Sessions {
                    query: text,
                    entries,
                    offset,
                }
            }
            ServiceCmd::Preview(id) => {
                let store = self.store()?;
                let messages = store.load_messages(&SessionId(id.clone())).map_err(err)?;
                ServiceMsg::Preview {
                    id,
                    lines: preview_lines(messages.iter().map(|m| &m.1), 200),
                }
            }
            ServiceCmd::Resume(id) => {
                let store = self.store()?;
                let loaded = load_session(&store, &SessionId(id)).map_err(err)?;
                ServiceMsg::Resumed(Box::new(Resumed {
                    loaded,
                    draft: None,
                    later: None,
                }))
            }
            ServiceCmd::Prompts(id) => {
                let store = self.store()?;
                let prompts = store
                    .load_messages(&SessionId(id.clone()))
                    .map_err(err)?
                    .into_iter()
                    .filter(|(_, m, _)| {
                        m.role == Role::User
                            && m.parts.iter().any(|p| matches!(p, Part::Text { .. }))
                    })
                    .map(|(mid, m, _)| (mid.0, m.text()))
                    .collect();
                ServiceMsg::Prompts { id, prompts }
            }
            ServiceCmd::ForkBefore {
                id,
                message,
                in_place,
            } => {
                if in_place && self.current_session().is_some_and(|c| c.0 == id) {
                    return Ok(ServiceMsg::Info(
                        NoticeLevel::Info,
                        "That is the session you are in: rewind it with Esc Esc.".into(),
                    ));
                }
                let mut store = self.store()?;
                let sid = SessionId(id);
                let stored = store.load_messages(&sid).map_err(err)?;
                let pos = stored
                    .iter()
                    .position(|(mid, _, _)| mid.0 == message)
                    .ok_or("that message is no longer in the session")?;
                let draft = stored[pos].1.text();
                let from = stored[pos].2.turn;
                let last = stored.iter().map(|m| m.2.turn).max().unwrap_or(from);
                let later_lost: Vec<(String, String)> = store
                    .lost_files(&sid)
                    .map_err(err)?
                    .into_iter()
                    .filter(|l| l.turn >= from)
                    .map(|l| (l.path.display().to_string(), l.why))
                    .collect();
                let mut later = Vec::new();
                for turn in from..=last {
                    for v in store.file_versions(&sid, turn).map_err(err)? {
                        later.push(FileVersion {
                            path: v.path,
                            before: v.content,
                            turn,
                        });
                    }
                }
                let Some(keep) = pos.checked_sub(1).map(|p| stored[p].0) else {
                    return Ok(ServiceMsg::Info(
                        NoticeLevel::Info,
                        "That is the session's first prompt: /new starts from nothing.".into(),
                    ));
                };
                let new = if in_place {
                    store.truncate_after(&sid, keep).map_err(err)?;
                    sid
                } else {
                    store.fork_session(&sid, Some(keep)).map_err(err)?
                };
                let loaded = load_session(&store, &new).map_err(err)?;
                ServiceMsg::Resumed(Box::new(Resumed {
                    loaded,
                    draft: Some(draft),
                    later: (!later.is_empty() || !later_lost.is_empty()).then_some(Later {
                        from,
                        versions: later,
                        lost: later_lost,
                    }),
                }))
            }
            ServiceCmd::Rename { id, title } => {
                let sid = match id {
                    Some(i) => SessionId(i),
                    None => self
                        .current_session()
                        .ok_or("This session has no messages yet; it is named when it starts.")?,
                };
                self.store()?.rename(&sid, &title).map_err(err)?;
                ServiceMsg::Info(
                    NoticeLevel::Info,
                    format!("Renamed the session to “{title}”."),
                )
            }
            ServiceCmd::Delete(id) => {
                if self.current_session().is_some_and(|c| c.0 == id) {
                    return Ok(ServiceMsg::DeleteRefused(
                        "That is the session you are in, so it stays: start another with /new, then delete this one.".into(),
                    ));
                }
                self.store()?.delete_session(&SessionId(id)).map_err(err)?;
                ServiceMsg::Info(NoticeLevel::Info, "Deleted the session.".into())
            }
            ServiceCmd::Fork(id) => {
                let new = self
                    .store()?
                    .fork_session(&SessionId(id), None)
                    .map_err(err)?;
                ServiceMsg::Info(
                    NoticeLevel::Info,
                    format!(
                        "Forked into a new session {}; find it in the browser (Ctrl+S).",
                        &new.0[..8.min(new.0.len())]
                    ),
                )
            }
            ServiceCmd::Export { id, json } => {
                let sid = match id {
                    Some(i) => SessionId(i),
                    None => self
                        .current_session()
                        .ok_or("This session has no messages yet; there is nothing to export.")?,
                };
                let store = self.store()?;
                let (text, ext) = if json {
                    (
                        serde_json::to_string_pretty(&store.export_json(&sid).map_err(err)?)
                            .map_err(|e| e.to_string())?,
                        "json",
                    )
                } else {
                    (store.export_markdown(&sid).map_err(err)?, "md")
                };
                let path = self.project_root.join(format!(
                    "cairn-session-{}.{ext}",
                    &sid.0[..8.min(sid.0.len())]
                ));
                // A conversation is private: 0600, like the database.
                crate::private::write(&path, text.as_bytes())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                ServiceMsg::Info(NoticeLevel::Info, format!("Exported to {}", path.display()))
            }
            ServiceCmd::RestoreFiles { versions, from } => {
                let to = versions.iter().map(|v| v.turn).max().unwrap_or(from);
                let (done, failed) =
                    crate::agent::undo::apply_range(&versions, from, to, &self.project_root);
                let mut text = format!("Restored {} file(s): {}", done.len(), done.join(", "));
                for (path, why) in failed {
                    text.push_str(&format!("\nCould not restore {path}: {why}"));
                }
                ServiceMsg::Info(NoticeLevel::Info, text)
            }
            ServiceCmd::Permissions => {
                let mut text = String::new();
                for path in self
                    .global_config
                    .iter()
                    .chain(std::iter::once(&self.project_config))
                {
                    let rules =
                        crate::permission::store::list_rules(path).map_err(|e| e.to_string())?;
                    if rules.allow.is_empty() && rules.deny.is_empty() {
                        continue;
                    }
                    text.push_str(&format!("{}\n", path.display()));
                    for r in &rules.allow {
                        text.push_str(&format!("  allow  {r}\n"));
                    }
                    for r in &rules.deny {
                        text.push_str(&format!("  deny   {r}\n"));
                    }
                }
                if text.is_empty() {
                    text = "No permission rules are stored. \"Allow always\" in a permission dialog adds one; `cairn permissions remove RULE` takes one away.".into();
                }
                ServiceMsg::Text {
                    title: "Permission rules".into(),
                    text,
                }
            }
            ServiceCmd::SaveTheme(name) => {
                let path = self
                    .global_config
                    .clone()
                    .ok_or("no config directory on this system")?;
                save_setting(&path, "theme", &name)?;
                ServiceMsg::Info(
                    NoticeLevel::Info,
                    format!("Theme “{name}” saved in {}.", path.display()),
                )
            }
            ServiceCmd::McpStatus
            | ServiceCmd::McpRestart(_)
            | ServiceCmd::McpPrompt(_)
            | ServiceCmd::ListFiles => {
                return Err("handled on the interface thread".into());
            }
        })
    }
}

/// A session loaded to continue in the interface.
#[derive(Debug, Clone)]
pub struct Resumed {
    pub loaded: LoadedSession,
    /// Text to put back in the prompt (after a rewind).
    pub draft: Option<String>,
    /// After a rewind: what the original's later turns changed.
    pub later: Option<Later>,
}

/// The files the turns after a rewind point changed in the original.
#[derive(Debug, Clone)]
pub struct Later {
    /// The first of those turns.
    pub from: u64,
    /// Their file versions, to put the files back as they were then.
    pub versions: Vec<FileVersion>,
    /// Files of those turns that cannot be put back: (path, why).
    pub lost: Vec<(String, String)>,
}

/// A stored session ready to continue.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub summary: crate::store::SessionSummary,
    /// The messages, undone turns included (as the model saw them).
    pub messages: Vec<Message>,
    /// The file versions, so undo works after a resume.
    pub versions: Vec<FileVersion>,
    /// How each tool call ended, for the rebuilt transcript.
    pub runs: crate::tui::history::Runs,
    /// The session's cost so far; `None` when no price was ever known.
    pub cost: Option<f64>,
    /// Files its turns changed that cannot be restored (undone turns left
    /// out, as their versions are).
    pub lost: Vec<crate::store::LostFile>,
}

impl LoadedSession {
    /// The session's id, as the agent and the notices use it.
    pub fn id(&self) -> &str {
        self.summary.id.as_str()
    }

    /// The command that has the agent continue this session.
    pub fn load_command(&self) -> crate::agent::AgentCommand {
        crate::agent::AgentCommand::LoadHistory {
            messages: self.messages.clone(),
            versions: self.versions.clone(),
            session_id: Some(self.id().to_string()),
            cost: self.cost,
            lost: self.lost.clone(),
        }
    }

    /// "Resumed session 01a2b3c4 (12 messages)."
    pub fn resumed_notice(&self) -> String {
        let id = self.id();
        format!(
            "Resumed session {} ({} messages).",
            &id[..8.min(id.len())],
            self.messages.len()
        )
    }
}

/// Loads `id` from the store, ready to continue.
pub fn load_session(
    store: &Store,
    id: &SessionId,
) -> Result<LoadedSession, crate::store::StoreError> {
    let summary = store.session(id)?;
    let stored = store.load_messages(id)?;
    let undone_turns: std::collections::BTreeSet<u64> = stored
        .iter()
        .filter(|m| m.2.status == crate::store::MessageStatus::Undone)
        .map(|m| m.2.turn)
        .collect();
    let shown = |p: &std::path::Path| {
        summary
            .project_root
            .as_deref()
            .and_then(|r| p.strip_prefix(r).ok())
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let mut versions = Vec::new();
    let mut undone = Vec::new();
    let max_turn = stored.iter().map(|m| m.2.turn).max().unwrap_or(0);
    for turn in 1..=max_turn {
        let of_turn = store.file_versions(id, turn)?;
        if undone_turns.contains(&turn) {
            // Already put back: undo must not offer this turn again.
            let mut files: Vec<String> = Vec::new();
            for v in &of_turn {
                let f = shown(&v.path);
                if !files.contains(&f) {
                    files.push(f);
                }
            }
            undone.push((turn, files));
            continue;
        }
        for v in of_turn {
            versions.push(FileVersion {
                path: v.path,
                before: v.content,
                turn,
            });
        }
    }
    let priced = stored.iter().any(|m| m.2.cost.is_some());
    // Undone turns stay in the conversation, as they did when the undo
    // happened: the model was told, and turn numbers keep their meaning.
    let messages = stored.into_iter().map(|m| m.1).collect();
    let mut runs = crate::tui::history::runs_from_store(store.tool_runs(id)?);
    runs.undone = undone;
    let lost = store
        .lost_files(id)?
        .into_iter()
        .filter(|l| !undone_turns.contains(&l.turn))
        .collect();
    Ok(LoadedSession {
        lost,
        cost: priced.then_some(summary.cost),
        summary,
        messages,
        versions,
        runs,
    })
}

/// A browser row for a stored session.
fn entry(s: &crate::store::SessionSummary, snippet: Option<String>) -> BrowserEntry {
    BrowserEntry {
        id: s.id.0.clone(),
        title: s.title.clone().unwrap_or_default(),
        updated_at: s.updated_at,
        message_count: s.message_count,
        first_prompt: s.first_prompt.clone().unwrap_or_default(),
        project: s
            .project_root
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        snippet,
    }
}

/// Sets a top-level string key in a TOML file, keeping the rest as it was.
fn save_setting(path: &std::path::Path, key: &str, value: &str) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{} is not valid TOML: {e}", path.display()))?;
    doc[key] = toml_edit::value(value);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, doc.to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A plain-text look at a session for the browser's preview pane.
pub fn preview_lines<'a>(messages: impl Iterator<Item = &'a Message>, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let tools = crate::tools::Registry::builtin();
    for m in messages {
        for p in &m.parts {
            let line = match (m.role, p) {
                (Role::User, Part::Text { text }) => format!("› {}", first_line(text)),
                (Role::Assistant, Part::Text { text }) => first_line(text),
                (_, Part::ToolCall { name, input, .. }) => format!(
                    "  ⚙ {}",
                    first_line(&crate::tui::history::summary_of(&tools, name, input))
                ),
                (
                    _,
                    Part::ToolResult {
                        content,
                        is_error: true,
                        ..
                    },
                ) => {
                    format!("    ✗ {}", first_line(&result_text(content)))
                }
                _ => continue,
            };
            out.push(line);
            if out.len() >= max {
                return out;
            }
        }
    }
    out
}

fn first_line(s: &str) -> String {
    let l = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    l.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two turns, "alpha" then "beta", each answered; the message ids.
    fn alpha_beta(store: &mut Store, id: &SessionId) -> Vec<crate::store::MessageId> {
        [
            (1, Message::user_text("alpha")),
            (1, Message::assistant_text("a")),
            (2, Message::user_text("beta")),
            (2, Message::assistant_text("b")),
        ]
        .into_iter()
        .map(|(turn, m)| {
            let meta = crate::store::MessageMeta {
                turn,
                ..Default::default()
            };
            store.append_message(id, &m, &meta).unwrap()
        })
        .collect()
    }

    #[test]
    fn fork_before_a_prompt_keeps_what_came_before_and_returns_the_prompt() {
        use crate::store::NewSession;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("s.db")).unwrap();
        let id = store.create_session(&NewSession::default()).unwrap();
        let ids = alpha_beta(&mut store, &id);
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "changed in turn 2").unwrap();
        store
            .record_file_version(&id, 2, &file, Some(b"before turn 2"))
            .unwrap();
        let svc = Services {
            store: Some(Arc::new(Mutex::new(store))),
            project_root: dir.path().to_path_buf(),
            ..Services::default()
        };
        match svc.try_blocking(ServiceCmd::Prompts(id.0.clone())).unwrap() {
            ServiceMsg::Prompts { prompts, .. } => {
                assert_eq!(
                    prompts,
                    vec![(ids[0].0, "alpha".into()), (ids[2].0, "beta".into())]
                )
            }
            other => panic!("{other:?}"),
        }
        let reply = svc
            .try_blocking(ServiceCmd::ForkBefore {
                id: id.0.clone(),
                message: ids[2].0,
                in_place: false,
            })
            .unwrap();
        match reply {
            ServiceMsg::Resumed(r) => {
                assert_ne!(r.loaded.id(), id.0, "a fork, not the original");
                assert_eq!(r.loaded.messages.len(), 2);
                assert_eq!(r.draft.as_deref(), Some("beta"));
            }
            other => panic!("{other:?}"),
        }
        // The original keeps all four messages.
        let original = lock(svc.store.as_ref().unwrap())
            .load_messages(&id)
            .unwrap();
        assert_eq!(original.len(), 4);
    }

    #[test]
    fn save_setting_keeps_comments() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c/config.toml");
        save_setting(&p, "theme", "light").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap().trim(),
            "theme = \"light\""
        );
        std::fs::write(
            &p,
            "# mine\ntheme = \"light\"\n[permissions]\nmode = \"auto\"\n",
        )
        .unwrap();
        save_setting(&p, "theme", "dark").unwrap();
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(
            t.contains("# mine") && t.contains("theme = \"dark\"") && t.contains("mode = \"auto\""),
            "{t}"
        );
    }

    #[test]
    fn the_session_in_use_is_not_deleted() {
        use crate::store::NewSession;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("s.db")).unwrap();
        let current = store.create_session(&NewSession::default()).unwrap();
        let other = store.create_session(&NewSession::default()).unwrap();
        let svc = Services {
            store: Some(Arc::new(Mutex::new(store))),
            recorded: Some(Arc::new(Mutex::new(Recorded {
                session: Some(current.clone()),
                ..Recorded::default()
            }))),
            project_root: dir.path().to_path_buf(),
            ..Services::default()
        };
        let reply = svc.try_blocking(ServiceCmd::Delete(current.0.clone()));
        assert!(
            matches!(&reply, Ok(ServiceMsg::DeleteRefused(why)) if why.contains("/new")),
            "{reply:?}"
        );
        let reply = svc.try_blocking(ServiceCmd::Delete(other.0.clone()));
        assert!(matches!(reply, Ok(ServiceMsg::Info(..))), "{reply:?}");
        let store = lock(svc.store.as_ref().unwrap());
        assert!(store.session(&current).is_ok(), "the session in use stays");
        assert!(store.session(&other).is_err(), "the other one is gone");
    }

    #[test]
    fn an_undone_turn_is_resumed_as_it_was_and_not_offered_again() {
        use crate::store::NewSession;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("s.db")).unwrap();
        let id = store
            .create_session(&NewSession {
                project_root: Some(dir.path().to_path_buf()),
                ..NewSession::default()
            })
            .unwrap();
        alpha_beta(&mut store, &id);
        let file = dir.path().join("notes.txt");
        for turn in [1, 2] {
            store
                .record_file_version(&id, turn, &file, Some(b"before"))
                .unwrap();
        }
        store.mark_turn_undone(&id, 1).unwrap();
        let loaded = load_session(&store, &id).unwrap();
        assert_eq!(loaded.messages.len(), 4, "the undone turn stays");
        assert_eq!(
            loaded.versions.iter().map(|v| v.turn).collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(loaded.runs.undone, vec![(1, vec!["notes.txt".to_string()])]);

        let mut m = crate::tui::model::Model::new(
            "p".into(),
            "m".into(),
            crate::permission::Mode::Smart,
            dir.path().to_path_buf(),
            crate::tui::theme::Theme::default(),
        );
        crate::tui::history::rebuild(&mut m, &loaded.messages, &loaded.runs);
        let cells: Vec<String> = m.transcript.cells().iter().map(|c| c.copy_text()).collect();
        let at = cells
            .iter()
            .position(|c| c.contains("Undone: restored notes.txt"))
            .expect("a notice for the undone turn");
        assert!(
            cells[at - 1].contains('a') && cells[at + 1].contains("beta"),
            "{cells:?}"
        );
    }

    #[test]
    fn a_stored_session_can_be_cut_back_in_place_but_not_the_one_in_use() {
        use crate::store::NewSession;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("s.db")).unwrap();
        let id = store.create_session(&NewSession::default()).unwrap();
        let live = store.create_session(&NewSession::default()).unwrap();
        let ids = alpha_beta(&mut store, &id);
        alpha_beta(&mut store, &live);
        let svc = Services {
            store: Some(Arc::new(Mutex::new(store))),
            recorded: Some(Arc::new(Mutex::new(Recorded {
                session: Some(live.clone()),
                ..Recorded::default()
            }))),
            project_root: dir.path().to_path_buf(),
            ..Services::default()
        };
        match svc
            .try_blocking(ServiceCmd::ForkBefore {
                id: id.0.clone(),
                message: ids[2].0,
                in_place: true,
            })
            .unwrap()
        {
            ServiceMsg::Resumed(r) => {
                assert_eq!(r.loaded.id(), id.0, "the same session, cut back");
                assert_eq!(r.loaded.messages.len(), 2);
                assert_eq!(r.draft.as_deref(), Some("beta"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            lock(svc.store.as_ref().unwrap())
                .load_messages(&id)
                .unwrap()
                .len(),
            2
        );
        let reply = svc
            .try_blocking(ServiceCmd::ForkBefore {
                id: live.0.clone(),
                message: 0,
                in_place: true,
            })
            .unwrap();
        assert!(
            matches!(&reply, ServiceMsg::Info(_, t) if t.contains("Esc Esc")),
            "{reply:?}"
        );
        assert_eq!(
            lock(svc.store.as_ref().unwrap())
                .load_messages(&live)
                .unwrap()
                .len(),
            4
        );
    }
}
