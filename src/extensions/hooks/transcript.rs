//! The session's transcript as JSON lines, the file a hook's
//! `transcript_path` names: one line per message as it is added, in the
//! shape Claude Code's transcripts have (`type`, `message.role`,
//! `message.content` blocks, tools under the names hooks know), so a
//! script that reads the last assistant message finds it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::conversation::{Message, Part, ResultContent, Role};

pub struct Transcript {
    /// Where transcripts are kept; `None`: nowhere (none is written).
    dir: Option<PathBuf>,
    session: Mutex<String>,
}

impl Transcript {
    pub fn new(dir: Option<PathBuf>) -> Transcript {
        if let Some(d) = &dir {
            prune(d, KEEP);
        }
        let t = Transcript {
            dir,
            session: Mutex::new(uuid::Uuid::new_v4().to_string()),
        };
        t.create();
        t
    }

    /// Makes the (empty) file, so it exists from the session's start: a
    /// sandboxed hook may read only what exists when it starts.
    fn create(&self) {
        let Some(path) = self.path() else {
            return;
        };
        if let Err(e) = open(&path) {
            tracing::warn!("cannot make the hook transcript {}: {e}", path.display());
        }
    }

    /// The id hooks see as `session_id`.
    pub fn session_id(&self) -> String {
        crate::sync::lock(&self.session).clone()
    }

    /// The file of the current session (it may not exist yet).
    pub fn path(&self) -> Option<PathBuf> {
        let id = self.session_id();
        self.dir.as_ref().map(|d| d.join(format!("{id}.jsonl")))
    }

    /// A new session: a new id and a new file.
    pub fn restart(&self) {
        *crate::sync::lock(&self.session) = uuid::Uuid::new_v4().to_string();
        self.create();
    }

    /// Adds a message; a failure is logged, never stops the session.
    pub fn append(&self, message: &Message, cwd: &std::path::Path) {
        let Some(path) = self.path() else {
            return;
        };
        let line = json!({
            "type": if message.role == Role::User { "user" } else { "assistant" },
            "sessionId": self.session_id(),
            "cwd": cwd,
            "timestamp": chrono::Utc::now().to_rfc3339(),
            "message": {
                "role": if message.role == Role::User { "user" } else { "assistant" },
                "content": message.parts.iter().filter_map(block).collect::<Vec<_>>(),
            },
        });
        if let Err(e) = write_line(&path, &line) {
            tracing::warn!("cannot write the hook transcript {}: {e}", path.display());
        }
    }
}

/// How long a session's hook transcript is kept after it was last written.
const KEEP: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Removes the transcripts in `dir` last written longer ago than `keep`
/// (only `*.jsonl` files, never through a link).
fn prune(dir: &std::path::Path, keep: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for e in entries.flatten() {
        let path = e.path();
        let old = (e.metadata().ok())
            .filter(|m| m.is_file())
            .and_then(|m| m.modified().ok())
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > keep);
        if old && path.extension().is_some_and(|x| x == "jsonl") {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Opens the transcript for appending, made private (0600 in a 0700
/// folder) when new.
fn open(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

fn write_line(path: &std::path::Path, line: &Value) -> std::io::Result<()> {
    open(path)?.write_all(format!("{line}\n").as_bytes())
}

/// One content block, as Anthropic's messages (and Claude Code) write it.
fn block(part: &Part) -> Option<Value> {
    Some(match part {
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::Reasoning { text, .. } => json!({"type": "thinking", "thinking": text}),
        Part::ToolCall { id, name, input } => json!({
            "type": "tool_use",
            "id": id,
            "name": super::names::claude_name(name),
            "input": input,
        }),
        Part::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            let text: Vec<&str> = content
                .iter()
                .filter_map(|c| match c {
                    ResultContent::Text { text } => Some(text.as_str()),
                    ResultContent::Image { .. } => None,
                })
                .collect();
            json!({
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": text.join("\n"),
                "is_error": is_error,
            })
        }
        Part::WebSearch(search) => json!({"type": "text", "text": search.text()}),
        Part::Image { .. } | Part::ProviderData { .. } | Part::Citations { .. } => return None,
    })
}

#[cfg(test)]
mod prune_tests {
    #[test]
    fn old_transcripts_go_and_recent_ones_stay() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("old.jsonl");
        let new = d.path().join("new.jsonl");
        let other = d.path().join("notes.txt");
        for p in [&old, &new, &other] {
            std::fs::write(p, "{}\n").unwrap();
        }
        let month = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 24 * 3600);
        for p in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(month)
                .unwrap();
        }
        super::prune(d.path(), super::KEEP);
        assert!(!old.exists());
        assert!(new.exists());
        assert!(other.exists());
    }
}
