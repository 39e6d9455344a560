//! cairn's own slash commands an editor's prompt may name: the ones that
//! make sense without cairn's screen. A prompt `/compact focus` runs the
//! command instead of going to the model; what it says comes back as
//! message text and the prompt ends when it is done. `/init` and
//! `/plan GOAL` are prompts the agent shapes itself. Commands of the
//! screen (`/theme`, `/mouse`, `/sessions`, …) are not offered here: an
//! editor has its own.

use agent_client_protocol::v1::schema as acp;

use crate::config::effort::Effort;
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::restore::{FileAction, UndoPlan};

/// The built-ins an editor is offered, in the order it lists them.
pub const OFFERED: &[&str] = &[
    "compact", "undo", "init", "plan", "memory", "lsp", "effort", "rename",
];

/// A built-in read from a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum Builtin {
    Compact(Option<String>),
    Undo,
    /// Plan mode, and the goal to plan for when given (then a turn).
    Plan(Option<String>),
    Memory,
    Lsp,
    LspRestart(String),
    /// `None`: list the levels; `Some(None)`: the model's default.
    Effort(Option<Option<Effort>>),
    Rename(String),
}

/// The built-in `text` names, if it names one run here (`Err`: it names
/// one, wrongly); `None` for anything else, `/init` included, which the
/// agent reads as a prompt.
pub fn parse(text: &str) -> Option<Result<Builtin, String>> {
    let line = text.trim();
    let body = line.strip_prefix('/')?;
    let (name, rest) = match body.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (body, ""),
    };
    let arg = (!rest.is_empty()).then(|| rest.to_string());
    Some(Ok(match name {
        "compact" => Builtin::Compact(arg),
        "undo" if arg.is_none() => Builtin::Undo,
        "undo" => return Some(Err("/undo takes no arguments".into())),
        "plan" => Builtin::Plan(arg),
        "memory" => Builtin::Memory,
        "lsp" => match rest.split_once(char::is_whitespace) {
            Some(("restart", server)) if !server.trim().is_empty() => {
                Builtin::LspRestart(server.trim().to_string())
            }
            _ if rest.is_empty() => Builtin::Lsp,
            _ => return Some(Err("usage: /lsp or /lsp restart <server>".into())),
        },
        "effort" => Builtin::Effort(match arg.as_deref() {
            None => None,
            Some("default" | "auto" | "off") => Some(None),
            Some(level) => match Effort::parse(level) {
                Some(e) => Some(Some(e)),
                None => {
                    return Some(Err(effort_levels(&format!(
                        "`{level}` is not an effort level"
                    ))));
                }
            },
        }),
        "rename" => match arg {
            Some(title) => Builtin::Rename(title),
            None => return Some(Err("/rename needs a title: /rename fix the parser".into())),
        },
        _ => return None,
    }))
}

/// `lead`, then the levels `/effort` takes.
pub fn effort_levels(lead: &str) -> String {
    let levels: Vec<&str> = Effort::ALL.iter().map(|e| e.as_str()).collect();
    format!(
        "{lead}; use /effort with one of {}, or default (the model's own)",
        levels.join(", ")
    )
}

/// The option that restores the files of an `/undo`.
pub const UNDO_ALLOW: &str = "undo";
const UNDO_KEEP: &str = "keep";

/// `/undo`'s question: the call it is about (announced first, so the
/// editor knows it) and the choices.
pub fn undo_question(plan: &UndoPlan) -> (acp::ToolCall, Vec<acp::PermissionOption>) {
    use acp::PermissionOptionKind as K;
    let mut lines = Vec::new();
    for (path, action) in &plan.files {
        lines.push(match action {
            FileAction::Restore => format!("restore {path}"),
            FileAction::Delete => format!("remove {path} (the turn created it)"),
        });
    }
    for (path, why) in &plan.unrestorable {
        lines.push(format!("cannot restore {path}: {why}"));
    }
    let call = acp::ToolCall::new(
        format!("undo-{}", plan.turn),
        format!("Undo the file changes of turn {}", plan.turn),
    )
    .kind(acp::ToolKind::Edit)
    .status(acp::ToolCallStatus::Pending)
    .content(vec![super::updates::content_text(lines.join("\n"))]);
    let options = vec![
        acp::PermissionOption::new(UNDO_ALLOW, "Restore these files", K::AllowOnce),
        acp::PermissionOption::new(UNDO_KEEP, "Keep the files as they are", K::RejectOnce),
    ];
    (call, options)
}

/// What an event says while a built-in runs, as message text: the
/// answers of `/memory`, `/lsp`, `/compact`, `/undo`, `/effort`,
/// `/rename`, `/plan` (the interface shows these in its transcript).
pub fn said(event: &AgentEvent) -> Option<String> {
    let text = match event {
        AgentEvent::Notice {
            level: NoticeLevel::Info,
            text,
        } => text.clone(),
        AgentEvent::LanguageServerReport { statuses, known } => {
            crate::protocol::lsp_report(statuses, known)
        }
        AgentEvent::Compacted {
            before_tokens,
            after_tokens,
            summary,
            ..
        } => match summary {
            Some(_) => format!(
                "Compacted: the older turns are a summary now ({before_tokens} → \
                 {after_tokens} tokens of context)."
            ),
            None => format!(
                "Compacted: old tool output cleared ({before_tokens} → {after_tokens} tokens of \
                 context)."
            ),
        },
        AgentEvent::UndoApplied {
            turn,
            restored,
            removed,
            failed,
        } => {
            let mut t = format!("Undid turn {turn}.");
            if !restored.is_empty() {
                t.push_str(&format!(" Restored: {}.", restored.join(", ")));
            }
            if !removed.is_empty() {
                t.push_str(&format!(" Removed: {}.", removed.join(", ")));
            }
            for (path, why) in failed {
                t.push_str(&format!(" Could not restore {path}: {why}."));
            }
            t
        }
        AgentEvent::EffortChanged(effort) => match effort {
            Some(e) => format!("Effort: {} from the next request on.", e.as_str()),
            None => "Effort: the model's default from the next request on.".to_string(),
        },
        AgentEvent::TitleChanged(title) => format!("Renamed the session: {title}"),
        AgentEvent::ModeChanged(mode) => format!("Mode: {}.", mode.as_str()),
        _ => return None,
    };
    Some(text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_builtins_and_leaves_the_rest_to_the_agent() {
        assert_eq!(
            parse(" /compact the tests "),
            Some(Ok(Builtin::Compact(Some("the tests".into()))))
        );
        assert_eq!(parse("/undo"), Some(Ok(Builtin::Undo)));
        assert_eq!(
            parse("/effort high"),
            Some(Ok(Builtin::Effort(Some(Some(Effort::High)))))
        );
        assert_eq!(
            parse("/effort default"),
            Some(Ok(Builtin::Effort(Some(None))))
        );
        assert!(
            parse("/effort hard")
                .unwrap()
                .unwrap_err()
                .contains("minimal")
        );
        assert!(parse("/rename").unwrap().is_err());
        assert_eq!(
            parse("/lsp restart pyright"),
            Some(Ok(Builtin::LspRestart("pyright".into())))
        );
        assert_eq!(parse("/init"), None);
        assert_eq!(parse("/review main"), None);
        assert_eq!(parse("make /undo work"), None);
        for name in OFFERED {
            assert!(
                crate::protocol::slash::named(name).is_some(),
                "{name} is a built-in"
            );
        }
    }
}
