//! What a front end asks of stored sessions and what it gets back, with
//! the rows and loaded sessions those answers carry. The sessions service
//! (`crate::sessions`) answers; `cairn sessions …` uses the same types.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::conversation::{Message, ToolStatus};
use crate::store::{LostFile, SessionId, SessionSummary};
use crate::tools::ToolDisplay;
use crate::tools::restore::UndoPlan;
use crate::tools::state::FileVersion;

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
    /// Export a session: into the export directory, or to `to` as the
    /// person typed it (a file or a folder; relative to the workspace,
    /// `~/` for the home), never over a file that is there.
    Export {
        id: SessionId,
        json: bool,
        to: Option<String>,
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

/// How to continue a stored session from just before one of its prompts.
#[derive(Debug, Clone, PartialEq)]
pub struct RewindTo {
    pub id: SessionId,
    /// The prompt's message id.
    pub message: i64,
    /// Cut the session itself back instead of forking it.
    pub in_place: bool,
}

/// How to open a session that is open in another cairn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAs {
    Fork,
    ReadOnly,
}

impl Later {
    /// What putting back the files of turns `from..` would do now.
    pub fn plan(
        from: u64,
        versions: Vec<FileVersion>,
        lost: Vec<(String, String)>,
        workspace: &Path,
    ) -> Later {
        let to = versions.iter().map(|v| v.turn).max().unwrap_or(from);
        let mut plan = crate::tools::restore::plan_range(&versions, from, to, workspace);
        for (path, why) in lost {
            let shown = Path::new(&path)
                .strip_prefix(workspace)
                .map(|p| p.display().to_string())
                .unwrap_or(path);
            plan.unrestorable.push((shown, why));
        }
        Later {
            from,
            versions,
            plan,
        }
    }
}

/// One stored session as a list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    pub id: SessionId,
    pub title: String,
    /// Unix milliseconds of the last activity.
    pub updated_at: i64,
    pub message_count: u64,
    pub first_prompt: String,
    pub project: String,
    /// For search results: the matching text, with `\u{1}` … `\u{2}` around
    /// the matched words.
    pub snippet: Option<String>,
    /// A sub-agent's session: the session that started it.
    pub subagent_of: Option<SessionId>,
}

impl SessionEntry {
    pub fn new(s: &SessionSummary, snippet: Option<String>) -> Self {
        SessionEntry {
            id: s.id.clone(),
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
            subagent_of: s.parent_id.clone().filter(|_| s.subagent),
        }
    }
}

/// How one stored tool call ended, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCall {
    /// One line, as the tool sums up its call: `grep "fn main" src/`.
    pub summary: String,
    pub status: ToolStatus,
    /// What the model was told.
    pub output: String,
    pub display: Option<ToolDisplay>,
    pub elapsed: Option<Duration>,
}

/// What the store kept beyond the messages, for drawing them as they were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Runs {
    /// How each tool call ended, by call id.
    pub calls: HashMap<String, StoredCall>,
    /// Turns that `/undo` took back, with the files it restored: a notice
    /// follows each, as it did when the undo happened.
    pub undone: Vec<(u64, Vec<String>)>,
    /// Turns that did not complete: cancelled, failed, stopped at the limit.
    pub ends: Vec<crate::store::TurnEnd>,
    /// The session's compactions, oldest first: each shows its marker.
    pub compactions: Vec<CompactionMark>,
}

/// A compaction of a stored session, placed among its messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionMark {
    pub summary: String,
    /// The index of the first message the summary did not replace.
    pub first_kept: usize,
    /// The index of the message its marker comes before (the length of the
    /// history when it happened).
    pub at: usize,
    pub before_tokens: u64,
    pub after_tokens: u64,
}

/// A stored session ready to continue.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub summary: SessionSummary,
    /// The messages, undone turns included (as the model saw them).
    pub messages: Vec<Message>,
    /// The file versions, so undo works after a resume.
    pub versions: Vec<FileVersion>,
    /// How each tool call ended, for the rebuilt transcript.
    pub runs: Runs,
    /// The session's cost so far; `None` when no price was ever known.
    pub cost: Option<f64>,
    /// Files its turns changed that cannot be restored (undone turns left
    /// out, as their versions are).
    pub lost: Vec<LostFile>,
}

impl LoadedSession {
    pub fn id(&self) -> &SessionId {
        &self.summary.id
    }

    /// The latest compaction: the agent continues from its summary.
    pub fn compaction(&self) -> Option<&CompactionMark> {
        self.runs.compactions.last()
    }

    /// "Resumed session 01a2b3c4 (12 messages)."
    pub fn resumed_notice(&self) -> String {
        format!(
            "Resumed session {} ({} messages).",
            short_id(self.id()),
            self.messages.len()
        )
    }
}

/// The first eight characters of an id, as notices show it.
pub fn short_id(id: &SessionId) -> &str {
    let s = id.as_str();
    s.get(..8).unwrap_or(s)
}
