//! Confirmations before files or the conversation go back: undo the last
//! turn, rewind this session, continue a stored one from before a prompt,
//! and put files back after such a rewind.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{Outcome, Panel, PanelAction, boxed};
use crate::protocol::AgentCommand;
use crate::tools::restore::{FileAction, UndoPlan};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;

/// Keys for the confirmations; `None` for the other panels.
pub(super) fn handle_key(panel: &mut Panel, key: KeyEvent, keys: &KeyMap) -> Option<Outcome> {
    let yes = keys.is(Action::PanelConfirm, &key);
    let no = keys.is(Action::PanelReject, &key);
    let out = match panel {
        Panel::ConfirmStoredRewind {
            session,
            message,
            fork,
            ..
        } => {
            if keys.is(Action::PanelToggleFork, &key) || keys.is(Action::PanelToggle, &key) {
                *fork = !*fork;
                Outcome::keep()
            } else if yes {
                Outcome::close_with(PanelAction::RewindStored {
                    session: session.clone(),
                    message: *message,
                    in_place: !*fork,
                })
            } else {
                Outcome::stay(!no)
            }
        }
        Panel::RestoreFiles { from, versions, .. } => {
            if yes {
                Outcome::close_with(PanelAction::RestoreFiles {
                    versions: std::mem::take(versions),
                    from: *from,
                })
            } else {
                Outcome::stay(!no)
            }
        }
        Panel::ConfirmUndo(plan) => {
            if yes {
                Outcome::close_with(PanelAction::Agent(AgentCommand::ConfirmUndo {
                    turn: plan.turn,
                }))
            } else {
                Outcome::stay(!no)
            }
        }
        Panel::ConfirmRewind {
            turn,
            restore_files,
            fork,
            ..
        } => {
            if keys.is(Action::PanelToggleFork, &key) {
                *fork = !*fork;
                Outcome::keep()
            } else if keys.is(Action::PanelToggleRestore, &key) {
                *restore_files = !*restore_files;
                Outcome::keep()
            } else if yes {
                Outcome::close_with(PanelAction::Agent(AgentCommand::Rewind {
                    turn: *turn,
                    restore_files: *restore_files,
                    fork: *fork,
                }))
            } else {
                Outcome::stay(!no)
            }
        }
        _ => return None,
    };
    Some(out)
}

/// Draws a confirmation; false for the other panels.
pub(super) fn render(panel: &Panel, area: Rect, buf: &mut Buffer, s: &Styles) -> bool {
    match panel {
        Panel::RestoreFiles { plan, .. } => {
            let mut lines = vec![Line::styled(
                "Also put the files back as they were before that prompt?",
                s.text,
            )];
            lines.extend(plan_lines(plan, s));
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "y / Enter: restore    n / Esc: keep them as they are",
                s.dim,
            ));
            boxed(" Rewind: files ", lines, area, buf, s);
        }
        Panel::ConfirmUndo(plan) => {
            let mut lines = vec![Line::styled(
                "Undo the file changes of the last turn?",
                s.text,
            )];
            lines.extend(plan_lines(plan, s));
            lines.push(Line::raw(""));
            lines.push(Line::styled("y / Enter: restore    n / Esc: keep", s.dim));
            boxed(" Undo ", lines, area, buf, s);
        }
        Panel::ConfirmRewind {
            prompt,
            files,
            restore_files,
            fork,
            ..
        } => {
            let mut lines = rewind_head(
                "Return the conversation to just before:",
                prompt,
                *fork,
                "this one stays as it is",
                s,
            );
            lines.push(Line::from(vec![
                Span::styled(if *restore_files { "[x]" } else { "[ ]" }, s.accent),
                Span::styled(" r  restore the files to how they were then", s.text),
            ]));
            if *restore_files {
                lines.extend(plan_lines(files, s));
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled("Enter: rewind    Esc: cancel", s.dim));
            boxed(" Rewind ", lines, area, buf, s);
        }
        Panel::ConfirmStoredRewind { prompt, fork, .. } => {
            let mut lines = rewind_head(
                "Continue that session from just before:",
                prompt,
                *fork,
                "the original stays as it is",
                s,
            );
            lines.extend([
                Line::styled(
                    if *fork {
                        "    otherwise the session itself is cut back there"
                    } else {
                        "    in place: what came after that prompt is deleted from the session"
                    },
                    if *fork { s.dim } else { s.warning },
                ),
                Line::raw(""),
                Line::styled("Enter: continue    Esc: cancel", s.dim),
            ]);
            boxed(" Rewind ", lines, area, buf, s);
        }
        _ => return false,
    }
    true
}

/// The top of a rewind confirmation: where to, and the fork checkbox.
fn rewind_head(
    heading: &str,
    prompt: &str,
    fork: bool,
    stays: &str,
    s: &Styles,
) -> Vec<Line<'static>> {
    vec![
        Line::styled(heading.to_string(), s.text),
        Line::styled(
            format!("  › {}", prompt.lines().next().unwrap_or("")),
            s.user,
        ),
        Line::raw(""),
        Line::from(vec![
            Span::styled(if fork { "[x]" } else { "[ ]" }, s.accent),
            Span::styled(format!(" f  as a fork (a new session; {stays})"), s.text),
        ]),
    ]
}

fn plan_lines(plan: &UndoPlan, s: &Styles) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if plan.files.is_empty() {
        out.push(Line::styled("  (no file changes to restore)", s.dim));
    }
    for (path, action) in &plan.files {
        let (mark, what) = match action {
            FileAction::Restore => ("↺", "restore"),
            FileAction::Delete => ("✗", "delete (it was created)"),
        };
        out.push(Line::styled(format!("  {mark} {path}  — {what}"), s.text));
    }
    for (path, why) in &plan.unrestorable {
        out.push(Line::styled(format!("  ! {path}: {why}"), s.warning));
    }
    out
}
