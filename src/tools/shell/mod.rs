//! `bash`: runs a command in the session's shell directory, with a timeout,
//! merged output, a move to the background for long runs, and undo records
//! for the files it changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::interactive::{refusal, without_trailing_pager};
use super::jobs::Process;
use super::snapshot::{Snapshot, record_changes};
use super::walk::blocking;
use super::{
    Preview, Tool, ToolContext, ToolDisplay, ToolOutput, opt_bool_arg, opt_str_arg, opt_u64_arg,
    str_arg,
};
use crate::sandbox::Policy;
use crate::shell::parse;

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// A command still running after this long moves to the background.
const BACKGROUND_AFTER_MS: u64 = 60_000;
pub const MAX_OUTPUT_CHARS: usize = 30_000;
const SUMMARY_CHARS: usize = 80;
/// How often a running command's new output goes to the screen.
const LIVE_EVERY: Duration = Duration::from_millis(100);

pub struct BashTool;

struct Args {
    command: String,
    timeout_ms: u64,
    background: bool,
}

impl Args {
    fn parse(input: &Value) -> Result<Args, String> {
        let command = str_arg(input, "command")?.to_string();
        if command.trim().is_empty() {
            return Err("`command` is empty; give the shell command to run".into());
        }
        let timeout_ms = match opt_u64_arg(input, "timeout_ms")? {
            None => DEFAULT_TIMEOUT_MS,
            Some(0) => return Err("`timeout_ms` must be at least 1".into()),
            Some(t) => t.min(MAX_TIMEOUT_MS),
        };
        // Only shown in the summary, but a wrong type is still an error.
        opt_str_arg(input, "description")?;
        Ok(Args {
            command,
            timeout_ms,
            background: opt_bool_arg(input, "run_in_background")?.unwrap_or(false),
        })
    }
}

#[cfg(test)]
thread_local! {
    /// Unit tests run in parallel in one process, so they cannot share the
    /// environment variable; each test thread sets its own threshold.
    static TEST_BACKGROUND_AFTER: std::cell::Cell<Option<Duration>> = const { std::cell::Cell::new(None) };
}

fn background_after_from(var: Option<String>) -> Duration {
    let ms = var
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(BACKGROUND_AFTER_MS);
    Duration::from_millis(ms)
}

fn background_after() -> Duration {
    #[cfg(test)]
    if let Some(d) = TEST_BACKGROUND_AFTER.with(|c| c.get()) {
        return d;
    }
    background_after_from(std::env::var("CAIRN_BASH_BACKGROUND_AFTER_MS").ok())
}

/// The command followed by a trailer that saves the final directory, so a
/// `cd` carries over to the next call; the command's status is kept. The
/// trailer is silent even when its file is gone (a job that outlived its
/// call): a failed redirection reports to the braces' stderr.
fn script(command: &str, cwd_file: &Path) -> String {
    let quoted = cwd_file.display().to_string().replace('\'', r"'\''");
    format!(
        "{command}\n__cairn_status=$?\n{{ pwd > '{quoted}'; }} 2>/dev/null\nexit $__cairn_status\n"
    )
}

fn with_output(mut text: String, output: &str) -> String {
    let output = crate::text::truncate_middle(output.trim_end(), MAX_OUTPUT_CHARS);
    if !output.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&output);
    }
    text
}

fn start_dir(ctx: &ToolContext) -> PathBuf {
    let cwd = ctx.shell_cwd();
    if cwd.is_dir() {
        cwd
    } else {
        ctx.set_shell_cwd(ctx.workspace.clone());
        ctx.workspace.clone()
    }
}

/// A command that ran to its end: what it was, how it ended, under what.
struct Ran<'a> {
    command: &'a str,
    code: i32,
    policy: Option<&'a Policy>,
    cwd: &'a Path,
}

/// The answer for a command that ran to its end, saying plainly when the
/// sandbox stopped it.
fn finished(ran: &Ran, output: &str, ctx: &ToolContext) -> ToolOutput {
    let Ran {
        command,
        code,
        policy,
        cwd,
    } = *ran;
    let stopped = policy
        .filter(|_| crate::sandbox::Support::detect().enforces_files())
        .and_then(|p| {
            let wants_network = crate::permission::needs::network(&parse(command)).is_some();
            crate::sandbox::detect::detect(p, code, output, cwd, wants_network)
        });
    let display = ToolDisplay::Command {
        sandbox: crate::sandbox::describe(policy),
        stopped: stopped.clone(),
        cwd: (cwd != ctx.workspace).then(|| ctx.display_path(cwd).into()),
        exit_code: Some(code),
    };
    let out = if code == 0 {
        let text = with_output(String::new(), output);
        ToolOutput::text(if text.is_empty() {
            "(no output)".to_string()
        } else {
            text
        })
    } else {
        let head = match &stopped {
            Some(stop) => format!("{}\nexit code {code}", stop.message()),
            None => format!("exit code {code}"),
        };
        ToolOutput::error(with_output(head, output))
    };
    out.with_display(display)
}

/// Streams whole lines of output to the pane while waiting for the exit.
async fn wait_streaming(process: &Process, ctx: &ToolContext) -> i32 {
    if ctx.progress.is_none() {
        return process.wait().await;
    }
    let mut sent = 0;
    let mut tick = tokio::time::interval(LIVE_EVERY);
    let wait = process.wait();
    tokio::pin!(wait);
    loop {
        tokio::select! {
            code = &mut wait => return code,
            _ = tick.tick() => {
                let (chunk, next) = process.lines_since(sent);
                sent = next;
                ctx.report_output(chunk);
            }
        }
    }
}

/// What a command needs before it starts: the shell script (with the cwd
/// trailer and git's hook guard), where it runs, and the files to compare.
struct Prepared {
    script: String,
    cwd: PathBuf,
    cwd_file: tempfile::NamedTempFile,
    snapshot: Option<Snapshot>,
}

async fn prepare(args: &Args, ctx: &ToolContext) -> Result<Prepared, ToolOutput> {
    // A pager at the end of a pipe is dropped: the model reads it all.
    let command = without_trailing_pager(&args.command).unwrap_or_else(|| args.command.clone());
    let analysis = parse(&command);
    if let Some(msg) = refusal(&analysis) {
        return Err(ToolOutput::error(msg));
    }
    let cwd = start_dir(ctx);
    // A read-only git runs without the repository's command hooks.
    let git_preamble = {
        let (analysis, cwd) = (analysis.clone(), cwd.clone());
        blocking(move || super::git_safety::preamble(&analysis, &cwd))
            .await
            .unwrap_or_default()
    };
    let temp_dir = ctx.sandbox.shared_temp_dir(&ctx.workspace);
    // Outside the system's temporary directory: the start-up sweep finds
    // what a crash left here through the journal.
    super::tempfiles::note_dir(&temp_dir);
    let cwd_file = tempfile::Builder::new()
        .prefix(&super::tempfiles::cwd_prefix())
        .tempfile_in(&temp_dir)
        .map_err(|e| ToolOutput::error(format!("cannot create a temporary file: {e}")))?;
    // A job started in the background changes files after this call has
    // answered, so there is nothing to compare against.
    let snapshot = if args.background {
        None
    } else {
        let root = ctx.workspace.clone();
        blocking(move || Snapshot::take(&root)).await.ok()
    };
    let script = format!("{git_preamble}{}", script(&command, cwd_file.path()));
    Ok(Prepared {
        script,
        cwd,
        cwd_file,
        snapshot,
    })
}

/// A command that outlives its call (a background job) keeps its
/// workspace marked as being written until it ends; the call itself is
/// covered by the agent's mark around every writing call.
fn writing_until_it_ends(process: &Arc<Process>, ctx: &ToolContext) {
    let writing: Vec<_> = (ctx.write_roots().iter())
        .map(|root| crate::sandbox::workspace_changes::writing(root, "bash"))
        .collect();
    let watched = process.clone();
    tokio::spawn(async move {
        watched.wait().await;
        drop(writing);
    });
}

async fn run_command(args: Args, ctx: &ToolContext) -> ToolOutput {
    let p = match prepare(&args, ctx).await {
        Ok(p) => p,
        Err(answer) => return answer,
    };
    let policy = ctx.sandbox_policy();
    if let Some(terms) = editor::offered(ctx, args.background) {
        match editor::run(terms, &p, policy.as_ref(), args.timeout_ms, ctx).await {
            Ok(ended) => {
                let out = match ended {
                    editor::Ended::Exited(code, output) => {
                        take_cwd(&p, ctx);
                        let ran = Ran {
                            command: &args.command,
                            code,
                            policy: policy.as_ref(),
                            cwd: &p.cwd,
                        };
                        finished(&ran, &output, ctx)
                    }
                    editor::Ended::Stopped(answer) => answer,
                };
                record_changes(ctx, p.snapshot, "changed by a command").await;
                return out;
            }
            Err(why) => terms.fell_back(&why),
        }
    }
    let process = match Process::spawn(&args.command, &p.script, &p.cwd, policy.as_ref()) {
        Ok(p) => Arc::new(p),
        Err(e) => return ToolOutput::error(format!("cannot start the shell: {e}")),
    };
    if args.background {
        writing_until_it_ends(&process, ctx);
        let id = ctx.session.jobs.add(process);
        return ToolOutput::text(format!(
            "Started in the background as {id}. Read its output with job_output and stop it with job_kill."
        ))
        .with_display(ToolDisplay::Job { job_id: id });
    }
    let timeout = Duration::from_millis(args.timeout_ms);
    let to_background = background_after();
    let out = tokio::select! {
        code = wait_streaming(&process, ctx) => {
            take_cwd(&p, ctx);
            let ran = Ran { command: &args.command, code, policy: policy.as_ref(), cwd: &p.cwd };
            finished(&ran, &process.output(), ctx)
        }
        _ = tokio::time::sleep(timeout) => {
            process.kill().await;
            ToolOutput::error(with_output(
                format!("timed out after {} ms; the command and everything it started were stopped. Output so far:", args.timeout_ms),
                &process.output(),
            ))
        }
        _ = tokio::time::sleep(to_background), if to_background < timeout => {
            let output = process.output();
            process.mark_read();
            writing_until_it_ends(&process, ctx);
            let id = ctx.session.jobs.add(process.clone());
            ToolOutput::text(with_output(
                format!("Still running after {} s, so it moved to the background as {id}; use job_output to follow it and job_kill to stop it. Output so far:", to_background.as_secs()),
                &output,
            ))
            .with_display(ToolDisplay::Job { job_id: id })
        }
        _ = ctx.cancel.cancelled() => {
            process.kill().await;
            ToolOutput::error(with_output("cancelled; the command was stopped. Output so far:".into(), &process.output()))
        }
    };
    record_changes(ctx, p.snapshot, "changed by a command").await;
    out
}

/// The directory the command ended in becomes the next one's.
fn take_cwd(p: &Prepared, ctx: &ToolContext) {
    if let Some(dir) = read_cwd_file(p.cwd_file.path()) {
        let dir = PathBuf::from(dir.trim_end_matches('\n'));
        if dir.is_dir() {
            ctx.set_shell_cwd(dir);
        }
    }
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        include_str!("../../../assets/tools/bash.md")
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The shell command to run with bash -c."
                },
                "timeout_ms": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT_MS,
                    "description": "Stop the command after this many milliseconds. Default 120000, at most 600000."
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Start the command and return its job id at once, for servers and watchers. Default false."
                },
                "description": {
                    "type": "string",
                    "description": "A few words saying what the command does, shown to the person."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        false
    }
    /// The command itself, never only the model's description of it: a
    /// label could hide what really runs.
    fn summary(&self, input: &Value) -> String {
        format!(
            "bash {}",
            crate::text::first_line_marked(
                input.get("command").and_then(Value::as_str).unwrap_or(""),
                SUMMARY_CHARS
            )
        )
    }
    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let args = Args::parse(input)?;
        let runs = without_trailing_pager(&args.command).unwrap_or_else(|| args.command.clone());
        if let Some(msg) = refusal(&parse(&runs)) {
            return Err(msg);
        }
        let analysis = parse(&args.command);
        Ok(Some(Preview::Command {
            cwd: ctx.display_path(&ctx.shell_cwd()),
            commands: analysis.commands.iter().map(|c| c.words.clone()).collect(),
            redirects: analysis.file_writes().map(|r| r.target.clone()).collect(),
            command: args.command,
        }))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        match Args::parse(&input) {
            Ok(args) => run_command(args, ctx).await,
            Err(e) => ToolOutput::error(e),
        }
    }
}

mod editor;
pub mod launch;

#[cfg(test)]
mod tests;

#[cfg(all(test, target_os = "linux"))]
mod sandbox_tests;

/// The directory the command ended in, from the file the script wrote.
/// The file sits where commands can write, so it may have been replaced
/// by a link (to the terminal, a FIFO, a secret): it is opened without
/// following a link or blocking, read only when it is a regular file, and
/// only its first few KB.
fn read_cwd_file(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(8192).read_to_string(&mut text).ok()?;
    Some(text)
}
