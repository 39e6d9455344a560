//! A prompt that names a custom command (`/git:status main`) or a skill
//! the person may run (`/pdf-processing form.pdf`): the file is read when the prompt arrives (so an edit applies at
//! once), its arguments are filled in, and each `` !`cmd` `` is run as a
//! `bash` call through the gate and the sandbox — visible, asked for when
//! the mode asks, refused when the gate refuses — and replaced by its output.
//! The same happens for the interface and `cairn run`.

use std::future::Future;
use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::turn_context::{ParsedCall, PendingCall, TurnContext};
use super::{Shared, while_busy};
use crate::conversation::{ImageData, Part, ResultContent};
use crate::extensions::commands::{self, CustomCommand, Roots};
use crate::protocol::{AgentCommand, AgentEvent, NoticeLevel};

/// `/init`'s prompt: explore the project, then write its `AGENTS.md`.
const INIT_PROMPT: &str = include_str!("../../assets/prompts/init.md");

/// The prompt of a built-in prompt command (`/init [focus]`), which wins
/// over a person's command of the same name; `None` for any other prompt.
pub(crate) fn builtin(prompt: &str) -> Option<String> {
    let (name, args) = commands::split_invocation(prompt)?;
    match name {
        "init" if args.is_empty() => Some(INIT_PROMPT.to_string()),
        "init" => Some(format!("{INIT_PROMPT}\nThe person adds: {args}\n")),
        _ => None,
    }
}

/// The custom command `prompt` invokes and its arguments; `None` when it
/// invokes none (also when no command folders are configured).
pub(crate) fn find(
    roots: Option<&Roots>,
    cwd: &std::path::Path,
    prompt: &str,
) -> Option<(CustomCommand, String)> {
    let roots = roots?;
    let (name, args) = commands::split_invocation(prompt)?;
    let catalogue = crate::extensions::invocable(roots, cwd);
    let command = catalogue.get(name)?.clone();
    Some((command, args.to_string()))
}

/// The prompt the command sends: arguments filled in, each `` !`cmd` ``
/// replaced by what the command printed (or why it did not run); and the
/// same without the commands' output, the only text whose `@path`
/// mentions attach files (what a command prints is not the person's
/// choice of files: a planted script could name any path).
pub(crate) async fn expand(
    ctx: &TurnContext,
    command: &CustomCommand,
    args: &str,
) -> (String, String) {
    ctx.shared.emit(AgentEvent::Notice {
        level: NoticeLevel::Info,
        text: format!("/{} — {}", command.name, command.source.display()),
    });
    let what = format!("/{}", command.name);
    let skill = command.source.file_name().is_some_and(|n| n == "SKILL.md");
    let g = super::grants::Granting {
        kind: if skill { "skill" } else { "command" },
        name: &command.name,
        scope: command.scope,
        file: &command.source,
        hash: &command.text_hash,
        tools: &command.allowed_tools,
    };
    super::grants::grant(ctx, &what, g);
    let (pieces, spans) = commands::fill(&command.body, args);
    let mentionable = commands::join(&pieces, &[]);
    if spans.is_empty() {
        return (mentionable.clone(), mentionable);
    }
    let batch = uuid::Uuid::new_v4().simple().to_string();
    let calls: Vec<ParsedCall> = spans
        .iter()
        .enumerate()
        .map(|(i, span)| {
            let input = json!({ "command": span });
            let call = PendingCall {
                id: format!("command-{}-{i}", &batch[..12]),
                name: "bash".into(),
                args: input.to_string(),
            };
            (call, Ok(input))
        })
        .collect();
    let results = super::calls::execute(ctx, calls).await;
    let outputs: Vec<String> = results.iter().map(output_text).collect();
    (commands::join(&pieces, &outputs), mentionable)
}

/// A command's result as the prompt shows it; a failure says so.
fn output_text(part: &Part) -> String {
    let Part::ToolResult {
        content, is_error, ..
    } = part
    else {
        return String::new();
    };
    let text: String = content
        .iter()
        .filter_map(|c| match c {
            ResultContent::Text { text } => Some(text.as_str()),
            ResultContent::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if *is_error {
        format!("(the command did not succeed: {})", text.trim())
    } else {
        text
    }
}

/// Runs `fut` while still answering the person (permission replies,
/// cancel, queued prompts). Also returns false when the agent must stop.
pub(crate) async fn drive<F: Future>(
    fut: F,
    rx: &mut mpsc::UnboundedReceiver<AgentCommand>,
    cancel: &CancellationToken,
    queue: &mut std::collections::VecDeque<(String, Vec<ImageData>)>,
    shared: &Arc<Shared>,
) -> (F::Output, bool) {
    tokio::pin!(fut);
    let mut keep_running = true;
    loop {
        tokio::select! {
            out = &mut fut => return (out, keep_running),
            cmd = rx.recv(), if keep_running => {
                keep_running &= while_busy(cmd, cancel, queue, shared);
            }
        }
    }
}
