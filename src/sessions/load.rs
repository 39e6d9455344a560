//! A stored session rebuilt into what a front end and the agent need to
//! continue it: its messages, the file versions undo works from, and how
//! each tool call ended (status, diff, duration, one-line summary).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::Duration;

use crate::conversation::{Message, Part, ToolStatus, result_text};
use crate::protocol::{CompactionMark, LoadedSession, Runs, StoredCall};
use crate::store::{MessageStatus, SessionId, Store, StoreError, ToolRun};
use crate::tools::ToolDisplay;
use crate::tools::state::FileVersion;

/// Loads `id` from the store, ready to continue.
pub fn load(store: &Store, id: &SessionId) -> Result<LoadedSession, StoreError> {
    let summary = store.session(id)?;
    let stored = store.load_messages(id)?;
    let undone_turns: BTreeSet<u64> = stored
        .iter()
        .filter(|m| m.2.status == MessageStatus::Undone)
        .map(|m| m.2.turn)
        .collect();
    let root = summary.project_root.clone();
    let shown = |p: &Path| {
        root.as_deref()
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
    let compactions = marks(&stored, store.compactions(id)?);
    // Undone turns stay in the conversation, as they did when the undo
    // happened: the model was told, and turn numbers keep their meaning.
    let messages: Vec<Message> = stored.into_iter().map(|m| m.1).collect();
    let runs = Runs {
        calls: calls(&messages, store.tool_runs(id)?),
        undone,
        ends: store.turn_ends(id)?,
        compactions,
    };
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

/// Places each compaction among the stored messages: the summary stands for
/// the messages of turns before its `from_turn`.
fn marks(
    stored: &[(crate::store::MessageId, Message, crate::store::MessageMeta)],
    rows: Vec<crate::store::StoredCompaction>,
) -> Vec<CompactionMark> {
    rows.into_iter()
        .map(|row| {
            let c = row.compaction;
            let first_kept = stored
                .iter()
                .position(|m| m.2.turn >= c.from_turn)
                .unwrap_or(stored.len());
            CompactionMark {
                summary: c.summary,
                first_kept,
                at: (c.at_count as usize).clamp(first_kept, stored.len()),
                before_tokens: c.before_tokens,
                after_tokens: c.after_tokens,
            }
        })
        .collect()
}

/// Every tool call of `messages` with how it ended: the store's row where
/// there is one (every call since schema v4), else what its result says.
pub fn calls(messages: &[Message], rows: HashMap<String, ToolRun>) -> HashMap<String, StoredCall> {
    let tools = crate::tools::Registry::builtin();
    // Results arrive in the message after their calls.
    let mut results: HashMap<&str, (String, bool)> = HashMap::new();
    for p in messages.iter().flat_map(|m| &m.parts) {
        if let Part::ToolResult {
            call_id,
            content,
            is_error,
        } = p
        {
            results.insert(call_id.as_str(), (result_text(content), *is_error));
        }
    }
    let mut out = HashMap::new();
    for p in messages.iter().flat_map(|m| &m.parts) {
        let Part::ToolCall { id, name, input } = p else {
            continue;
        };
        let (output, is_error) = results
            .get(id.as_str())
            .cloned()
            .unwrap_or_else(|| ("(no result was recorded)".into(), true));
        let row = rows.get(id);
        let status = match row {
            Some(r) => r.status,
            None if is_error => ToolStatus::Failed,
            None => ToolStatus::Done,
        };
        let display = row
            .and_then(|r| r.display.clone())
            .and_then(|d| serde_json::from_value(d).ok())
            .or_else(|| {
                (status == ToolStatus::Done)
                    .then(|| display_of(name, input))
                    .flatten()
            });
        let call = StoredCall {
            summary: summary_of(&tools, name, input),
            status,
            output,
            display,
            elapsed: row.and_then(|r| r.elapsed_ms).map(Duration::from_millis),
        };
        out.insert(id.clone(), call);
    }
    out
}

/// A diff for edit-like calls recorded without one, from their arguments.
fn display_of(name: &str, input: &serde_json::Value) -> Option<ToolDisplay> {
    let path = input["file_path"].as_str()?.to_string();
    let (old, new) = match name {
        "edit" => (
            input["old_string"].as_str()?.to_string(),
            input["new_string"].as_str()?.to_string(),
        ),
        "write" => (String::new(), input["content"].as_str()?.to_string()),
        _ => return None,
    };
    Some(ToolDisplay::Diff(crate::diff::FileDiff::new(
        path, old, new,
    )))
}

/// Summaries as the tools make them, when the registry knows the tool.
pub(crate) fn summary_of(
    tools: &crate::tools::Registry,
    name: &str,
    input: &serde_json::Value,
) -> String {
    match tools.get(name) {
        Some(t) => t.summary(input),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ResultContent;
    use serde_json::json;

    fn call(id: &str, name: &str, input: serde_json::Value) -> Message {
        Message {
            role: crate::conversation::Role::Assistant,
            parts: vec![Part::ToolCall {
                id: id.into(),
                name: name.into(),
                input,
            }],
        }
    }

    fn result(id: &str, text: &str, is_error: bool) -> Message {
        Message {
            role: crate::conversation::Role::User,
            parts: vec![Part::ToolResult {
                call_id: id.into(),
                content: vec![ResultContent::text(text)],
                is_error,
            }],
        }
    }

    #[test]
    fn stored_rows_are_used_and_calls_without_one_read_their_result() {
        let messages = vec![
            call("a", "bash", json!({"command": "ls"})),
            result("a", "The person denied this call.", true),
            call("b", "bash", json!({"command": "false"})),
            result("b", "exit 1", true),
            call("c", "bash", json!({"command": "true"})),
        ];
        let rows = HashMap::from([(
            "a".to_string(),
            ToolRun {
                call_id: "a".into(),
                turn: 1,
                status: ToolStatus::Denied,
                display: Some(json!({"kind": "job", "job_id": "j1"})),
                elapsed_ms: Some(2500),
            },
        )]);
        let c = calls(&messages, rows);
        assert_eq!(
            c["a"],
            StoredCall {
                summary: "bash ls".into(),
                status: ToolStatus::Denied,
                output: "The person denied this call.".into(),
                display: Some(ToolDisplay::Job {
                    job_id: "j1".into()
                }),
                elapsed: Some(Duration::from_millis(2500)),
            }
        );
        assert_eq!(c["b"].status, ToolStatus::Failed);
        assert_eq!(c["c"].status, ToolStatus::Failed);
        assert_eq!(c["c"].output, "(no result was recorded)");
    }

    #[test]
    fn edits_get_their_diff_back() {
        let d = display_of(
            "edit",
            &json!({"file_path": "a.rs", "old_string": "x\n", "new_string": "y\nz\n"}),
        );
        assert!(matches!(
            d,
            Some(ToolDisplay::Diff(crate::diff::FileDiff {
                added: 2,
                removed: 1,
                ..
            }))
        ));
        assert!(display_of("bash", &json!({"command": "ls"})).is_none());
    }
}
