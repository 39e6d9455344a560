//! Running one event's hooks: all that match at once, each given the event
//! as JSON on stdin and `$CLAUDE_PROJECT_DIR`/`$CAIRN_PROJECT_DIR`, each
//! stopped (its whole process group) at its timeout or when the turn is
//! cancelled. Hooks run through `crate::sandbox`, like a command the model
//! runs: a project's, and the person's own unless `[sandbox] user_hooks =
//! false` (a hook of theirs such as `npx prettier --write` runs the
//! repository's code, which must stay contained). The person's own hook
//! may also read what its command names outside the workspace (its script
//! in `~/.claude/hooks/`, say).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::{Event, Hook, Hooks, Kind};
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
            // The same command (or the same prompt to the same model) once.
            let repeat = chosen
                .iter()
                .any(|&j| self.hooks[j].command == h.command && self.hooks[j].kind == h.kind);
            if h.event == event && h.matcher.matches(subjects) && !repeat {
                chosen.push(i);
            }
        }
        if chosen.is_empty() {
            return Vec::new();
        }
        let stdin = serde_json::to_vec(input).unwrap_or_default();
        let runs = futures::future::join_all(chosen.iter().map(|&i| {
            let hook = &self.hooks[i];
            let stdin = &stdin;
            async move {
                match &hook.kind {
                    Kind::Command => self.run_one(i, hook, stdin, cancel).await,
                    Kind::Prompt { model } => {
                        let model = model.clone();
                        super::prompt::run(self.asker(), i, hook, model, input, cancel).await
                    }
                }
            }
        }))
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
            Scope::User if self.confines_user_hooks() => {
                let mut readable: Vec<_> = self.transcript.path().into_iter().collect();
                readable.extend(named_outside(&hook.command, &self.workspace));
                crate::sandbox::user_hook_command(&self.sandbox, "sh", &self.workspace, &readable)
                    .map_err(|e| format!("could not be contained: {e}"))?
            }
            Scope::User => {
                let mut cmd = tokio::process::Command::new("/bin/sh");
                crate::sandbox::own_path::apply(cmd.as_std_mut());
                cmd
            }
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

    /// Whether the person's own hooks run in the sandbox: unless their
    /// config says `[sandbox] user_hooks = false` or turns the sandbox off.
    pub fn confines_user_hooks(&self) -> bool {
        self.sandbox.config().user_hooks() && self.sandbox.mode() != crate::config::SandboxMode::Off
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

/// Where a hook's command names files outside `workspace` (`~/.claude/
/// hooks/fmt.py`, `$HOME/bin/notify`, `/opt/tools/check`): the folders of
/// those that exist, for the sandbox to let it read. The secret paths stay
/// unreadable whatever is named (`deny_read` wins).
fn named_outside(command: &str, workspace: &std::path::Path) -> Vec<std::path::PathBuf> {
    let home = crate::paths::home_dir();
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for word in command.split_whitespace() {
        let word = word.trim_matches(|c| matches!(c, '"' | '\'' | ';' | '&' | '|' | '(' | ')'));
        let rest = ["~/", "$HOME/", "${HOME}/"]
            .iter()
            .find_map(|p| word.strip_prefix(p));
        let path = match (rest, &home) {
            (Some(rest), Some(h)) => h.join(rest),
            (None, _) if word.starts_with('/') => std::path::PathBuf::from(word),
            _ => continue,
        };
        let path = crate::paths::lexical(&path);
        let dir = if path.is_dir() {
            path
        } else if path.is_file() {
            match path.parent() {
                Some(p) => p.to_path_buf(),
                None => continue,
            }
        } else {
            continue;
        };
        let too_wide = dir == std::path::Path::new("/")
            || home.as_deref().is_some_and(|h| h.starts_with(&dir))
            || dir.starts_with(workspace);
        if !too_wide && !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

async fn read_capped<R: AsyncRead + Unpin>(pipe: Option<R>) -> String {
    let Some(pipe) = pipe else {
        return String::new();
    };
    let mut buf = Vec::new();
    let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut buf).await;
    String::from_utf8_lossy(&buf).into_owned()
}
