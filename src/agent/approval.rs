//! Asking the person about a call the gate would not allow by itself: the
//! request shown in the dialog, the wait for the answer, and what each
//! decision means (run, run unsandboxed, run some hunks, store rules, deny).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tokio::sync::oneshot;

use super::turn_context::{PendingCall, TurnContext};
use crate::protocol::{AgentEvent, NoticeLevel, ToolStatus};
use crate::protocol::{Decision, PermissionRequest};
use crate::tools::state::lock;
use crate::tools::{RejectedHunks, Tool, ToolContext, ToolOutput};

/// How the person approved a call.
pub(crate) enum Approval {
    Sandboxed,
    /// "Allow once without the sandbox".
    Unsandboxed,
    /// An edit with some hunks left out.
    Hunks(RejectedHunks),
}

/// What the dialog asks: why, the rules "Always" may store, and the
/// sandbox the call would run in.
pub(crate) struct Question {
    pub reasons: Vec<String>,
    pub rules: Vec<String>,
    pub sandbox: Option<String>,
    /// Whether a `PermissionRequest` hook's `allow` may answer it: only
    /// where an allow rule could have spared it (no caution, nothing
    /// outside the workspace, no control file, no run beyond the sandbox).
    /// A hook's `deny` always holds.
    pub hook_may_allow: bool,
}

/// Asks the person. `Ok` means go ahead (and how); `Err` is the call's
/// answer.
pub(crate) async fn ask(
    ctx: &TurnContext,
    call: &PendingCall,
    tool: &Arc<dyn Tool>,
    input: &Value,
    question: Question,
    tool_ctx: &ToolContext,
) -> Result<Approval, (ToolStatus, ToolOutput)> {
    let preview = match tool.preview(input, tool_ctx).await {
        Ok(p) => p,
        Err(msg) => return Err((ToolStatus::Failed, ToolOutput::error(msg))),
    };
    match super::hooks::permission_request(ctx, &call.name, input).await {
        Some(Ok(())) if question.hook_may_allow => return Ok(Approval::Sandboxed),
        Some(Err(why)) => {
            return Err((
                ToolStatus::Denied,
                ToolOutput::error(format!(
                    "A PermissionRequest hook denied this call; it was not run. The hook said: {why}"
                )),
            ));
        }
        // An allow that may not answer this question: the person is asked.
        Some(Ok(())) | None => {}
    }
    let mut reasons = question.reasons;
    let mut summary = tool.summary(input);
    if let Some(sub) = &ctx.sub {
        // The person must see who asks, and for which task.
        reasons.insert(
            0,
            format!(
                "asked by the sub-agent `{}`, working on: {}",
                sub.name, sub.description
            ),
        );
        summary = format!("[{}] {summary}", sub.name);
    }
    if let Some(mark) = crate::extensions::instruction_files::call_mark(&call.name, input) {
        reasons.push(mark);
    }
    // A rename's files are its preview's (the server's answer).
    if let Some(crate::tools::Preview::Diffs { files }) = &preview {
        (files.iter())
            .filter_map(|f| crate::extensions::instruction_files::mark(&f.path))
            .for_each(|m| reasons.push(m));
    }
    if !ctx.opts.interactive {
        return Err((
            ToolStatus::Denied,
            ToolOutput::error(format!(
                "This call needs the person's approval ({}), and cairn is running non-interactively, so it was not run. Do without it, or explain what you would do and why.",
                reasons.join("; ")
            )),
        ));
    }
    let offered = question.rules.clone();
    let formatting = formatted_by(tool, input, tool_ctx, preview.as_ref());
    let request = PermissionRequest {
        formatting,
        tool: call.name.clone(),
        summary,
        reasons,
        preview,
        rules: question.rules,
        sandbox: question.sandbox,
    };
    let decision = wait_for_decision(ctx, &call.id, request).await;
    approval(ctx, decision, &offered).map_err(|(status, text)| (status, ToolOutput::error(text)))
}

/// For an edit of a file `[format]` formats: what the dialog says of it
/// ("will be formatted by rustfmt after it is applied").
fn formatted_by(
    tool: &Arc<dyn Tool>,
    input: &Value,
    tool_ctx: &ToolContext,
    preview: Option<&crate::tools::Preview>,
) -> Option<String> {
    let formatting = tool_ctx.formatting.as_ref()?;
    if !matches!(tool.name(), "edit" | "multiedit" | "write")
        || !matches!(preview, Some(crate::tools::Preview::Diff(_)))
    {
        return None;
    }
    let path = tool.paths(input, tool_ctx).into_iter().next()?;
    crate::tools::format::dialog_line(formatting.as_ref(), &path)
}

/// Shows the request and waits for the person (or a cancel: `None`).
async fn wait_for_decision(
    ctx: &TurnContext,
    call_id: &str,
    request: PermissionRequest,
) -> Option<Decision> {
    let id = ctx.shared.next_request.fetch_add(1, Ordering::Relaxed);
    ctx.shared.emit(AgentEvent::ToolCallWaiting {
        call_id: call_id.to_string(),
    });
    let (tx, rx) = oneshot::channel();
    lock(&ctx.shared.pending).insert(id, tx);
    let asking = format!(
        "cairn needs your permission to use {}",
        crate::extensions::hooks::names::claude_name(&request.tool)
    );
    let preview = request.preview.clone();
    ctx.shared
        .emit(AgentEvent::PermissionRequested { id, request });
    super::checks::check_request(&ctx.shared, &ctx.opts.workspace, id, preview.as_ref());
    super::hooks::notify(&ctx.shared, asking, ctx.cwd());
    let decision = tokio::select! {
        d = rx => d.ok(),
        _ = ctx.cancel.cancelled() => None,
    };
    lock(&ctx.shared.pending).remove(&id);
    ctx.shared.emit(AgentEvent::PermissionResolved { id });
    decision
}

/// What the person's decision means for the call.
fn approval(
    ctx: &TurnContext,
    decision: Option<Decision>,
    offered: &[String],
) -> Result<Approval, (ToolStatus, String)> {
    match decision {
        None => Err((
            ToolStatus::Cancelled,
            "The turn was cancelled before this call was approved.".into(),
        )),
        Some(Decision::AllowOnce | Decision::ApprovePlan { .. }) => Ok(Approval::Sandboxed),
        Some(Decision::AllowUnsandboxed) => Ok(Approval::Unsandboxed),
        Some(Decision::AllowHunks { rejected, reason }) => Ok(Approval::Hunks(RejectedHunks {
            hunks: rejected,
            reason,
        })),
        Some(Decision::AllowAlways { rule }) => Ok(allow_always(ctx, vec![rule], offered)),
        Some(Decision::AllowAlwaysAll { rules }) => Ok(allow_always(ctx, rules, offered)),
        Some(Decision::Deny { reason }) => {
            let mut text = "The person denied this call; it was not run.".to_string();
            if let Some(r) = reason.filter(|r| !r.trim().is_empty()) {
                text.push_str(&format!(" Their reason: {}", r.trim()));
            } else {
                text.push_str(" Do not retry it as is; ask or take another approach.");
            }
            Err((ToolStatus::Denied, text))
        }
    }
}

/// Stores the chosen rules when the request offered each of them: those
/// are narrow and cover this call; anything else (a plain `bash`) is
/// refused, and the call runs this once.
fn allow_always(ctx: &TurnContext, chosen: Vec<String>, offered: &[String]) -> Approval {
    if let Some(rule) = chosen.iter().find(|r| !offered.contains(r)) {
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: format!(
                "Not stored: `{rule}` was not among the rules offered for this call; allowed once."
            ),
        });
        return Approval::Sandboxed;
    }
    let mut stored = Vec::new();
    for rule in &chosen {
        match store_rule(ctx, rule) {
            Ok(()) => stored.push(format!("`{rule}`")),
            Err(text) => ctx.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Info,
                text,
            }),
        }
    }
    if let (false, Some(file)) = (stored.is_empty(), &ctx.opts.rules_file) {
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Info,
            text: format!(
                "Allowed from now on in this project: {} (kept in {}, your own file, outside the repository).",
                stored.join(", "),
                file.display()
            ),
        });
    }
    Approval::Sandboxed
}

/// Uses and stores one rule; `Err` says what went wrong.
fn store_rule(ctx: &TurnContext, rule: &str) -> Result<(), String> {
    let added = lock(&ctx.shared.gate).add_allow_rule(rule);
    match added {
        Err(e) => Err(format!("Could not use the rule `{rule}`: {e}")),
        Ok(()) => store_in_own_file(ctx, rule)
            .map_err(|e| format!("Allowed `{rule}` for this session, but could not store it: {e}")),
    }
}

/// Stores the rule in the person's own file for this project: the
/// repository's files are not touched, so its trust stands as it was.
fn store_in_own_file(ctx: &TurnContext, rule: &str) -> Result<(), String> {
    let Some(file) = &ctx.opts.rules_file else {
        return Err("there is no config directory on this system to keep it in".into());
    };
    crate::permission::store::store_own_rule(file, &ctx.opts.workspace, rule)
        .map_err(|e| e.to_string())
}
