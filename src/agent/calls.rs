//! Tool calls of one response: judged by the gate in order, then run
//! concurrently, each answered exactly once.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::approval::{Approval, Question, ask};
use super::hooks::PreTool;
use super::running::{for_screen, run_tool};
use super::turn_context::{ParsedCall, PendingCall, TurnContext};
use crate::conversation::{Part, ResultContent};
use crate::extensions::hooks::Permission;
use crate::permission::{CallInfo, Verdict};
use crate::protocol::{AgentEvent, ToolStatus};
use crate::sandbox::Grant;
use crate::tools::state::lock;
use crate::tools::{Tool, ToolContext, ToolDisplay, ToolOutput};

/// How often a background job's new output goes to the screen.
const JOB_LIVE_EVERY: Duration = Duration::from_millis(100);

enum Plan {
    Answer(ToolStatus, String),
    Run(Arc<dyn Tool>, Value, Grant),
    /// The last field: whether a `PermissionRequest` hook may allow it.
    Ask(Arc<dyn Tool>, Value, Vec<String>, Vec<String>, Grant, bool),
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
        fetch_hosts: crate::tools::fetch::FetchHosts::new(
            lock(&ctx.shared.gate).rules().fetch_hosts(),
        ),
        call_id: String::new(),
        files: ctx.shared.files.clone(),
        terminals: ctx.shared.terminals.clone(),
        own_cwd: ctx.own_cwd.clone(),
        formatting: ctx.shared.formatting.clone(),
    }
}

/// The context a call's tool works with: the turn's, with its id.
fn call_context(tool_ctx: &ToolContext, call: &PendingCall) -> ToolContext {
    let mut c = tool_ctx.clone();
    c.call_id = call.id.clone();
    c
}

pub(crate) async fn execute(ctx: &TurnContext, calls: Vec<ParsedCall>) -> Vec<Part> {
    let tool_ctx = base_context(ctx);
    // Calls whose effect must be asked for first (a language server's
    // rename) are worked out, all at once; what cannot be is answered.
    // Not where only reading is allowed: such a call is refused anyway,
    // and nothing is asked of a server for it.
    let mode = lock(&ctx.shared.gate).mode();
    let may_act = !matches!(mode, crate::config::Mode::Chat | crate::config::Mode::Plan)
        && !ctx.sub.as_ref().is_some_and(|s| s.read_only);
    let calls = futures::future::join_all(calls.into_iter().map(|(call, parsed)| {
        let tool_ctx = &tool_ctx;
        async move {
            let resolved = match (ctx.tools().get(&call.name), parsed) {
                (Some(tool), Ok(input)) if may_act => {
                    let c = call_context(tool_ctx, &call);
                    let asked = input.clone();
                    match tool.resolve(input, &c).await {
                        Ok(input) => (Ok(input), None),
                        Err(why) => (Ok(asked), Some(why)),
                    }
                }
                (_, parsed) => (parsed, None),
            };
            (call, resolved)
        }
    }))
    .await;
    // `PreToolUse` hooks of all the calls at once, before any is judged.
    let pres =
        futures::future::join_all(calls.iter().map(|(call, (parsed, unresolved))| async move {
            match (ctx.tools().get(&call.name), parsed, unresolved) {
                (Some(_), Ok(input), None) => super::hooks::pre_tool(ctx, &call.name, input).await,
                _ => PreTool::default(),
            }
        }))
        .await;
    // Judge in order: the repetition inspector counts calls as they come.
    let plans: Vec<(PendingCall, Plan, Vec<String>)> = calls
        .into_iter()
        .zip(pres)
        .map(|((call, (parsed, unresolved)), mut pre)| {
            let context = std::mem::take(&mut pre.context);
            let plan = match unresolved {
                Some(why) => {
                    started(ctx, &call, parsed.as_ref().unwrap_or(&Value::Null));
                    Plan::Answer(ToolStatus::Failed, why)
                }
                None => judge(ctx, &call_context(&tool_ctx, &call), &call, parsed, pre),
            };
            (call, plan, context)
        })
        .collect();

    // Results as they finish, in call order, so each is stored at once
    // rather than when the slowest call of the batch ends.
    let total = plans.len();
    let finished: std::sync::Mutex<Vec<Option<Part>>> = std::sync::Mutex::new(vec![None; total]);
    let finished = &finished;
    let futures = (plans.into_iter().enumerate()).map(|(slot, (call, plan, context))| {
        let tool_ctx = tool_ctx.clone();
        async move {
            let ran = match &plan {
                Plan::Run(_, input, _) | Plan::Ask(_, input, ..) => Some(input.clone()),
                Plan::Answer(..) => None,
            };
            // What a file tool writes once it runs (asked about if it is a
            // control file) is the person's, not a command's plant.
            let writes = match &plan {
                Plan::Run(tool, input, _) | Plan::Ask(tool, input, ..)
                    if crate::permission::edits_files(tool.name(), input) =>
                {
                    tool.paths(input, &call_context(&tool_ctx, &call))
                }
                _ => Vec::new(),
            };
            // A parallel call's check must not take this write for a plant.
            ctx.session.writing(&writes);
            let mark = ctx.session.write_mark();
            let (status, mut output) = carry_out(ctx, &call, plan, tool_ctx, &writes).await;
            ctx.session.written(&writes);
            if status == ToolStatus::Done && call.name == "skill" {
                super::grants::skill_loaded(ctx, &call.id);
            }
            // Only the files the call changed are the person's: one whose
            // every hunk was rejected, or a change that changes nothing,
            // takes nothing in (a plant under it stays a plant).
            let accepted = if status == ToolStatus::Done {
                let changed = ctx.session.wrote_since(mark);
                writes.into_iter().filter(|p| changed.contains(p)).collect()
            } else {
                Vec::new()
            };
            if status == ToolStatus::Done {
                super::checks::after_edit(
                    &ctx.shared,
                    &ctx.opts.workspace,
                    &call.name,
                    &mut output,
                )
                .await;
            }
            if let Some(input) = ran
                && matches!(status, ToolStatus::Done | ToolStatus::Failed)
            {
                let failed = status == ToolStatus::Failed;
                let text = output.text_content();
                let said = super::hooks::post_tool(ctx, &call.name, &input, &text, failed);
                if let Some(text) = said.await {
                    output.content.push(ResultContent::Text { text });
                }
                let memory = (!failed)
                    .then(|| super::memory::nested_for(ctx, &call.name, &input))
                    .flatten();
                if let Some(text) = memory {
                    output.content.push(ResultContent::Text { text });
                }
            }
            // What a PreToolUse hook added for the model comes with the
            // result, as Claude Code gives it.
            for c in context {
                let text = format!("PreToolUse hook context: {c}");
                output.content.push(ResultContent::Text { text });
            }
            let share = super::result_bound::share(ctx.opts.model_info.context_window, total);
            let part = answer(ctx, &call, status, output, &accepted, share);
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

/// Tells the front end a call began.
fn started(ctx: &TurnContext, call: &PendingCall, input: &Value) {
    let summary = match ctx.tools().get(&call.name) {
        Some(t) if !input.is_null() => t.summary(input),
        _ => call.name.clone(),
    };
    ctx.shared.emit(AgentEvent::ToolCallStarted {
        call_id: call.id.clone(),
        name: call.name.clone(),
        input: input.clone(),
        summary,
    });
}

/// Announces a call and has the gate judge it.
fn judge(
    ctx: &TurnContext,
    tool_ctx: &ToolContext,
    call: &PendingCall,
    parsed: Result<Value, String>,
    pre: PreTool,
) -> Plan {
    // What a hook's `updatedInput` says is what is shown, judged and run.
    let parsed = match (parsed, pre.input.clone()) {
        (Ok(_), Some(updated)) => Ok(updated),
        (p, _) => p,
    };
    let tool = ctx.tools().get(&call.name);
    started(ctx, call, parsed.as_ref().unwrap_or(&Value::Null));
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
    if let Some(why) = pre.refused {
        return Plan::Answer(
            ToolStatus::Denied,
            format!("A PreToolUse hook stopped this call; it was not run. The hook said: {why}"),
        );
    }
    let paths = tool.paths(&input, tool_ctx);
    super::checks::touch(&ctx.shared, &paths);
    let cwd = ctx.cwd();
    let info = CallInfo {
        tool: tool.name(),
        input: &input,
        read_only: tool.read_only_call(&input, tool_ctx),
        paths,
        workspace: &ctx.opts.workspace,
        cwd: &cwd,
    };
    let mut gate = lock(&ctx.shared.gate);
    if let Some(sub) = ctx.sub.as_ref().filter(|s| s.read_only)
        && let Some(why) = gate.read_only_refusal(&info)
    {
        return Plan::Answer(
            ToolStatus::Denied,
            format!(
                "The `{}` agent only reads: {why}, so it was not run. Report what you found instead.",
                sub.name
            ),
        );
    }
    let verdict = gate.check(&info);
    // A hook's `allow` spares the person the question, never the security
    // inspector, a deny rule, the sandbox (no grant beyond the unasked) or
    // the question about a control file the person's git runs later.
    let no_control = crate::permission::gate::control_reasons(&info).is_empty();
    let hook_permission = pre.permission.filter(|_| no_control);
    match (verdict, hook_permission) {
        (Verdict::Allow, Some(Permission::Ask)) => {
            let why = format!("a PreToolUse hook asks you to confirm it: {}", pre.reason);
            let grant = gate.grant_for(&info, true);
            Plan::Ask(tool, input, vec![why], Vec::new(), grant, no_control)
        }
        (Verdict::Allow, _) | (Verdict::Ask { fixed: false, .. }, Some(Permission::Allow)) => {
            let grant = gate.grant_for(&info, false);
            Plan::Run(tool, input, grant)
        }
        (Verdict::Deny { message }, _) => Plan::Answer(ToolStatus::Denied, message),
        (Verdict::Block { message }, _) => Plan::Answer(ToolStatus::Blocked, message),
        (
            Verdict::Ask {
                reasons,
                rules,
                fixed,
            },
            _,
        ) => {
            let grant = gate.grant_for(&info, true);
            Plan::Ask(tool, input, reasons, rules, grant, !fixed && no_control)
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
    accepted: &[std::path::PathBuf],
    share: usize,
) -> Part {
    // What a command (or a job still running) added that the person's
    // own git would obey is moved away before anyone runs git.
    let moved = ctx.session.check_control_files(accepted);
    if !moved.is_empty() {
        let note = format!("[cairn] {}", moved.join("\n[cairn] "));
        output.content.push(ResultContent::text(note));
        // An edit is shown as its diff, without its text: the person hears
        // of the move beside it.
        if matches!(
            output.display,
            Some(ToolDisplay::Diff(_) | ToolDisplay::Diffs { .. })
        ) {
            moved_notice(&ctx.shared, &moved);
        }
        // A job that planted one would plant it again (as the watcher
        // stops them).
        if ctx.session.jobs.any_running() {
            ctx.session.jobs.kill_all();
            said_jobs_stopped(&ctx.shared);
        }
    }
    crate::tools::env::redact_output(&mut output);
    let screen = crate::ansi::keep_colours(&output.text_content());
    for c in &mut output.content {
        if let ResultContent::Text { text } = c
            && crate::ansi::needs_work(text)
        {
            *text = crate::ansi::strip(text);
        }
    }
    super::result_bound::bound(&mut output, share);
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
    writes: &[std::path::PathBuf],
) -> (ToolStatus, ToolOutput) {
    tool_ctx.call_id = call.id.clone();
    let (tool, input, grant) = match plan {
        Plan::Answer(status, text) => return (status, ToolOutput::error(text)),
        Plan::Run(tool, input, grant) => (tool, input, grant),
        Plan::Ask(tool, input, reasons, rules, grant, hook_may_allow) => {
            let sandbox = super::rerun::dialog_line(&tool_ctx, &tool, &grant);
            let question = Question {
                reasons,
                rules,
                sandbox,
                hook_may_allow,
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
    if !writes.is_empty() {
        // What a command planted where this call writes, while the person
        // looked, goes now: the write must not take it in as theirs.
        let moved = ctx.session.settle_before_writing(writes);
        moved_notice(&ctx.shared, &moved);
    }
    let first = run_tool(ctx, call, tool.clone(), input.clone(), tool_ctx.clone()).await;
    let (status, output) = super::rerun::offer(ctx, call, &tool, &input, tool_ctx, first).await;
    if matches!(status, ToolStatus::Cancelled | ToolStatus::Failed) {
        lock(&ctx.shared.gate).uncount_repetition(&tool_name, &input);
    }
    (status, output)
}

/// Streams a background job's output into the pane of the call that
/// started it, and then how it ended, however long that takes: the task
/// outlives the turn, and ends with the job (which a new session, a
/// resume or quitting kills).
/// Tells the person what a check between tool calls moved away.
pub(super) fn moved_notice(shared: &super::Shared, moved: &[String]) {
    for text in moved {
        shared.emit(AgentEvent::Notice {
            level: crate::protocol::NoticeLevel::Warning,
            text: format!("[cairn] {text}"),
        });
    }
}

/// Says that a plant stopped the session's background jobs.
fn said_jobs_stopped(shared: &super::Shared) {
    shared.emit(AgentEvent::Notice {
        level: crate::protocol::NoticeLevel::Warning,
        text: "[cairn] Stopped the session's background jobs: a git control file appeared \
               while they ran, and a job that plants one would plant it again."
            .to_string(),
    });
}

/// How often the control files are looked at while a background job runs.
const PLANT_CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// While background jobs run, the session may sit idle and the person
/// run git in their own terminal: the control files a bind cannot stop (a
/// new `.git/commondir`, a gitlink) are looked for four times a second,
/// not only when a job ends — by one watcher per session, for as long as
/// any job runs. What appeared is moved away, and since a job that
/// planted one would plant it again, every background job of the session
/// is stopped.
fn watch_for_plants(shared: &Arc<super::Shared>, session: &Arc<crate::tools::SessionState>) {
    use std::sync::atomic::Ordering;
    if session.plant_watch.swap(true, Ordering::SeqCst) {
        return;
    }
    let (shared, session) = (shared.clone(), Arc::downgrade(session));
    tokio::spawn(async move {
        let mut every = tokio::time::interval(PLANT_CHECK_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        every.tick().await;
        loop {
            every.tick().await;
            let Some(session) = session.upgrade() else {
                return;
            };
            if !session.jobs.any_running() {
                session.plant_watch.store(false, Ordering::SeqCst);
                // A job started just now, and its own call found this
                // watcher still on: keep watching for it.
                if session.jobs.any_running() && !session.plant_watch.swap(true, Ordering::SeqCst) {
                    continue;
                }
                return;
            }
            let checked = tokio::task::spawn_blocking(move || {
                let moved = session.check_now();
                if !moved.is_empty() {
                    session.jobs.kill_all();
                }
                moved
            })
            .await;
            let moved = checked.unwrap_or_default();
            if !moved.is_empty() {
                moved_notice(&shared, &moved);
                said_jobs_stopped(&shared);
            }
        }
    });
}

fn follow_job(ctx: &TurnContext, call_id: &str, job_id: &str) {
    let Some(process) = ctx.session.jobs.get(job_id) else {
        return;
    };
    let shared = ctx.shared.clone();
    let call_id = call_id.to_string();
    // Not kept alive by its jobs: a session's end kills them.
    let session = Arc::downgrade(&ctx.session);
    watch_for_plants(&shared, &ctx.session);
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
        // What the job planted after the last tool call's check.
        if let Some(session) = session.upgrade() {
            moved_notice(&shared, &session.check_between());
        }
    });
}
