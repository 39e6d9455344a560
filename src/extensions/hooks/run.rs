//! Running one event's hooks: all that match at once, each given the event
//! as JSON on stdin and `$CLAUDE_PROJECT_DIR`/`$CAIRN_PROJECT_DIR`, each
//! stopped (its whole process group) at its timeout or when the turn is
//! cancelled. A project's hook runs through `crate::sandbox`, like a command
//! the model runs; the person's own runs as them.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::{Event, Hook, Hooks};
use crate::extensions::commands::Scope;

/// How one hook ran.
#[derive(Debug, Clone, Default)]
pub struct HookRun {
    /// Which of [`Hooks::hooks`].
    pub index: usize,
    /// The exit code; `None` when it did not exit by itself.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
    /// Why it did not finish (could not start, timed out, cancelled).
    pub failure: Option<String>,
}

/// The most of a hook's stdout or stderr kept.
const MAX_OUTPUT: u64 = 256 * 1024;

/// How long output may keep coming after the hook exited (a child it left
/// in the background holding the pipe).
const DRAIN: Duration = Duration::from_millis(500);

impl Hooks {
    /// Runs the hooks of `event` whose matcher takes one of `subjects`
    /// (the same command once), in parallel; their runs in order.
    pub async fn run(
        &self,
        event: Event,
        subjects: &[&str],
        input: &Value,
        cancel: &CancellationToken,
    ) -> Vec<HookRun> {
        let mut chosen: Vec<usize> = Vec::new();
        for (i, h) in self.hooks.iter().enumerate() {
            let repeat = chosen.iter().any(|&j| self.hooks[j].command == h.command);
            if h.event == event && h.matcher.matches(subjects) && !repeat {
                chosen.push(i);
            }
        }
        if chosen.is_empty() {
            return Vec::new();
        }
        let stdin = serde_json::to_vec(input).unwrap_or_default();
        let runs = futures::future::join_all(
            chosen
                .iter()
                .map(|&i| self.run_one(i, &self.hooks[i], &stdin, cancel)),
        )
        .await;
        self.record(&runs);
        runs
    }

    fn command(&self, hook: &Hook) -> Result<tokio::process::Command, String> {
        let mut cmd = match hook.scope {
            Scope::Project => {
                let transcript: Vec<_> = self.transcript.path().into_iter().collect();
                crate::sandbox::hook_command(&self.sandbox, "sh", &self.workspace, &transcript)
                    .map_err(|e| format!("could not be contained: {e}"))?
            }
            Scope::User => tokio::process::Command::new("sh"),
        };
        cmd.arg("-c")
            .arg(&hook.command)
            // Scripts name files relative to the project, as in Claude Code.
            .current_dir(&self.workspace)
            .env("CLAUDE_PROJECT_DIR", &self.workspace)
            .env("CAIRN_PROJECT_DIR", &self.workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        Ok(cmd)
    }

    async fn run_one(
        &self,
        index: usize,
        hook: &Hook,
        stdin: &[u8],
        cancel: &CancellationToken,
    ) -> HookRun {
        let start = Instant::now();
        let mut run = HookRun {
            index,
            ..HookRun::default()
        };
        let spawned = self
            .command(hook)
            .and_then(|mut c| c.spawn().map_err(|e| format!("could not be started: {e}")));
        let mut child = match spawned {
            Ok(c) => c,
            Err(why) => {
                run.failure = Some(why);
                return run;
            }
        };
        let pgid = child.id().map(|p| p as i32);
        if let Some(mut pipe) = child.stdin.take() {
            let bytes = stdin.to_vec();
            // A hook that never reads its input must not hold this up.
            tokio::spawn(async move {
                let _ = pipe.write_all(&bytes).await;
            });
        }
        let out = tokio::spawn(read_capped(child.stdout.take()));
        let err = tokio::spawn(read_capped(child.stderr.take()));
        let stop = |why: String, run: &mut HookRun| {
            if let Some(g) = pgid {
                crate::sandbox::kill_group(g);
            }
            run.failure = Some(why);
        };
        tokio::select! {
            status = child.wait() => run.code = status.ok().and_then(|s| s.code()),
            _ = tokio::time::sleep(hook.timeout) => {
                stop(format!("timed out after {} s", hook.timeout.as_secs_f64()), &mut run);
            }
            _ = cancel.cancelled() => stop("cancelled with the turn".into(), &mut run),
        }
        let drained = tokio::time::timeout(DRAIN, async {
            (out.await.unwrap_or_default(), err.await.unwrap_or_default())
        })
        .await;
        if let Ok((o, e)) = drained {
            run.stdout = o;
            run.stderr = e;
        } else if let Some(g) = pgid {
            crate::sandbox::kill_group(g);
        }
        let _ = child.start_kill();
        run.duration = start.elapsed();
        run
    }
}

async fn read_capped<R: AsyncRead + Unpin>(pipe: Option<R>) -> String {
    let Some(pipe) = pipe else {
        return String::new();
    };
    let mut buf = Vec::new();
    let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut buf).await;
    String::from_utf8_lossy(&buf).into_owned()
}
