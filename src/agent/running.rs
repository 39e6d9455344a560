//! Running one approved call: its progress forwarded to the screen
//! (without secrets), cancellation with a grace period, and the status the
//! call ends with.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::turn_context::{PendingCall, TurnContext};
use crate::conversation::ResultContent;
use crate::protocol::{AgentEvent, ToolStatus};
use crate::text::truncate_chars as truncate;
use crate::tools::{Progress, Tool, ToolContext, ToolOutput};

/// How long a cancelled tool gets to stop by itself before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How long a writing call waits for a server outside the sandbox to be
/// killed (it takes milliseconds) before it gives up without running.
const OUTSIDE_STOP: Duration = Duration::from_secs(5);

/// Output as the screen gets it: no known secret, colours kept and every
/// other escape sequence removed.
pub(crate) fn for_screen(chunk: &str) -> String {
    crate::ansi::keep_colours(&crate::tools::env::current().redact(chunk))
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

pub(crate) async fn run_tool(
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
    // Nothing runs before the start-up census is taken (it is, by now,
    // unless the session began a moment ago).
    ctx.session.ready();
    // A call that may write marks the workspace until it ends, and what
    // runs outside the sandbox from it is gone before the call runs.
    use crate::sandbox::workspace_changes as changes;
    let roots = tool_ctx.write_roots();
    let writing = (!tool.read_only_call(&input, &tool_ctx)).then(|| {
        (roots.iter())
            .map(|root| changes::writing(root, tool.name()))
            .collect::<Vec<_>>()
    });
    let mut stopped = true;
    for root in roots.iter().filter(|_| writing.is_some()) {
        stopped = stopped && changes::outside_gone(root, tool.name(), OUTSIDE_STOP).await;
    }
    if !stopped {
        drop(tool_ctx);
        let _ = forward.await;
        return (
            ToolStatus::Failed,
            ToolOutput::error(
                "This call did not run: an MCP server that runs outside the sandbox from this \
                 workspace did not stop in time, and it could load what the call would change. \
                 Try again in a moment.",
            ),
        );
    }
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
