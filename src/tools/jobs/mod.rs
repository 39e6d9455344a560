//! Shell processes: each runs in its own process group with stdout and
//! stderr merged into one pipe, so output keeps its arrival order and the
//! whole tree can be stopped at once. A process the model left running is a
//! background job in the session's [`JobTable`].

use std::collections::BTreeMap;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::sandbox::{self, Policy};
use crate::sync::lock;

/// Output kept per process; beyond it only a count of what was dropped.
const MAX_BUFFER: usize = 8 * 1024 * 1024;
/// Between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long output still in the pipe is read after the shell exits.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);
/// How much earlier output a follower starts with (see [`Process::follow`]).
const FOLLOW_CATCH_UP: usize = 64 * 1024;
/// A partial line this long is passed on without waiting for its end.
const LONG_LINE: usize = 4096;

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

/// How a shell ended and how long it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Exit {
    code: i32,
    ran: Duration,
}

/// How a followed background job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    /// It ended by itself with this exit code.
    Exited { code: i32, ran: Duration },
    /// `job_kill`, a new session or quitting stopped it.
    Killed { ran: Duration },
}

/// A running (or finished) shell process. Dropping the last handle of a
/// process that is still running kills its group, so nothing is orphaned.
pub struct Process {
    pub command: String,
    pgid: i32,
    buffer: Arc<Mutex<Buffer>>,
    /// Set once the shell exited; code -1 when it could not be waited for.
    exit: watch::Receiver<Option<Exit>>,
    /// Changes whenever output arrives.
    grown: watch::Receiver<()>,
    /// Whether cairn stopped it (rather than it ending by itself).
    killed: AtomicBool,
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
        // Before the sandbox's binds are chosen: what the census learns
        // later is not bound for this command.
        let begun = Instant::now();
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
        lock_running().insert(pgid, begun);
        let buffer = Arc::new(Mutex::new(Buffer::default()));
        let (tx, rx) = watch::channel(None);
        let (grown_tx, grown) = watch::channel(());
        let receiver = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
        let pipes = Pipes {
            pipe: receiver,
            buffer: buffer.clone(),
            grown: grown_tx,
        };
        tokio::spawn(supervise(child, pipes, tx, pgid));
        Ok(Process {
            command: command.to_string(),
            pgid,
            buffer,
            exit: rx,
            grown,
            killed: AtomicBool::new(false),
        })
    }

    pub fn exit_code(&self) -> Option<i32> {
        self.exit.borrow().map(|e| e.code)
    }

    pub fn running(&self) -> bool {
        self.exit_code().is_none()
    }

    /// Waits until the shell exits (and its output is collected).
    pub async fn wait(&self) -> i32 {
        let mut rx = self.exit.clone();
        loop {
            if let Some(exit) = *rx.borrow_and_update() {
                return exit.code;
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

    /// Everything written after byte `from`, with a note of what did not
    /// fit in memory, and the offset after it.
    fn rest_since(&self, from: usize) -> (String, usize) {
        let b = lock(&self.buffer);
        let start = from.min(b.bytes.len());
        let mut text = String::from_utf8_lossy(&b.bytes[start..]).into_owned();
        if b.dropped > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[{} more bytes of output were not kept]\n",
                b.dropped
            ));
        }
        (text, b.bytes.len())
    }

    /// Where a follower starts: at most the last `FOLLOW_CATCH_UP` bytes
    /// of what was written so far, from a line's start.
    fn catch_up_start(&self) -> usize {
        let b = lock(&self.buffer);
        let Some(from) = b.bytes.len().checked_sub(FOLLOW_CATCH_UP) else {
            return 0;
        };
        let skip = b.bytes[from..].iter().position(|&c| c == b'\n');
        skip.map_or(from, |i| from + i + 1)
    }

    /// Follows the output as it arrives until the shell exits: `send` gets
    /// the new whole lines at most once per `every` (first the last part
    /// of what came before), then the rest. Returns how it ended.
    pub async fn follow(&self, every: Duration, mut send: impl FnMut(String)) -> JobEnd {
        let mut sent = self.catch_up_start();
        let mut grown = self.grown.clone();
        loop {
            // The status first: output read after it is complete once it
            // says the shell exited.
            let exit = *self.exit.borrow();
            let (chunk, next) = match exit {
                Some(_) => self.rest_since(sent),
                None => self.lines_since(sent),
            };
            sent = next;
            if !chunk.is_empty() {
                send(chunk);
            }
            if let Some(Exit { code, ran }) = exit {
                return if self.killed.load(Ordering::Relaxed) {
                    JobEnd::Killed { ran }
                } else {
                    JobEnd::Exited { code, ran }
                };
            }
            tokio::select! {
                _ = grown.changed() => {}
                _ = self.wait() => {}
            }
            tokio::time::sleep(every).await;
        }
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
        self.killed.store(true, Ordering::Relaxed);
        // Held before the first signal: a sandbox namespace started
        // outside the group is found while its parent is still alive.
        let group = sandbox::Group::stop(self.pgid);
        group.signal(libc::SIGTERM);
        group.resume();
        if tokio::time::timeout(KILL_GRACE, self.wait()).await.is_err() {
            group.signal(libc::SIGKILL);
            self.wait().await;
        }
        group.signal(libc::SIGKILL);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.running() {
            sandbox::kill_group(self.pgid);
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
    // The shell itself is found on cairn's own PATH (never in a folder a
    // command can write); what it runs sees the person's whole PATH.
    let program = crate::sandbox::own_path::find(shell).unwrap_or_else(|| shell.into());
    let mut cmd = shell_command(&program, script, cwd, policy)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone()?))
        .stderr(Stdio::from(out.try_clone()?));
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(false);
    cmd.spawn()
}

/// The shell a command runs with: bash on cairn's own PATH, else sh.
pub fn shell_program() -> std::path::PathBuf {
    crate::sandbox::own_path::find("bash")
        .or_else(|| crate::sandbox::own_path::find("sh"))
        .unwrap_or_else(|| "sh".into())
}

/// The environment `cmd` gives its process: cairn's own with the
/// command's changes laid over it.
pub fn resolved_env(cmd: &std::process::Command) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut env: BTreeMap<std::ffi::OsString, std::ffi::OsString> = std::env::vars_os().collect();
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => env.insert(name.to_os_string(), v.to_os_string()),
            None => env.remove(name),
        };
    }
    env.into_iter().collect()
}

/// The one place a model's command is built: `program -c script` in `cwd`,
/// confined by `policy`, in a process group of its own, with the scrubbed
/// environment. The in-process path ([`Process::spawn`]) and the launcher
/// behind an editor's terminal (`tools::shell::launch`) both call it; only
/// the standard streams are left to the caller.
pub fn shell_command(
    program: &Path,
    script: &str,
    cwd: &Path,
    policy: Option<&Policy>,
) -> io::Result<std::process::Command> {
    use std::os::unix::process::CommandExt;
    let mut cmd =
        crate::sandbox::std_command(program.as_os_str(), policy).map_err(io::Error::other)?;
    cmd.arg("-c").arg(script).current_dir(cwd).process_group(0);
    super::env::scrub_std(&mut cmd);
    for (k, v) in SHELL_ENV {
        cmd.env(k, v);
    }
    if let Some(path) = crate::sandbox::own_path::for_commands() {
        cmd.env("PATH", path);
    }
    Ok(cmd)
}

/// Where a shell's output goes: read from its pipe into the buffer, with
/// word to whoever follows it.
struct Pipes {
    pipe: tokio::net::unix::pipe::Receiver,
    buffer: Arc<Mutex<Buffer>>,
    grown: watch::Sender<()>,
}

impl Pipes {
    fn append(&self, chunk: &[u8]) {
        let mut b = lock(&self.buffer);
        let room = MAX_BUFFER.saturating_sub(b.bytes.len());
        let take = room.min(chunk.len());
        b.bytes.extend_from_slice(&chunk[..take]);
        b.dropped += chunk.len() - take;
        drop(b);
        self.grown.send_replace(());
    }
}

/// Reads output until the shell exits, drains what is left briefly, then
/// stops whatever the shell left behind in its group.
async fn supervise(
    mut child: tokio::process::Child,
    mut p: Pipes,
    exit: watch::Sender<Option<Exit>>,
    pgid: i32,
) {
    let started = Instant::now();
    let mut chunk = vec![0u8; 16 * 1024];
    let mut eof = false;
    let status = loop {
        tokio::select! {
            n = p.pipe.read(&mut chunk), if !eof => match n {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => p.append(&chunk[..n]),
            },
            status = child.wait() => break status,
        }
    };
    let ran = started.elapsed();
    let deadline = tokio::time::Instant::now() + DRAIN_AFTER_EXIT;
    while !eof {
        match tokio::time::timeout_at(deadline, p.pipe.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => p.append(&chunk[..n]),
            _ => eof = true,
        }
    }
    // Children the shell started with `&` would otherwise outlive it unseen.
    sandbox::kill_group(pgid);
    ended(pgid);
    let code = match status {
        Ok(s) => s.code().unwrap_or_else(|| {
            128 + std::os::unix::process::ExitStatusExt::signal(&s).unwrap_or(0)
        }),
        Err(_) => -1,
    };
    let _ = exit.send(Some(Exit { code, ran }));
}

/// When each command still running began, by process group.
static RUNNING: Mutex<BTreeMap<i32, Instant>> = Mutex::new(BTreeMap::new());

/// A command running outside cairn's process tree (in an editor's
/// terminal), counted as running until dropped.
pub struct RunningElsewhere(i32);

impl RunningElsewhere {
    pub fn begin() -> RunningElsewhere {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        // Negative keys: never a real process group.
        let key = -(NEXT.fetch_add(1, Ordering::Relaxed) as i32);
        lock_running().insert(key, Instant::now());
        RunningElsewhere(key)
    }
}

impl Drop for RunningElsewhere {
    fn drop(&mut self) {
        ended(self.0);
    }
}

/// The command `key` is over: it is no longer running, but a census that
/// has not checked since it began must still count it
/// (`oldest_running_since`).
fn ended(key: i32) {
    let Some(begun) = lock_running().remove(&key) else {
        return;
    };
    let mut e = lock_ended();
    e.list.push_back((begun, Instant::now()));
    if e.list.len() > ENDED_KEPT
        && let Some((b, at)) = e.list.pop_front()
    {
        e.dropped_began = Some(e.dropped_began.map_or(b, |d| d.min(b)));
        e.dropped_ended = Some(e.dropped_ended.map_or(at, |d| d.max(at)));
    }
}

/// How many ended commands are remembered one by one; past that, the
/// oldest start and latest end of those forgotten.
const ENDED_KEPT: usize = 256;

/// Commands that ended: when each began and ended.
struct Ended {
    list: std::collections::VecDeque<(Instant, Instant)>,
    dropped_began: Option<Instant>,
    dropped_ended: Option<Instant>,
}

static ENDED: Mutex<Ended> = Mutex::new(Ended {
    list: std::collections::VecDeque::new(),
    dropped_began: None,
    dropped_ended: None,
});

fn lock_ended() -> std::sync::MutexGuard<'static, Ended> {
    ENDED.lock().unwrap_or_else(|e| e.into_inner())
}

fn lock_running() -> std::sync::MutexGuard<'static, BTreeMap<i32, Instant>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// When the oldest command began that still runs, or that ended after
/// `since` (a census's last check; `None`: it never checked): a control
/// file the census first knew after that was not bound read-only for it
/// (`sandbox::census::Census::set_oldest_running`). A command that began
/// before an approved write took a folder in and ended before the next
/// check could have changed it unbound.
pub fn oldest_running_since(since: Option<Instant>) -> Option<Instant> {
    let after = |at: Instant| since.is_none_or(|s| at >= s);
    let e = lock_ended();
    let ended = (e.list.iter())
        .filter(|(_, at)| after(*at))
        .map(|(began, _)| *began)
        .chain(e.dropped_ended.filter(|at| after(*at)).and(e.dropped_began));
    let ended: Vec<Instant> = ended.collect();
    drop(e);
    let running = lock_running().values().min().copied();
    running.into_iter().chain(ended).min()
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

    /// Whether any job still runs.
    pub fn any_running(&self) -> bool {
        lock(&self.jobs).values().any(|p| p.running())
    }

    /// Kills every job still running.
    pub fn kill_all(&self) {
        for p in lock(&self.jobs).values() {
            if p.running() {
                p.killed.store(true, Ordering::Relaxed);
                sandbox::kill_group(p.pgid);
            }
        }
    }
}

impl Drop for JobTable {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[cfg(test)]
mod tests;
