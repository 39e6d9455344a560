//! Session events: compaction, titles, undo and rewind, and answers from
//! the services (store, files, MCP).

use crate::agent::{AgentEvent, NoticeLevel};
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;
use crate::tui::panels::{self, Panel};
use crate::tui::services::ServiceMsg;
use crate::tui::update::notice;
use crate::tui::widgets::cell::CellKind;

pub fn agent_event(model: &mut Model, ev: AgentEvent) -> Vec<Cmd> {
    match ev {
        AgentEvent::Compacted {
            before_tokens,
            after_tokens,
            summary,
        } => {
            let how = if summary.is_some() {
                "older turns summarised"
            } else {
                "old tool outputs elided"
            };
            model.transcript.push(CellKind::Marker(format!(
                "context compacted: ~{}k → ~{}k tokens ({how}; the full history stays in the session)",
                before_tokens / 1000,
                after_tokens / 1000
            )));
        }
        AgentEvent::TitleChanged(title) => model.title = Some(title),
        AgentEvent::TitleGenerated(title) if model.title.is_none() => model.title = Some(title),
        AgentEvent::UndoPlanned(plan) => {
            if plan.files.is_empty() && plan.unrestorable.is_empty() {
                model.flash("Nothing to undo: the last turn's files are as they were");
            } else {
                panels::open(model, Panel::ConfirmUndo(plan));
            }
        }
        AgentEvent::UndoApplied {
            restored, failed, ..
        } => {
            if !restored.is_empty() {
                notice(
                    model,
                    NoticeLevel::Info,
                    format!("Undone: restored {}", restored.join(", ")),
                );
            }
            for (path, why) in failed {
                notice(
                    model,
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
            panels::open(
                model,
                Panel::ConfirmRewind {
                    turn,
                    prompt,
                    files,
                    restore_files: restore,
                    fork: false,
                },
            );
        }
        AgentEvent::Rewound {
            turn,
            prompt,
            fork,
            restored,
            failed,
        } => {
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
            model.input.set_text(&prompt);
            let mut text = format!(
                "Rewound to before turn {turn}{}; the prompt is back in the input to edit and send.",
                if fork { " as a fork" } else { "" }
            );
            if !restored.is_empty() {
                text.push_str(&format!(" Restored: {}.", restored.join(", ")));
            }
            notice(model, NoticeLevel::Info, text);
            for (path, why) in failed {
                notice(
                    model,
                    NoticeLevel::Error,
                    format!("Could not restore {path}: {why}"),
                );
            }
        }
        _ => {}
    }
    Vec::new()
}

pub fn service(model: &mut Model, msg: ServiceMsg) -> Vec<Cmd> {
    match msg {
        ServiceMsg::Files(files) => {
            if files.is_empty() {
                model.flash("No files found in the project");
            } else {
                panels::open(model, panels::files_picker(files));
            }
            Vec::new()
        }
        ServiceMsg::Sessions {
            query,
            entries,
            offset,
        } => {
            let now = chrono::Utc::now().timestamp_millis();
            match panels::browser_mut(model) {
                Some(b) => {
                    let follow = b.set_entries(&query, entries, now, offset);
                    panels::browser_follow_up(follow)
                }
                None => Vec::new(),
            }
        }
        ServiceMsg::Preview { id, lines } => {
            if let Some(b) = panels::browser_mut(model) {
                b.set_preview(&id, lines);
            }
            Vec::new()
        }
        ServiceMsg::Prompts { id, prompts } => {
            if prompts.is_empty() {
                model.flash("That session has no prompts");
            } else {
                panels::open(model, panels::stored_rewind_panel(id, prompts));
            }
            Vec::new()
        }
        ServiceMsg::Resumed(r) => {
            let crate::tui::services::Resumed {
                loaded,
                draft,
                later,
            } = *r;
            crate::tui::history::show(model, &loaded);
            if let Some(d) = draft {
                model.input.set_text(&d);
            }
            if let Some(later) = later {
                offer_restore(model, later);
            }
            notice(model, NoticeLevel::Info, loaded.resumed_notice());
            vec![Cmd::Send(loaded.load_command())]
        }
        ServiceMsg::Text { title, text } => {
            panels::open(
                model,
                Panel::Text {
                    title,
                    text,
                    scroll: 0,
                },
            );
            Vec::new()
        }
        ServiceMsg::Info(level, text) => {
            notice(model, level, text);
            Vec::new()
        }
        ServiceMsg::SubmitPrompt(text) => {
            model.transcript.to_bottom();
            if model.turn_running {
                model.queued.push_back(text.clone());
            }
            vec![Cmd::Send(crate::agent::AgentCommand::Submit {
                text,
                images: Vec::new(),
            })]
        }
        ServiceMsg::DeleteRefused(why) => {
            model.flash(&why);
            match panels::browser_mut(model) {
                Some(b) => panels::browser_follow_up(b.query_action()),
                None => Vec::new(),
            }
        }
    }
}

/// After a rewind from the browser: offer to put the files back as they
/// were before the chosen prompt, naming what cannot be.
fn offer_restore(model: &mut Model, later: crate::tui::services::Later) {
    let crate::tui::services::Later {
        from,
        versions,
        lost,
    } = later;
    let to = versions.iter().map(|v| v.turn).max().unwrap_or(from);
    let mut plan = crate::agent::undo::plan_range(&versions, from, to, &model.cwd);
    for (path, why) in lost {
        let shown = std::path::Path::new(&path)
            .strip_prefix(&model.cwd)
            .map(|p| p.display().to_string())
            .unwrap_or(path);
        plan.unrestorable.push((shown, why));
    }
    if !plan.files.is_empty() || !plan.unrestorable.is_empty() {
        panels::open(
            model,
            Panel::RestoreFiles {
                from,
                versions,
                plan,
            },
        );
    }
}
