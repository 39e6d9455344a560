//! Shell processes: each runs in its own process group with stdout and
//! stderr merged into one pipe, so output keeps its arrival order and the
//! whole tree can be stopped at once. A process the model left running is a
//! background job in the session's [`JobTable`].

use std::collections::BTreeMap;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::state::lock;
use crate::sandbox::Policy;

/// Output kept per process; beyond it only a count of what was dropped.
const MAX_BUFFER: usize = 8 * 1024 * 1024;
/// Between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long output still in the pipe is read after the shell exits.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);

pub const SHELL_ENV: &[(&str, &str)] = &[
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("CAIRN", "1"),
];

#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    dropped: usize,
    /// How far `job_output` has read.
    read: usize,
}

/// A running (or finished) shell process. Dropping the last handle of a
/// process that is still running kills its group, so nothing is orphaned.
pub struct Process {
    pub command: String,
    pgid: i32,
    buffer: Arc<Mutex<Buffer>>,
    /// `Some(code)` once the shell exited; -1 when killed by a signal.
    exit: watch::Receiver<Option<i32>>,
}

impl Process {
    /// Starts `script` with `bash -c` (or `sh -c` where bash is missing),
    /// confined by `policy` (see `crate::sandbox`).
    pub fn spawn(
        command: &str,
        script: &str,
        cwd: &Path,
        policy: Option<&Policy>,
    ) -> io::Result<Process> {
        let (reader, writer) = io::pipe()?;
        let child = match start("bash", script, cwd, &writer, policy) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                start("sh", script, cwd, &writer, policy)?
            }
            other => other?,
        };
        // Our copy of the write end must close so the pipe ends when the
        // process tree does.
        drop(writer);
        let pgid = child
            .id()
            .map(|id| id as i32)
            .ok_or_else(|| io::Error::other("the shell exited before it could be tracked"))?;
        let buffer = Arc::new(Mutex::new(Buffer::default()));
        let (tx, rx) = watch::channel(None);
        let receiver = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
        tokio::spawn(supervise(child, receiver, buffer.clone(), tx, pgid));
        Ok(Process {
            command: command.to_string(),
            pgid,
            buffer,
            exit: rx,
        })
    }

    pub fn exit_code(&self) -> Option<i32> {
        *self.exit.borrow()
    }

    pub fn running(&self) -> bool {
        self.exit_code().is_none()
    }

    /// Waits until the shell exits (and its output is collected).
    pub async fn wait(&self) -> i32 {
        let mut rx = self.exit.clone();
        loop {
            if let Some(code) = *rx.borrow_and_update() {
                return code;
            }
            if rx.changed().await.is_err() {
                return self.exit_code().unwrap_or(-1);
            }
        }
    }

    /// Everything written so far, with a note of what did not fit in memory.
    pub fn output(&self) -> String {
        let b = lock(&self.buffer);
        let mut text = String::from_utf8_lossy(&b.bytes).into_owned();
        if b.dropped > 0 {
            text.push_str(&format!(
                "\n[{} more bytes of output were not kept]",
                b.dropped
            ));
        }
        text
    }

    /// The whole lines written after byte `from`, and the offset after
    /// them; a partial line waits for its end unless it is already long.
    pub fn lines_since(&self, from: usize) -> (String, usize) {
        const LONG_LINE: usize = 4096;
        let b = lock(&self.buffer);
        let start = from.min(b.bytes.len());
        let fresh = &b.bytes[start..];
        let end = match fresh.iter().rposition(|&c| c == b'\n') {
            Some(i) => i + 1,
            None if fresh.len() >= LONG_LINE => fresh.len(),
            None => 0,
        };
        let text = String::from_utf8_lossy(&fresh[..end]).into_owned();
        (text, start + end)
    }

    /// Output since the previous call.
    pub fn new_output(&self) -> String {
        let mut b = lock(&self.buffer);
        let start = b.read.min(b.bytes.len());
        let text = String::from_utf8_lossy(&b.bytes[start..]).into_owned();
        b.read = b.bytes.len();
        text
    }

    /// Marks all output so far as read.
    pub fn mark_read(&self) {
        let mut b = lock(&self.buffer);
        b.read = b.bytes.len();
    }

    /// SIGTERM to the group, then SIGKILL if it is still there after a grace
    /// period. Returns once the shell has exited.
    pub async fn kill(&self) {
        if !self.running() {
            // `supervise` already stopped what the shell left behind.
            return;
        }
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGTERM);
        if tokio::time::timeout(KILL_GRACE, self.wait()).await.is_err() {
            let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
            self.wait().await;
        }
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.running() {
            let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
        }
    }
}

fn start(
    shell: &str,
    script: &str,
    cwd: &Path,
    out: &io::PipeWriter,
    policy: Option<&Policy>,
) -> io::Result<tokio::process::Child> {
    let mut cmd = crate::sandbox::command(shell, policy).map_err(io::Error::other)?;
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone()?))
        .stderr(Stdio::from(out.try_clone()?))
        .process_group(0)
        .kill_on_drop(false);
    super::env::scrub(&mut cmd);
    for (k, v) in SHELL_ENV {
        cmd.env(k, v);
    }
    cmd.spawn()
}

fn append(buffer: &Mutex<Buffer>, chunk: &[u8]) {
    let mut b = lock(buffer);
    let room = MAX_BUFFER.saturating_sub(b.bytes.len());
    let take = room.min(chunk.len());
    b.bytes.extend_from_slice(&chunk[..take]);
    b.dropped += chunk.len() - take;
}

/// Reads output until the shell exits, drains what is left briefly, then
/// stops whatever the shell left behind in its group.
async fn supervise(
    mut child: tokio::process::Child,
    mut pipe: tokio::net::unix::pipe::Receiver,
    buffer: Arc<Mutex<Buffer>>,
    exit: watch::Sender<Option<i32>>,
    pgid: i32,
) {
    let mut chunk = vec![0u8; 16 * 1024];
    let mut eof = false;
    let status = loop {
        tokio::select! {
            n = pipe.read(&mut chunk), if !eof => match n {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => append(&buffer, &chunk[..n]),
            },
            status = child.wait() => break status,
        }
    };
    let deadline = tokio::time::Instant::now() + DRAIN_AFTER_EXIT;
    while !eof {
        match tokio::time::timeout_at(deadline, pipe.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => append(&buffer, &chunk[..n]),
            _ => eof = true,
        }
    }
    // Children the shell started with `&` would otherwise outlive it unseen.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    let code = match status {
        Ok(s) => s.code().unwrap_or_else(|| {
            128 + std::os::unix::process::ExitStatusExt::signal(&s).unwrap_or(0)
        }),
        Err(_) => -1,
    };
    let _ = exit.send(Some(code));
}

/// The session's background jobs, by id. Dropping the table kills them.
#[derive(Default)]
pub struct JobTable {
    jobs: Mutex<BTreeMap<String, Arc<Process>>>,
    next: AtomicU64,
}

impl JobTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes charge of a process and returns its id (`job-1`, `job-2`, ...).
    pub fn add(&self, process: Arc<Process>) -> String {
        let id = format!("job-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        lock(&self.jobs).insert(id.clone(), process);
        id
    }

    pub fn get(&self, id: &str) -> Option<Arc<Process>> {
        lock(&self.jobs).get(id.trim()).cloned()
    }

    pub fn ids(&self) -> Vec<String> {
        lock(&self.jobs).keys().cloned().collect()
    }

    pub fn remove(&self, id: &str) -> Option<Arc<Process>> {
        lock(&self.jobs).remove(id.trim())
    }

    /// Kills every job still running.
    pub fn kill_all(&self) {
        for p in lock(&self.jobs).values() {
            if p.running() {
                let _ = killpg(Pid::from_raw(p.pgid), Signal::SIGKILL);
            }
        }
    }
}

impl Drop for JobTable {
    fn drop(&mut self) {
        self.kill_all();
    }
}
