//! Rebuilds the transcript of a stored session: prompts, answers, reasoning,
//! tool cells with their status and, for edits, their diffs.
//!
//! The store keeps how each call ended as the person saw it (status, the
//! diff against the whole file, how long it ran); those are used as they
//! are. Sessions recorded before that was kept fall back to reading the
//! status from the result text and the diff from the call's arguments.

use std::collections::HashMap;
use std::time::Duration;

use crate::agent::ToolStatus;
use crate::conversation::{Message, Part, Role, result_text};
use crate::tools::ToolDisplay;
use crate::tui::model::Model;
use crate::tui::widgets::cell::{AssistantText, CellKind};
use crate::tui::widgets::tool_cell::ToolCell;

/// How a stored tool call ended, as the interface showed it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub status: ToolStatus,
    pub display: Option<ToolDisplay>,
    pub elapsed: Option<Duration>,
}

/// What the store kept beyond the messages, for drawing them as they were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Runs {
    /// How each tool call ended, by call id.
    pub calls: HashMap<String, StoredRun>,
    /// Turns that `/undo` took back, with the files it restored: a notice
    /// follows each, as it did when the undo happened.
    pub undone: Vec<(u64, Vec<String>)>,
}

/// Reads the store's rows; a row with a status this build does not know is
/// left out (the call then falls back to its result text).
pub fn runs_from_store(rows: HashMap<String, crate::store::ToolRun>) -> Runs {
    let calls = rows
        .into_iter()
        .filter_map(|(id, r)| {
            let status = serde_json::from_value(serde_json::Value::String(r.status)).ok()?;
            let display = r.display.and_then(|d| serde_json::from_value(d).ok());
            Some((
                id,
                StoredRun {
                    status,
                    display,
                    elapsed: r.elapsed_ms.map(Duration::from_millis),
                },
            ))
        })
        .collect();
    Runs {
        calls,
        undone: Vec::new(),
    }
}

/// The status a stored result stands for (the store keeps what the model
/// was told; these are the words the agent uses for each outcome).
pub fn status_of(text: &str, is_error: bool) -> ToolStatus {
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

/// A diff for edit-like calls, from their own arguments.
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
    let (added, removed) = crate::diff::line_counts(&old, &new);
    Some(ToolDisplay::Diff(crate::diff::FileDiff {
        path,
        old,
        new,
        added,
        removed,
    }))
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

/// Shows a loaded session: its transcript, title, and the context and cost
/// it has used (estimated until the next response reports exact figures).
pub fn show(model: &mut Model, loaded: &crate::tui::services::LoadedSession) {
    rebuild(model, &loaded.messages, &loaded.runs);
    model.title = loaded.summary.title.clone();
    model.usage.context_tokens = crate::context::estimate_messages(&loaded.messages);
    model.usage.cost = loaded.cost;
}

/// Replaces the transcript with the cells of `messages`.
pub fn rebuild(model: &mut Model, messages: &[Message], runs: &Runs) {
    model.transcript = crate::tui::widgets::transcript::Transcript::new();
    let now = model.now;
    let tools = crate::tools::Registry::builtin();
    // Results arrive in the message after their calls.
    let mut results: HashMap<&str, (String, bool)> = HashMap::new();
    for m in messages {
        for p in &m.parts {
            if let Part::ToolResult {
                call_id,
                content,
                is_error,
            } = p
            {
                results.insert(call_id.as_str(), (result_text(content), *is_error));
            }
        }
    }
    let undone_notice = |model: &mut Model, turn: u64| {
        if let Some((_, files)) = runs.undone.iter().find(|(t, _)| *t == turn) {
            let text = if files.is_empty() {
                format!("Undone: turn {turn}")
            } else {
                format!("Undone: restored {}", files.join(", "))
            };
            crate::tui::update::notice(model, crate::agent::NoticeLevel::Info, text);
        }
    };
    let starts = crate::context::turn_starts(messages);
    let mut turn = 0u64;
    for (i, m) in messages.iter().enumerate() {
        if starts.binary_search(&i).is_ok() {
            undone_notice(model, turn);
            turn += 1;
        }
        match m.role {
            Role::User => {
                let prompt = m.parts.iter().rev().find_map(|p| match p {
                    Part::Text { text } if !text.starts_with(crate::context::SUMMARY_TAG) => {
                        Some(text.clone())
                    }
                    _ => None,
                });
                if let Some(p) = prompt {
                    model.transcript.push(CellKind::User(p));
                }
            }
            Role::Assistant => {
                for p in &m.parts {
                    match p {
                        Part::Reasoning { text, .. } if !text.is_empty() => {
                            model.transcript.push(CellKind::Reasoning {
                                text: text.clone(),
                                streaming: false,
                            });
                        }
                        Part::Text { text } if !text.is_empty() => {
                            let mut a = AssistantText::streaming(text.clone());
                            a.streaming = false;
                            model.transcript.push(CellKind::Assistant(a));
                        }
                        Part::ToolCall { id, name, input } => {
                            let mut cell = ToolCell::new(
                                id.clone(),
                                name.clone(),
                                summary_of(&tools, name, input),
                                now,
                            );
                            let (output, is_error) = results
                                .get(id.as_str())
                                .cloned()
                                .unwrap_or_else(|| ("(no result was recorded)".into(), true));
                            let stored = runs.calls.get(id.as_str());
                            let status = stored
                                .map(|r| r.status)
                                .unwrap_or_else(|| status_of(&output, is_error));
                            let display = match stored {
                                Some(StoredRun {
                                    display: Some(d), ..
                                }) => Some(d.clone()),
                                _ => (status == ToolStatus::Done)
                                    .then(|| display_of(name, input))
                                    .flatten(),
                            };
                            cell.finish(status, output, display, now);
                            if let Some(d) = stored.and_then(|r| r.elapsed) {
                                cell.elapsed = Some(d);
                            }
                            model.transcript.push(CellKind::Tool(Box::new(cell)));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    undone_notice(model, turn);
    model.transcript.to_bottom();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ResultContent;
    use serde_json::json;

    #[test]
    fn statuses_follow_the_agents_words() {
        assert_eq!(status_of("ok", false), ToolStatus::Done);
        assert_eq!(
            status_of("The person denied this call; it was not run.", true),
            ToolStatus::Denied
        );
        assert_eq!(
            status_of("The call was cancelled by the person.", true),
            ToolStatus::Cancelled
        );
        assert_eq!(status_of("exit code 2", true), ToolStatus::Failed);
    }

    #[test]
    fn stored_runs_are_read_and_unknown_statuses_left_out() {
        let row = |status: &str| crate::store::ToolRun {
            call_id: "c".into(),
            turn: 1,
            status: status.into(),
            display: Some(json!({"kind": "job", "job_id": "j1"})),
            elapsed_ms: Some(2500),
        };
        let runs = runs_from_store(HashMap::from([
            ("a".to_string(), row("denied")),
            ("b".to_string(), row("exploded")),
        ]))
        .calls;
        assert_eq!(runs.len(), 1);
        assert_eq!(
            runs["a"],
            StoredRun {
                status: ToolStatus::Denied,
                display: Some(ToolDisplay::Job {
                    job_id: "j1".into()
                }),
                elapsed: Some(Duration::from_millis(2500)),
            }
        );
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
        let _ = ResultContent::text("");
    }
}
