//! Rebuilds the transcript of a stored session: prompts, answers, reasoning,
//! tool cells with their status and, for edits, their diffs. The sessions
//! service has worked out how each call ended (`sessions::Runs`); this only
//! turns that into cells.

use crate::conversation::{Message, Part, Role};
use crate::protocol::{LoadedSession, Runs};
use crate::tui::model::Model;
use crate::tui::widgets::cell::{AssistantText, CellKind};
use crate::tui::widgets::sources::SourcesCell;
use crate::tui::widgets::tool_cell::ToolCell;

/// Shows a loaded session: its transcript, title, and the context and cost
/// it has used (estimated until the next response reports exact figures).
pub fn show(model: &mut Model, loaded: &LoadedSession) {
    rebuild(model, &loaded.messages, &loaded.runs);
    model.title = loaded.summary.title.clone();
    // The checklist is the resumed session's, not the one left on screen.
    model.todos = crate::tools::todos::latest(&loaded.messages);
    // What the next request carries: from the latest summary on.
    model.usage.context_tokens = match loaded.compaction() {
        Some(c) => {
            let kept = &loaded.messages[c.first_kept.min(loaded.messages.len())..];
            crate::context::estimate_messages(kept) + crate::context::estimate_tokens(&c.summary)
        }
        None => crate::context::estimate_messages(&loaded.messages),
    };
    model.usage.cost = loaded.cost;
}

/// The chips of a stored prompt's pictures, as they were shown when sent.
fn image_chips(model: &mut Model, m: &Message) {
    let images = m.parts.iter().filter_map(|p| match p {
        Part::Image { image } => Some(image),
        _ => None,
    });
    for (i, image) in images.enumerate() {
        let summary = match crate::images::describe(image) {
            Some(info) => info.chip(i + 1),
            None => format!("[image {} · {}]", i + 1, image.media_type),
        };
        let a = crate::tui::widgets::attachment::Attachment {
            sigil: "",
            mention: String::new(),
            summary,
            text: String::new(),
        };
        model.transcript.push(CellKind::Attachment(Box::new(a)));
    }
}

/// Replaces the transcript with the cells of `messages`.
pub fn rebuild(model: &mut Model, messages: &[Message], runs: &Runs) {
    model.transcript = crate::tui::widgets::transcript::Transcript::new();
    let now = model.now;
    let starts = crate::context::turn_starts(messages);
    let mut turn = 0u64;
    for (i, m) in messages.iter().enumerate() {
        compactions_at(model, runs, i);
        if starts.binary_search(&i).is_ok() {
            turn_closed(model, runs, turn);
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
                    model.transcript.push(CellKind::User(
                        crate::tui::widgets::cell::UserText::stored(p),
                    ));
                }
                image_chips(model, m);
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
                        Part::WebSearch(search) => {
                            let cell = SourcesCell::search(search);
                            model.transcript.push(CellKind::Sources(Box::new(cell)));
                        }
                        Part::Citations { sources } => {
                            let cell = SourcesCell::citations(sources);
                            model.transcript.push(CellKind::Sources(Box::new(cell)));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    turn_closed(model, runs, turn);
    for c in runs.compactions.iter().filter(|c| c.at >= messages.len()) {
        compaction_cell(model, c);
    }
    model.transcript.to_bottom();
}

/// The markers of compactions that happened when the history had `i`
/// messages, where they stood live.
fn compactions_at(model: &mut Model, runs: &Runs, i: usize) {
    for c in runs.compactions.iter().filter(|c| c.at == i && i > 0) {
        compaction_cell(model, c);
    }
}

fn compaction_cell(model: &mut Model, c: &crate::protocol::CompactionMark) {
    model.transcript.push(compaction_kind(
        c.before_tokens,
        c.after_tokens,
        Some(c.summary.clone()),
    ));
}

/// The marker of a compaction; Enter on it shows the summary.
pub fn compaction_kind(before: u64, after: u64, summary: Option<String>) -> CellKind {
    let how = if summary.is_some() {
        "older turns summarised"
    } else {
        "old tool outputs elided"
    };
    CellKind::Compaction {
        text: format!(
            "context compacted: ~{} → ~{} tokens ({how}; the full history stays in the session)",
            tokens(before),
            tokens(after)
        ),
        summary,
    }
}

/// "12k", or the exact figure under a thousand (never "~0k").
fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        format!("{}k", n / 1000)
    }
}

/// What followed turn `turn` live: the notice of its undo, its cancel
/// marker or its error line.
fn turn_closed(model: &mut Model, runs: &Runs, turn: u64) {
    use crate::protocol::NoticeLevel;
    if let Some((_, files)) = runs.undone.iter().find(|(t, _)| *t == turn) {
        let text = if files.is_empty() {
            format!("Undone: turn {turn}")
        } else {
            format!("Undone: restored {}", files.join(", "))
        };
        model.notice(NoticeLevel::Info, text);
    }
    let Some(end) = runs.ends.iter().find(|e| e.turn == turn) else {
        return;
    };
    match end.outcome.as_str() {
        "cancelled" => {
            model.transcript.push(CellKind::Marker("cancelled".into()));
        }
        "turn_limit" => model.notice(
            NoticeLevel::Warning,
            format!(
                "stopped after {} steps (the turn limit); send a prompt to continue",
                end.detail
            ),
        ),
        _ => {
            let line = end.detail.lines().next().unwrap_or_default().trim();
            model.notice(NoticeLevel::Error, line.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Source, WebSearch};

    /// A resumed session shows its provider's searches and the sources its
    /// answers cited where they stood, escaped like live ones.
    #[test]
    fn a_resumed_search_and_its_citations_show_again() {
        let mut model = crate::tui::test_support::model();
        let search = WebSearch {
            id: "s".into(),
            queries: vec!["rust\x1b[31m 2026".into()],
            sources: vec![Source {
                title: "Rust blog".into(),
                url: "https://blog.rust-lang.org/".into(),
            }],
            error: None,
            format: "anthropic".into(),
            wire: Vec::new(),
        };
        let messages = vec![
            Message::user_text("news?"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::WebSearch(search),
                    Part::Text {
                        text: "It shipped.".into(),
                    },
                    Part::Citations {
                        sources: vec![Source {
                            title: "Rust blog".into(),
                            url: "https://blog.rust-lang.org/".into(),
                        }],
                    },
                ],
            },
        ];
        rebuild(&mut model, &messages, &Runs::default());
        let kinds: Vec<String> = model
            .transcript
            .cells()
            .iter()
            .filter_map(|c| match &c.kind {
                CellKind::Sources(s) => Some(s.copy_text()),
                CellKind::Assistant(a) => Some(a.text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(kinds.len(), 3, "{kinds:?}");
        assert!(kinds[0].starts_with("web search \"rust"), "{kinds:?}");
        assert!(!kinds[0].contains('\x1b'), "{kinds:?}");
        assert_eq!(kinds[1], "It shipped.");
        assert!(kinds[2].starts_with("sources cited · 1"), "{kinds:?}");
        assert!(kinds[2].contains("https://blog.rust-lang.org/"));
    }
}
