//! A foreground command shown in the front end's terminal (an editor's),
//! run there by cairn's own launcher under the call's sandbox
//! (`launch`). cairn still waits for it, reads its output for the model,
//! kills it on cancel or timeout and releases the terminal; a terminal
//! that cannot be made, or a launcher that cannot start the command, leaves
//! the command to the in-process path.

use std::sync::Arc;
use std::time::Duration;

use super::launch::{self, Spec, Written};
use super::{Prepared, with_output};
use crate::sandbox::Policy;
use crate::tools::jobs::{RunningElsewhere, resolved_env, shell_command, shell_program};
use crate::tools::terminals::Terminals;
use crate::tools::{ToolContext, ToolOutput};

/// How long the editor may take to open a terminal.
const PATIENCE: Duration = Duration::from_secs(30);

/// How the command ended in the editor's terminal.
pub(super) enum Ended {
    /// It ran to its end: its exit code and output.
    Exited(i32, String),
    /// Cancelled or timed out: the answer already made.
    Stopped(ToolOutput),
}

/// Runs the prepared command in the editor's terminal; `Err` says why it
/// could not start there (nothing ran) and the caller runs it itself.
pub(super) async fn run(
    terms: &Arc<dyn Terminals>,
    p: &Prepared,
    policy: Option<&Policy>,
    timeout_ms: u64,
    ctx: &ToolContext,
) -> Result<Ended, String> {
    let exe = launch::own_exe().ok_or("cairn cannot name its own executable")?;
    // The editor runs it unconfined: never a file a command could replace.
    let writable = policy.map_or(&[][..], |p| &p.writable[..]);
    if exe.starts_with(&ctx.workspace) || writable.iter().any(|w| exe.starts_with(w)) {
        return Err(format!(
            "cairn's executable {} lies where commands may write",
            exe.display()
        ));
    }
    let dir = launch::spec_dir().ok_or("there is no cache folder for the launcher's spec")?;
    let spec = spec_for(p, policy)?;
    let written = launch::write_in(&dir, &spec)
        .map_err(|e| format!("cannot write the launcher's spec in {}: {e}", dir.display()))?;
    let args = vec![
        launch::SUBCOMMAND.to_string(),
        written.path.display().to_string(),
    ];
    let _running = RunningElsewhere::begin();
    // The launcher starts in cairn's own folder, not the workspace (a
    // relative library path in the editor's environment finds nothing
    // there); the command gets its directory from the spec.
    let create = terms.create(&ctx.call_id, exe, args, &dir);
    let id = tokio::select! {
        made = create => made.map_err(|e| format!("the editor could not open a terminal: {e}"))?,
        // Dropping the spec on the way out leaves a late launcher nothing
        // to run.
        _ = ctx.cancel.cancelled() => {
            return Ok(Ended::Stopped(ToolOutput::error("cancelled before the command started")));
        }
        _ = tokio::time::sleep(PATIENCE) => {
            return Err(format!("the editor did not open a terminal within {} seconds", PATIENCE.as_secs()));
        }
    };
    let ended = watch(terms, &id, &written, timeout_ms, ctx).await;
    terms.release(&id).await;
    ended
}

/// The spec of this call, with the environment the in-process path would
/// give it, worked out by the same builder.
fn spec_for(p: &Prepared, policy: Option<&Policy>) -> Result<Spec, String> {
    let program = shell_program();
    let cmd = shell_command(&program, &p.script, &p.cwd, policy)
        .map_err(|e| format!("cannot build the sandbox: {e}"))?;
    let env = resolved_env(&cmd);
    Ok(Spec {
        program,
        script: p.script.clone(),
        cwd: p.cwd.clone(),
        policy: policy.cloned(),
        env,
    })
}

async fn watch(
    terms: &Arc<dyn Terminals>,
    id: &str,
    written: &Written,
    timeout_ms: u64,
    ctx: &ToolContext,
) -> Result<Ended, String> {
    let stop = |why: String| async move {
        let _ = terms.kill(id).await;
        // What the launcher started dies with it; this is for the editor
        // that only ends the launcher.
        if let Some(group) = written.group() {
            crate::sandbox::kill_group(group);
        }
        let output = terms.output(id).await.unwrap_or_default();
        Ok(Ended::Stopped(ToolOutput::error(with_output(why, &output))))
    };
    tokio::select! {
        code = terms.wait_for_exit(id) => {
            let code = code.map_err(|e| format!("the editor lost the terminal: {e}"))?;
            let output = terms.output(id).await.unwrap_or_default();
            if !written.began() {
                return Err(format!("the launcher could not start it: {}", output.trim()));
            }
            Ok(Ended::Exited(code, output))
        }
        _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => {
            stop(format!("timed out after {timeout_ms} ms; the command and everything it started were stopped. Output so far:")).await
        }
        _ = ctx.cancel.cancelled() => {
            stop("cancelled; the command was stopped. Output so far:".into()).await
        }
    }
}

/// Whether the editor's terminal is there for this call.
pub(super) fn offered(ctx: &ToolContext, background: bool) -> Option<&Arc<dyn Terminals>> {
    ctx.terminals
        .as_ref()
        .filter(|_| !background && !ctx.call_id.is_empty())
}
