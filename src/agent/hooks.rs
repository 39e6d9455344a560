//! The agent's side of hooks (`crate::extensions::hooks`): at each event it
//! builds the JSON Claude Code's hooks read, runs the matching hooks, and
//! says on one line what a hook blocked or added.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::turn_context::TurnContext;
use crate::extensions::hooks::{Event, Outcome, Permission, names};
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::state::lock;

/// `permission_mode` as Claude Code names its modes.
fn permission_mode(shared: &Shared) -> &'static str {
    match lock(&shared.gate).mode() {
        crate::config::Mode::Smart | crate::config::Mode::AlwaysAsk => "default",
        crate::config::Mode::Auto => "acceptEdits",
        crate::config::Mode::Chat | crate::config::Mode::Plan => "plan",
    }
}

/// Runs `event`'s hooks for `subjects` with `fields` added to the common
/// input; `None` when no hook matched. What they did is said.
pub(crate) async fn fire(
    shared: &Shared,
    event: Event,
    subjects: &[&str],
    fields: Value,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Option<Outcome> {
    let hooks = shared.hooks.as_ref()?;
    if !hooks.wants(event, subjects) {
        return None;
    }
    let mut input = Map::new();
    input.insert("session_id".into(), json!(hooks.session_id()));
    input.insert("transcript_path".into(), json!(hooks.transcript_path()));
    input.insert("cwd".into(), json!(cwd));
    input.insert("permission_mode".into(), json!(permission_mode(shared)));
    input.insert("hook_event_name".into(), json!(event.name()));
    if let Value::Object(more) = fields {
        input.extend(more);
    }
    let runs = hooks
        .run(event, subjects, &Value::Object(input), cancel)
        .await;
    let outcome = Outcome::of(event, hooks.hooks(), &runs);
    report(shared, event, subjects.first().copied(), &outcome);
    Some(outcome)
}

fn report(shared: &Shared, event: Event, subject: Option<&str>, outcome: &Outcome) {
    for note in &outcome.notes {
        let about = subject.map(|s| format!(" {s}")).unwrap_or_default();
        shared.emit(AgentEvent::Hook {
            summary: format!("{} hook {}{about}", event.name(), note.did),
            command: note.command.clone(),
            output: note.output.clone(),
        });
    }
    for m in &outcome.messages {
        shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: m.clone(),
        });
    }
}

/// What `PreToolUse` hooks decided about one call.
#[derive(Debug, Default)]
pub(crate) struct PreTool {
    /// The input to judge and run (a hook's `updatedInput`, or the call's).
    pub input: Option<Value>,
    /// Why the call must not run (exit 2, `deny`, `decision: block`).
    pub refused: Option<String>,
    pub permission: Option<Permission>,
    pub reason: String,
    /// What the hooks' `additionalContext` says, for the model with the
    /// call's result.
    pub context: Vec<String>,
}

/// Runs `PreToolUse` for a call of `tool` with `input`.
pub(crate) async fn pre_tool(ctx: &TurnContext, tool: &str, input: &Value) -> PreTool {
    let cwd = ctx.cwd();
    let claude = names::claude_name(tool);
    let fields = json!({
        "tool_name": claude,
        "tool_input": names::claude_input(tool, input, &cwd),
    });
    let Some(out) = fire(
        &ctx.shared,
        Event::PreToolUse,
        &[claude, tool],
        fields,
        &cwd,
        &ctx.cancel,
    )
    .await
    else {
        return PreTool::default();
    };
    let mut pre = PreTool {
        input: out
            .updated_input
            .as_ref()
            .map(|u| names::cairn_input(tool, u, input)),
        context: out.context.clone(),
        ..PreTool::default()
    };
    if let Some(why) = out.stop {
        *lock(&ctx.hook_stop) = Some(why);
    }
    match (out.blocked, out.permission) {
        (Some(why), _) => pre.refused = Some(why),
        (None, Some((Permission::Deny, why))) => {
            pre.refused = Some(if why.is_empty() {
                "a PreToolUse hook denied it".into()
            } else {
                why
            })
        }
        (None, Some((p, why))) => {
            pre.permission = Some(p);
            pre.reason = why;
        }
        (None, None) => {}
    }
    pre
}

/// Runs `PostToolUse` (or `PostToolUseFailure`) after a call ran; what the
/// hooks tell the model, if anything.
pub(crate) async fn post_tool(
    ctx: &TurnContext,
    tool: &str,
    input: &Value,
    output: &str,
    failed: bool,
) -> Option<String> {
    let cwd = ctx.cwd();
    let claude = names::claude_name(tool);
    let event = if failed {
        Event::PostToolUseFailure
    } else {
        Event::PostToolUse
    };
    let mut fields = json!({
        "tool_name": claude,
        "tool_input": names::claude_input(tool, input, &cwd),
        "tool_response": names::claude_response(tool, input, output, failed),
    });
    if failed {
        fields["error"] = json!(output);
    }
    let out = fire(
        &ctx.shared,
        event,
        &[claude, tool],
        fields,
        &cwd,
        &ctx.cancel,
    )
    .await?;
    if let Some(why) = out.stop {
        *lock(&ctx.hook_stop) = Some(why);
    }
    let mut said: Vec<String> = Vec::new();
    if let Some(b) = out.blocked {
        said.push(format!("{} hook feedback: {b}", event.name()));
    }
    said.extend(out.context);
    (!said.is_empty()).then(|| said.join("\n"))
}

/// `PermissionRequest`: a hook may answer the dialog (`Some(Ok)` allow,
/// `Some(Err(reason))` deny).
pub(crate) async fn permission_request(
    ctx: &TurnContext,
    tool: &str,
    input: &Value,
) -> Option<Result<(), String>> {
    let cwd = ctx.cwd();
    let claude = names::claude_name(tool);
    let fields = json!({
        "tool_name": claude,
        "tool_input": names::claude_input(tool, input, &cwd),
    });
    let out = fire(
        &ctx.shared,
        Event::PermissionRequest,
        &[claude, tool],
        fields,
        &cwd,
        &ctx.cancel,
    )
    .await?;
    match (out.blocked, out.permission) {
        (Some(why), _) | (None, Some((Permission::Deny, why))) => Some(Err(why)),
        (None, Some((Permission::Allow, _))) => Some(Ok(())),
        _ => None,
    }
}

/// `Notification`, in the background: the person is being asked.
pub(crate) fn notify(shared: &Arc<Shared>, message: String, cwd: std::path::PathBuf) {
    if shared.hooks.is_none() {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        let fields = json!({"message": message, "notification_type": "permission_prompt"});
        let subjects = ["permission_prompt"];
        let cancel = CancellationToken::new();
        fire(
            &shared,
            Event::Notification,
            &subjects,
            fields,
            &cwd,
            &cancel,
        )
        .await;
    });
}

/// What `UserPromptSubmit` hooks said of a prompt.
pub(crate) enum Prompt {
    /// Go on, with this context for the model.
    Go(Vec<String>),
    /// Blocked (or stopped), for this reason; the prompt is not sent.
    Blocked(String),
}

pub(crate) async fn prompt_submitted(
    shared: &Shared,
    prompt: &str,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Prompt {
    let fields = json!({"prompt": prompt});
    match fire(shared, Event::UserPromptSubmit, &[], fields, cwd, cancel).await {
        None => Prompt::Go(Vec::new()),
        Some(out) => match out.blocked.or(out.stop) {
            Some(why) => Prompt::Blocked(why),
            None => Prompt::Go(out.context),
        },
    }
}

/// `Stop`: the reason to carry on, when a hook says the model is not done.
pub(crate) async fn stop(
    shared: &Shared,
    active: bool,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Option<String> {
    let fields = json!({"stop_hook_active": active});
    let out = fire(shared, Event::Stop, &[], fields, cwd, cancel).await?;
    if out.stop.is_some() {
        return None;
    }
    out.blocked
}

/// `SubagentStop`, when a sub-agent (`agent` tool) would hand back its
/// answer: the reason to carry on, as for `Stop`. The matcher sees the
/// agent's name.
pub(crate) async fn subagent_stop(
    shared: &Shared,
    agent: &str,
    active: bool,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Option<String> {
    let fields = json!({"stop_hook_active": active, "agent_type": agent});
    let out = fire(shared, Event::SubagentStop, &[agent], fields, cwd, cancel).await?;
    if out.stop.is_some() {
        return None;
    }
    out.blocked
}

/// `SessionStart` (`startup`, `resume`, `clear`): context for the model.
pub(crate) async fn session_start(shared: &Shared, source: &str, cwd: &Path) -> Vec<String> {
    let fields = json!({"source": source});
    let cancel = CancellationToken::new();
    match fire(shared, Event::SessionStart, &[source], fields, cwd, &cancel).await {
        Some(out) => out.context,
        None => Vec::new(),
    }
}

/// `SessionEnd`, given a few seconds at most: cairn is closing.
pub(crate) async fn session_end(shared: &Shared, reason: &str, cwd: &Path) {
    let fields = json!({"reason": reason});
    let cancel = CancellationToken::new();
    let subjects = [reason];
    let run = fire(shared, Event::SessionEnd, &subjects, fields, cwd, &cancel);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), run).await;
}

/// `PreCompact` (`manual` or `auto`).
pub(crate) async fn pre_compact(ctx: &TurnContext, manual: bool, focus: Option<&str>) {
    let trigger = if manual { "manual" } else { "auto" };
    let fields = json!({"trigger": trigger, "custom_instructions": focus.unwrap_or("")});
    let cwd = ctx.cwd();
    fire(
        &ctx.shared,
        Event::PreCompact,
        &[trigger],
        fields,
        &cwd,
        &ctx.cancel,
    )
    .await;
}
