//! Rebuilds the transcript of a stored session: prompts, answers, reasoning,
//! tool cells with their status and, for edits, their diffs. The sessions
//! service has worked out how each call ended (`sessions::Runs`); this only
//! turns that into cells.

use crate::conversation::{Message, Part, Role};
use crate::sessions::{LoadedSession, Runs};
use crate::tui::model::Model;
use crate::tui::widgets::cell::{AssistantText, CellKind};
use crate::tui::widgets::tool_cell::ToolCell;

/// Shows a loaded session: its transcript, title, and the context and cost
/// it has used (estimated until the next response reports exact figures).
pub fn show(model: &mut Model, loaded: &LoadedSession) {
    rebuild(model, &loaded.messages, &loaded.runs);
    model.title = loaded.summary.title.clone();
    model.usage.context_tokens = crate::context::estimate_messages(&loaded.messages);
    model.usage.cost = loaded.cost;
}

/// Replaces the transcript with the cells of `messages`.
pub fn rebuild(model: &mut Model, messages: &[Message], runs: &Runs) {
    model.transcript = crate::tui::widgets::transcript::Transcript::new();
    let now = model.now;
    let undone_notice = |model: &mut Model, turn: u64| {
        if let Some((_, files)) = runs.undone.iter().find(|(t, _)| *t == turn) {
            let text = if files.is_empty() {
                format!("Undone: turn {turn}")
            } else {
                format!("Undone: restored {}", files.join(", "))
            };
            model.notice(crate::agent::NoticeLevel::Info, text);
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
                        Part::ToolCall {
                            id, name, input, ..
                        } => {
                            let stored = runs.calls.get(id.as_str());
                            let summary =
                                stored.map_or_else(|| name.clone(), |c| c.summary.clone());
                            let mut cell = ToolCell::new(id.clone(), name.clone(), summary, now)
                                .with_input(input);
                            match stored {
                                Some(c) => {
                                    cell.finish(c.status, c.output.clone(), c.display.clone(), now);
                                    if let Some(d) = c.elapsed {
                                        cell.elapsed = Some(d);
                                    }
                                }
                                None => cell.finish(
                                    crate::conversation::ToolStatus::Failed,
                                    "(no result was recorded)".into(),
                                    None,
                                    now,
                                ),
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
