//! Tool calls of one response: judged by the gate in order, then run
//! concurrently, each answered exactly once.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::events::{AgentEvent, NoticeLevel, ToolStatus};
use super::turn::{ParsedCall, PendingCall, TurnContext};
use crate::conversation::{Part, ResultContent};
use crate::permission::{CallInfo, Decision, PermissionRequest, Verdict};
use crate::sandbox::Grant;
use crate::text::truncate_chars as truncate;
use crate::tools::state::lock;
use crate::tools::{Progress, RejectedHunks, Tool, ToolContext, ToolDisplay, ToolOutput};

/// How long a cancelled tool gets to stop by itself before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How often a background job's new output goes to the screen.
const JOB_LIVE_EVERY: Duration = Duration::from_millis(100);

enum Plan {
    Answer(ToolStatus, String),
    Run(Arc<dyn Tool>, Value, Grant),
    Ask(Arc<dyn Tool>, Value, Vec<String>, Vec<String>, Grant),
}

fn base_context(ctx: &TurnContext) -> ToolContext {
    ToolContext {
        workspace: ctx.opts.workspace.clone(),
        session: ctx.session.clone(),
        cancel: ctx.cancel.child_token(),
        supports_images: ctx.opts.model_info.supports_images,
        progress: None,
        sandbox: ctx.shared.sandbox.clone(),
        grant: Grant::default(),
        rejected: None,
    }
}

pub(crate) async fn execute(ctx: &TurnContext, calls: Vec<ParsedCall>) -> Vec<Part> {
    let tool_ctx = base_context(ctx);
    // Judge in order: the repetition inspector counts calls as they come.
    let plans: Vec<(PendingCall, Plan)> = calls
        .into_iter()
        .map(|(call, parsed)| {
            let plan = judge(ctx, &tool_ctx, &call, parsed);
            (call, plan)
        })
        .collect();

    // Results as they finish, in call order, so each is stored at once
    // rather than when the slowest call of the batch ends.
    let total = plans.len();
    let finished: std::sync::Mutex<Vec<Option<Part>>> = std::sync::Mutex::new(vec![None; total]);
    let finished = &finished;
    let futures = plans.into_iter().enumerate().map(|(slot, (call, plan))| {
        let tool_ctx = tool_ctx.clone();
        async move {
            let (status, output) = carry_out(ctx, &call, plan, tool_ctx).await;
            let part = answer(ctx, &call, status, output);
            let so_far = {
                let mut done = lock(finished);
                done[slot] = Some(part.clone());
                done.iter().flatten().cloned().collect::<Vec<_>>()
            };
            // The last one is completed by `MessageAdded` instead.
            if so_far.len() < total {
                ctx.shared
                    .emit(AgentEvent::PartialMessage(crate::conversation::Message {
                        role: crate::conversation::Role::User,
                        parts: so_far,
                    }));
            }
            part
        }
    });
    futures::future::join_all(futures).await
}

/// Announces a call and has the gate judge it.
fn judge(
    ctx: &TurnContext,
    tool_ctx: &ToolContext,
    call: &PendingCall,
    parsed: Result<Value, String>,
) -> Plan {
    let tool = ctx.tools().get(&call.name);
    let summary = match (&tool, &parsed) {
        (Some(t), Ok(input)) => t.summary(input),
        _ => call.name.clone(),
    };
    ctx.shared.emit(AgentEvent::ToolCallStarted {
        call_id: call.id.clone(),
        name: call.name.clone(),
        input: parsed.clone().unwrap_or(Value::Null),
        summary,
    });
    let (tool, input) = match (tool, parsed) {
        (None, _) => {
            return Plan::Answer(
                ToolStatus::Failed,
                format!(
                    "There is no tool named `{}`. Available tools: {}.",
                    call.name,
                    ctx.tools().names().collect::<Vec<_>>().join(", ")
                ),
            );
        }
        (Some(_), Err(why)) => {
            return Plan::Answer(
                ToolStatus::Failed,
                format!(
                    "The call to `{}` could not be read: {why}. Send it again with a valid JSON object.",
                    call.name
                ),
            );
        }
        (Some(tool), Ok(input)) => (tool, input),
    };
    let paths = tool.paths(&input, tool_ctx);
    let cwd = ctx.session.cwd();
    let info = CallInfo {
        tool: tool.name(),
        input: &input,
        read_only: tool.read_only(),
        paths,
        workspace: &ctx.opts.workspace,
        cwd: &cwd,
    };
    let mut gate = lock(&ctx.shared.gate);
    match gate.check(&info) {
        Verdict::Allow => {
            let grant = gate.grant_for(&info, false);
            Plan::Run(tool, input, grant)
        }
        Verdict::Deny { message } => Plan::Answer(ToolStatus::Denied, message),
        Verdict::Block { message } => Plan::Answer(ToolStatus::Blocked, message),
        Verdict::Ask { reasons, rules } => {
            let grant = gate.grant_for(&info, true);
            Plan::Ask(tool, input, reasons, rules, grant)
        }
    }
}

/// Tells the interface how the call ended and makes its result part: the
/// screen keeps the output's colours, the model gets it with no escape
/// sequence at all, and neither sees a known secret.
fn answer(
    ctx: &TurnContext,
    call: &PendingCall,
    status: ToolStatus,
    mut output: ToolOutput,
) -> Part {
    crate::tools::env::redact_output(&mut output);
    let screen = crate::ansi::keep_colours(&output.text_content());
    for c in &mut output.content {
        if let ResultContent::Text { text } = c
            && crate::ansi::needs_work(text)
        {
            *text = crate::ansi::strip(text);
        }
    }
    if call.name == "todos" && status == ToolStatus::Done {
        ctx.shared.emit(AgentEvent::Todos(ctx.session.todos()));
    }
    ctx.shared.emit(AgentEvent::ToolCallFinished {
        call_id: call.id.clone(),
        status,
        output: screen,
        display: output.display.clone(),
    });
    if let (ToolStatus::Done, Some(ToolDisplay::Job { job_id })) = (status, &output.display) {
        follow_job(ctx, &call.id, job_id);
    }
    Part::ToolResult {
        call_id: call.id.clone(),
        content: output.content,
        is_error: output.is_error,
    }
}

async fn carry_out(
    ctx: &TurnContext,
    call: &PendingCall,
    plan: Plan,
    mut tool_ctx: ToolContext,
) -> (ToolStatus, ToolOutput) {
    let (tool, input, grant) = match plan {
        Plan::Answer(status, text) => return (status, ToolOutput::error(text)),
        Plan::Run(tool, input, grant) => (tool, input, grant),
        Plan::Ask(tool, input, reasons, rules, grant) => {
            let sandbox = super::rerun::dialog_line(&tool_ctx, &tool, &grant);
            let question = Question {
                reasons,
                rules,
                sandbox,
            };
            match ask(ctx, call, &tool, &input, question, &tool_ctx).await {
                Ok(Approval::Sandboxed) => {}
                Ok(Approval::Unsandboxed) => tool_ctx.sandbox = crate::sandbox::Sandbox::off(),
                Ok(Approval::Hunks(rejected)) => tool_ctx.rejected = Some(rejected),
                Err(answer) => return answer,
            }
            (tool, input, grant)
        }
    };
    let tool_name = tool.name().to_string();
    tool_ctx.grant = grant;
    let first = run_tool(ctx, call, tool.clone(), input.clone(), tool_ctx.clone()).await;
    let (status, output) = super::rerun::offer(ctx, call, &tool, &input, tool_ctx, first).await;
    if matches!(status, ToolStatus::Cancelled | ToolStatus::Failed) {
        lock(&ctx.shared.gate).uncount_repetition(&tool_name, &input);
    }
    (status, output)
}

/// How the person approved a call.
pub(super) enum Approval {
    Sandboxed,
    /// "Allow once without the sandbox".
    Unsandboxed,
    /// An edit with some hunks left out.
    Hunks(RejectedHunks),
}

/// What the dialog asks: why, the rules "Always" may store, and the
/// sandbox the call would run in.
pub(super) struct Question {
    pub reasons: Vec<String>,
    pub rules: Vec<String>,
    pub sandbox: Option<String>,
}

/// Asks the person. `Ok` means go ahead (and how); `Err` is the call's
/// answer.
pub(super) async fn ask(
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
    if !ctx.opts.interactive {
        return Err((
            ToolStatus::Denied,
            ToolOutput::error(format!(
                "This call needs the person's approval ({}), and cairn is running non-interactively, so it was not run. Do without it, or explain what you would do and why.",
                question.reasons.join("; ")
            )),
        ));
    }
    let offered = question.rules.clone();
    let request = PermissionRequest {
        tool: call.name.clone(),
        summary: tool.summary(input),
        reasons: question.reasons,
        preview,
        rules: question.rules,
        sandbox: question.sandbox,
    };
    let decision = wait_for_decision(ctx, &call.id, request).await;
    approval(ctx, decision, &offered).map_err(|(status, text)| (status, ToolOutput::error(text)))
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
    ctx.shared
        .emit(AgentEvent::PermissionRequested { id, request });
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
        Some(Decision::AllowOnce) => Ok(Approval::Sandboxed),
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
    if !stored.is_empty() {
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Info,
            text: format!(
                "Allowed from now on: {} (stored in {}).",
                stored.join(", "),
                ctx.opts.project_config.display()
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
        Ok(()) => store_and_keep_trust(ctx, rule)
            .map_err(|e| format!("Allowed `{rule}` for this session, but could not store it: {e}")),
    }
}

/// Stores the rule; a project that was the person's own stays trusted.
fn store_and_keep_trust(
    ctx: &TurnContext,
    rule: &str,
) -> Result<(), crate::permission::store::StoreError> {
    let before = std::fs::read(&ctx.opts.project_config).ok();
    crate::permission::store::store_rule(&ctx.opts.project_config, rule)?;
    if let Some(path) = &ctx.opts.trust_store {
        let global = ctx
            .opts
            .global_config_dir
            .as_ref()
            .map(|d| d.join("config.toml"));
        let store = crate::config::trust::TrustStore::at(path.clone());
        if let Err(e) = crate::config::trust::keep_after_own_edit(
            &store,
            &ctx.opts.workspace,
            global.as_deref(),
            before.as_deref(),
        ) {
            tracing::warn!("cannot keep the project's trust after storing a rule: {e}");
        }
    }
    Ok(())
}

/// Output as the screen gets it: no known secret, colours kept and every
/// other escape sequence removed.
fn for_screen(chunk: &str) -> String {
    crate::ansi::keep_colours(&crate::tools::env::current().redact(chunk))
}

/// Streams a background job's output into the pane of the call that
/// started it, and then how it ended, however long that takes: the task
/// outlives the turn, and ends with the job (which a new session, a
/// resume or quitting kills).
fn follow_job(ctx: &TurnContext, call_id: &str, job_id: &str) {
    let Some(process) = ctx.session.jobs.get(job_id) else {
        return;
    };
    let shared = ctx.shared.clone();
    let call_id = call_id.to_string();
    tokio::spawn(async move {
        let end = process
            .follow(JOB_LIVE_EVERY, |chunk| {
                shared.emit(AgentEvent::JobOutput {
                    call_id: call_id.clone(),
                    chunk: for_screen(&chunk),
                })
            })
            .await;
        shared.emit(AgentEvent::JobFinished { call_id, end });
    });
}

/// Passes what a running tool reports on to the interface, without known
/// secrets; output keeps its colours and loses every other escape.
async fn forward_progress(
    shared: Arc<super::Shared>,
    call_id: String,
    mut prx: tokio::sync::mpsc::UnboundedReceiver<Progress>,
) {
    while let Some(progress) = prx.recv().await {
        let redact = |s: &str| crate::tools::env::current().redact(s);
        shared.emit(match progress {
            Progress::Status(message) => AgentEvent::ToolCallProgress {
                call_id: call_id.clone(),
                message: redact(&message),
            },
            Progress::Output(chunk) => AgentEvent::ToolCallOutput {
                call_id: call_id.clone(),
                chunk: for_screen(&chunk),
            },
        });
    }
}

pub(super) async fn run_tool(
    ctx: &TurnContext,
    call: &PendingCall,
    tool: Arc<dyn Tool>,
    input: Value,
    mut tool_ctx: ToolContext,
) -> (ToolStatus, ToolOutput) {
    if ctx.cancel.is_cancelled() {
        return (
            ToolStatus::Cancelled,
            ToolOutput::error("The turn was cancelled before this call ran."),
        );
    }
    let (ptx, prx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    tool_ctx.progress = Some(ptx);
    ctx.shared.emit(AgentEvent::ToolCallRunning {
        call_id: call.id.clone(),
    });
    let forward = tokio::spawn(forward_progress(ctx.shared.clone(), call.id.clone(), prx));
    let cancel = tool_ctx.cancel.clone();
    let mut fut = Box::pin(async { tool.run(input, &tool_ctx).await });
    let result = tokio::select! {
        out = &mut fut => Some(out),
        _ = cancel.cancelled() => {
            // Let the tool stop its own work (kill processes) and report.
            tokio::time::timeout(CANCEL_GRACE, &mut fut).await.ok()
        }
    };
    drop(fut);
    drop(tool_ctx);
    let _ = forward.await;
    match result {
        _ if cancel.is_cancelled() => {
            let mut out = result.unwrap_or_else(|| ToolOutput::error(""));
            let partial = out.text_content();
            let mut text = "The call was cancelled by the person.".to_string();
            if !partial.trim().is_empty() {
                text.push_str(&format!(
                    "\nOutput before it stopped:\n{}",
                    truncate(&partial, 4000)
                ));
            }
            out.content = vec![ResultContent::text(text)];
            out.is_error = true;
            (ToolStatus::Cancelled, out)
        }
        Some(out) => {
            let status = if out.is_error {
                ToolStatus::Failed
            } else {
                ToolStatus::Done
            };
            (status, out)
        }
        None => (
            ToolStatus::Cancelled,
            ToolOutput::error("The call was cancelled."),
        ),
    }
}
