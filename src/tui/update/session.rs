//! Session events: compaction, titles, undo and rewind, and the answers
//! effects send back (the sessions service, the file list, text panels).

use crate::protocol::{AgentCommand, AgentEvent, NoticeLevel};
use crate::protocol::{Later, Resumed, SessionReply};
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;
use crate::tui::panels::{self, Panel};
use crate::tui::widgets::cell::CellKind;

pub fn agent_event(model: &mut Model, ev: AgentEvent) -> Vec<Cmd> {
    match ev {
        AgentEvent::Compacted {
            before_tokens,
            after_tokens,
            summary,
            ..
        } => compacted(model, before_tokens, after_tokens, summary),
        AgentEvent::SessionRecorded { id } => model.session = Some(id),
        AgentEvent::StoreFailed { error, .. } => {
            if model.store_warning.is_none() {
                let text = format!(
                    "Not saved: {error}. What is not saved is kept and written when the store accepts writes again."
                );
                model.notice(NoticeLevel::Warning, text);
            }
            model.store_warning = Some(error);
        }
        AgentEvent::StoreRecovered => {
            model.store_warning = None;
            model.notice(NoticeLevel::Info, "The session is saved again.".into());
        }
        AgentEvent::TitleChanged(title) => model.title = Some(title),
        AgentEvent::TitleGenerated(title) if model.title.is_none() => model.title = Some(title),
        AgentEvent::UndoPlanned(plan) => {
            if plan.files.is_empty() && plan.unrestorable.is_empty() {
                model.flash("Nothing to undo: the last turn's files are as they were");
            } else {
                model.open_panel(Panel::ConfirmUndo(plan));
            }
        }
        AgentEvent::UndoApplied {
            restored,
            removed,
            failed,
            ..
        } => {
            let mut done = Vec::new();
            if !restored.is_empty() {
                done.push(format!("restored {}", restored.join(", ")));
            }
            if !removed.is_empty() {
                done.push(format!("removed {}", removed.join(", ")));
            }
            if !done.is_empty() {
                model.notice(NoticeLevel::Info, format!("Undone: {}", done.join("; ")));
            }
            for (path, why) in failed {
                model.notice(
                    NoticeLevel::Error,
                    format!("Could not restore {path}: {why}"),
                );
            }
        }
        AgentEvent::RewindPlanned {
            turn,
            prompt,
            files,
        } => {
            let restore = !files.files.is_empty();
            model.open_panel(Panel::ConfirmRewind {
                turn,
                prompt,
                files,
                restore_files: restore,
                fork: false,
            });
        }
        AgentEvent::Rewound {
            turn,
            prompt,
            fork,
            restored,
            failed,
        } => rewound(model, turn, &prompt, fork, &restored, failed),
        _ => {}
    }
    Vec::new()
}

/// Its own marker (Enter shows the summary), and the context figure
/// follows at once rather than after the next answer.
fn compacted(model: &mut Model, before: u64, after: u64, summary: Option<String>) {
    let kind = crate::tui::history::compaction_kind(before, after, summary);
    model.transcript.push(kind);
    model.usage.context_tokens = after;
}

/// The conversation went back to before `turn`: drop its cells and put the
/// prompt back in the input.
fn rewound(
    model: &mut Model,
    turn: u64,
    prompt: &str,
    fork: bool,
    restored: &[String],
    failed: Vec<(String, String)>,
) {
    // Drop the cells from that turn's prompt on.
    let mut seen = 0u64;
    let cut = model.transcript.cells().iter().position(|c| {
        if matches!(c.kind, CellKind::User(_)) {
            seen += 1;
        }
        seen == turn
    });
    if let Some(i) = cut {
        model.transcript.truncate(i);
    }
    model.transcript.to_bottom();
    model.input.set_text(prompt);
    let mut text = format!(
        "Rewound to before turn {turn}{}; the prompt is back in the input to edit and send.",
        if fork { " as a fork" } else { "" }
    );
    if !restored.is_empty() {
        text.push_str(&format!(" Restored: {}.", restored.join(", ")));
    }
    model.notice(NoticeLevel::Info, text);
    for (path, why) in failed {
        model.notice(
            NoticeLevel::Error,
            format!("Could not restore {path}: {why}"),
        );
    }
}

/// A stored session arrived to continue (or, read-only, to look at).
fn resumed(model: &mut Model, r: Resumed) -> Vec<Cmd> {
    let Resumed {
        loaded,
        draft,
        later,
        read_only,
    } = r;
    crate::tui::jobs::session_changed(model);
    crate::tui::history::show(model, &loaded);
    if let Some(d) = draft {
        model.input.set_text(&d);
    }
    if let Some(Later {
        from,
        versions,
        plan,
    }) = later
    {
        // After a rewind from the browser: offer to put the files
        // back as they were before the chosen prompt.
        model.open_panel(Panel::RestoreFiles {
            from,
            versions,
            plan,
        });
    }
    model.read_only = read_only;
    if read_only {
        model.notice(
            NoticeLevel::Warning,
            format!(
                "Read-only: session {} is open in another cairn. Prompts are not sent here; \
                 fork it from the browser (Ctrl+S) to continue it, or /new.",
                crate::protocol::short_id(loaded.id())
            ),
        );
        return vec![Cmd::Send(AgentCommand::load_read_only(&loaded))];
    }
    model.notice(NoticeLevel::Info, loaded.resumed_notice());
    vec![Cmd::Send(AgentCommand::load(&loaded))]
}

/// What the service did: said inside the browser when it is open (its
/// list reloaded, so a fork, a new title or a deletion shows at once),
/// otherwise in the transcript.
fn told(model: &mut Model, text: String, error: bool) -> Vec<Cmd> {
    let current = model.session.clone();
    match model.browser_mut() {
        Some(b) => {
            b.tell(text, error);
            panels::sessions::commands(b.query_action(), current.as_ref())
        }
        None => {
            let level = if error {
                NoticeLevel::Error
            } else {
                NoticeLevel::Info
            };
            model.notice(level, text);
            Vec::new()
        }
    }
}

/// An MCP prompt's text arrived: it is sent as the person's prompt.
pub fn submit_prompt(model: &mut Model, text: String) -> Vec<Cmd> {
    crate::tui::slash::submit_text(model, text)
}

/// The project's files arrived: open the `@` picker, filtered by what was
/// typed after the `@` meanwhile (unless that word is finished).
pub fn files(model: &mut Model, files: Vec<String>) -> Vec<Cmd> {
    let text = model.input.text();
    let Some(query) = super::panel::typed_mention(&text) else {
        return Vec::new();
    };
    if files.is_empty() {
        model.flash("No files found in the project");
    } else {
        model.open_panel(panels::files_picker(files, query));
    }
    Vec::new()
}

/// A text for a panel arrived (`/mcp`, `/permissions`).
pub fn text(model: &mut Model, title: String, text: String) -> Vec<Cmd> {
    model.open_panel(Panel::Text {
        title,
        text,
        scroll: 0,
    });
    Vec::new()
}

/// The sessions service answered.
pub fn session_reply(model: &mut Model, reply: SessionReply) -> Vec<Cmd> {
    match reply {
        SessionReply::Sessions {
            query,
            entries,
            offset,
        } => {
            if query.is_empty() && offset == 0 {
                super::prompt::remember_titles(model, &entries);
            }
            let now = model.now_ms;
            let current = model.session.clone();
            let follow = match model.browser_mut() {
                Some(b) => {
                    b.current = current;
                    b.set_entries(&query, entries, now, offset)
                }
                None => return Vec::new(),
            };
            panels::sessions::commands(follow, model.session.as_ref())
        }
        SessionReply::Preview { id, lines } => {
            if let Some(b) = model.browser_mut() {
                b.set_preview(&id, lines);
            }
            Vec::new()
        }
        SessionReply::Prompts { id, prompts } => {
            if prompts.is_empty() {
                model.flash("That session has no prompts");
            } else {
                model.open_panel(panels::stored_rewind_panel(id, prompts));
            }
            Vec::new()
        }
        SessionReply::Resumed(r) => resumed(model, *r),
        SessionReply::OpenElsewhere { id, held } => {
            model.open_panel(Panel::OpenElsewhere { id, held });
            Vec::new()
        }
        SessionReply::Info(text) => told(model, text, false),
        SessionReply::Failed(text) => told(model, text, true),
        SessionReply::DeleteRefused(why) => told(model, why, true),
    }
}
