//! A command the sandbox stopped: the person gets one key to run it again
//! with what it needed, and "Always" stores a narrow rule for it.

use std::sync::Arc;

use serde_json::Value;

use super::approval::{Approval, Question, ask};
use super::running::run_tool;
use super::turn_context::{PendingCall, TurnContext};
use crate::conversation::ResultContent;
use crate::permission::CallInfo;
use crate::protocol::ToolStatus;
use crate::sandbox::{Grant, Stop, Support};
use crate::tools::{Tool, ToolContext, ToolDisplay, ToolOutput};

/// The dialog's sandbox line for a call about to run.
pub(super) fn dialog_line(
    tool_ctx: &ToolContext,
    tool: &Arc<dyn Tool>,
    grant: &Grant,
) -> Option<String> {
    if tool.name() != "bash" {
        return None;
    }
    let policy = tool_ctx.sandbox_policy();
    let mut line = crate::sandbox::describe(policy.as_ref());
    if policy.is_some() && !grant.is_empty() && Support::detect().enforces_files() {
        line.push_str(&format!(
            "; approving grants {} for this run",
            grant.describe()
        ));
    }
    Some(line)
}

fn merged(base: &Grant, extra: &Grant) -> Grant {
    let mut g = base.clone();
    g.network |= extra.network;
    for p in &extra.write {
        if !g.write.contains(p) {
            g.write.push(p.clone());
        }
    }
    g
}

/// Rules "Always" may store: only for the network, which a rule grants;
/// writes outside the workspace are asked about every time.
fn rules_for(
    ctx: &TurnContext,
    tool: &Arc<dyn Tool>,
    input: &Value,
    tool_ctx: &ToolContext,
    stop: &Stop,
) -> Vec<String> {
    if *stop != Stop::Network {
        return Vec::new();
    }
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Vec::new();
    };
    let cwd = ctx.cwd();
    let info = CallInfo {
        tool: tool.name(),
        input,
        read_only: tool.read_only(),
        paths: tool.paths(input, tool_ctx),
        workspace: &ctx.opts.workspace,
        cwd: &cwd,
    };
    let analysis = crate::shell::parse(command);
    crate::permission::suggest::suggest_rules_covering(&info, Some(&analysis), false)
}

fn with_note(out: ToolOutput, note: &str, before: bool) -> ToolOutput {
    let text = out.text_content();
    let text = if before {
        format!("{note}\n{text}")
    } else {
        format!("{text}\n{note}")
    };
    ToolOutput {
        content: vec![ResultContent::text(text)],
        ..out
    }
}

/// After a run: when the sandbox stopped it, offers a re-run with what it
/// needed; returns the answer the model gets.
pub(super) async fn offer(
    ctx: &TurnContext,
    call: &PendingCall,
    tool: &Arc<dyn Tool>,
    input: &Value,
    mut tool_ctx: ToolContext,
    first: (ToolStatus, ToolOutput),
) -> (ToolStatus, ToolOutput) {
    let stop = match &first.1.display {
        Some(ToolDisplay::Command {
            stopped: Some(stop),
            ..
        }) => stop.clone(),
        _ => return first,
    };
    let Some(extra) = stop.grant() else {
        return first;
    };
    if !ctx.opts.interactive || ctx.cancel.is_cancelled() {
        return first;
    }
    let grant = merged(&tool_ctx.grant, &extra);
    let policy = tool_ctx.sandbox_policy();
    let question = Question {
        hook_may_allow: false,
        reasons: vec![format!(
            "{}; run it again with {}?",
            stop.summary(),
            extra.describe()
        )],
        rules: rules_for(ctx, tool, input, &tool_ctx, &stop),
        sandbox: Some(format!(
            "{}; approving re-runs it with {}{} this once",
            crate::sandbox::describe(policy.as_ref()),
            extra.describe(),
            if extra.network {
                let granted = policy.as_ref().map(|p| p.with_grant(&extra));
                crate::sandbox::network_grant_words(granted.as_ref())
            } else {
                ""
            }
        )),
    };
    match ask(ctx, call, tool, input, question, &tool_ctx).await {
        Ok(approval) => {
            if matches!(approval, Approval::Unsandboxed) {
                tool_ctx.sandbox = crate::sandbox::Sandbox::off();
            }
            tool_ctx.grant = grant;
            let (status, out) = run_tool(ctx, call, tool.clone(), input.clone(), tool_ctx).await;
            let note = format!(
                "The sandbox stopped the first run ({}); the person allowed {} and it ran again:",
                stop.cause(),
                extra.describe()
            );
            (status, with_note(out, &note, true))
        }
        Err(_) => {
            let note = format!("The person did not re-run it with {}.", extra.describe());
            (first.0, with_note(first.1, &note, false))
        }
    }
}
