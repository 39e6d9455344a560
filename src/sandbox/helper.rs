//! How cairn starts a process of its own — its git calls, stdio MCP
//! servers, language servers, formatters, a project's hooks — under the same rules as
//! the model's commands: the one function [`helper_command`].
//!
//! A helper runs in the sandbox's current layer with a read-only policy
//! (nothing written but the session's temporary directory and private
//! caches), the network off unless the helper needs it, in a neutral
//! working directory (the session's temporary directory), with the
//! socket-locating and secret-looking variables withheld. So a program a
//! repository names (`core.sshCommand`, a `node_modules` copy of a server,
//! a `mcp_server_fetch.py` beside the workspace) can neither write outside
//! nor read the person's secrets nor reach their sockets.
//!
//! The caller sets the arguments, and the variables the helper is meant to
//! have (an MCP server's own `env`), after this; it may point the working
//! directory elsewhere when it must, knowing why.

use std::path::{Path, PathBuf};

use super::{Grant, Sandbox, SandboxError};
use crate::config::SandboxMode;

/// What is being started, and what it needs beyond reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Helper {
    /// cairn's own git calls: read-only, no network.
    Git,
    /// A stdio MCP server: read-only; the network when `network`.
    Mcp { network: bool },
    /// A language server: read-only, no network.
    Lsp,
    /// A formatter (`rustfmt`, `prettier`, …) run on an edited file's
    /// text: read-only, no network. It reads the text on stdin and
    /// answers on stdout; cairn writes the file itself.
    Format,
    /// A project's hook: what the model's commands may do (the workspace
    /// writable unless the sandbox is read-only: a formatter hook writes),
    /// no network.
    Hook,
    /// The person's own hook: what the model's commands may do, the
    /// network as `[sandbox] network` says, and the files its command
    /// names outside the workspace readable.
    UserHook,
}

impl Helper {
    fn writes_workspace(self) -> bool {
        matches!(self, Helper::Hook | Helper::UserHook)
    }

    /// The network it gets; `policy` is what commands get.
    fn network(self, policy: bool) -> bool {
        match self {
            Helper::Mcp { network } => network,
            Helper::UserHook => policy,
            _ => false,
        }
    }
}

/// A command that runs `program` for cairn under `sandbox`'s rules with
/// `workspace` readable. With the sandbox off the program still gets the
/// neutral directory and the withheld environment.
pub fn helper_command(
    sandbox: &Sandbox,
    helper: Helper,
    program: &str,
    workspace: &Path,
) -> Result<tokio::process::Command, SandboxError> {
    helper_std_command(sandbox, helper, program, workspace).map(tokio::process::Command::from)
}

/// [`helper_command`] for a project's hook, which may also read the files
/// `readable` (existing ones: its session's transcript, which lies under
/// the hidden home).
pub fn hook_command(
    sandbox: &Sandbox,
    program: &str,
    workspace: &Path,
    readable: &[PathBuf],
) -> Result<tokio::process::Command, SandboxError> {
    build(sandbox, Helper::Hook, program, workspace, readable).map(tokio::process::Command::from)
}

/// [`hook_command`] for one of the person's own hooks (see
/// [`Helper::UserHook`]).
pub fn user_hook_command(
    sandbox: &Sandbox,
    program: &str,
    workspace: &Path,
    readable: &[PathBuf],
) -> Result<tokio::process::Command, SandboxError> {
    build(sandbox, Helper::UserHook, program, workspace, readable)
        .map(tokio::process::Command::from)
}

/// [`helper_command`] for a caller that waits synchronously (the system
/// prompt's git calls).
pub fn helper_std_command(
    sandbox: &Sandbox,
    helper: Helper,
    program: &str,
    workspace: &Path,
) -> Result<std::process::Command, SandboxError> {
    build(sandbox, helper, program, workspace, &[])
}

fn build(
    sandbox: &Sandbox,
    helper: Helper,
    program: &str,
    workspace: &Path,
    readable: &[PathBuf],
) -> Result<std::process::Command, SandboxError> {
    let policy = sandbox.policy(workspace).map(|p| {
        let mut p = p.reading(readable);
        if !helper.writes_workspace() {
            p.mode = SandboxMode::ReadOnly;
            p.writable.retain(|w| *w != p.workspace);
        }
        let network = helper.network(p.network);
        p.network = false;
        p.with_grant(&Grant {
            network,
            write: Vec::new(),
        })
    });
    let mut cmd = super::std_command(program.as_ref(), policy.as_ref())?;
    if policy.is_none() {
        for name in super::env::withheld(&[]) {
            cmd.env_remove(name);
        }
    }
    for (name, _) in std::env::vars_os() {
        if crate::config::secrets::looks_secret(&name.to_string_lossy()) {
            cmd.env_remove(name);
        }
    }
    let neutral = match policy.as_ref().map(|p| (p.layer, p.caches.as_ref())) {
        Some((super::Layer::Namespace, Some(_))) => std::path::PathBuf::from("/tmp"),
        Some((_, Some(caches))) => caches.tmp.clone(),
        _ => std::env::temp_dir(),
    };
    cmd.current_dir(neutral);
    Ok(cmd)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::sandbox::tests::{enforced, fixture, sandbox_for};

    #[tokio::test]
    async fn a_helper_runs_read_only_away_from_the_workspace() {
        if !enforced() {
            return;
        }
        let f = fixture();
        let sandbox = sandbox_for(&f, Default::default());
        let mut cmd = helper_command(&sandbox, Helper::Git, "sh", &f.ws).unwrap();
        let script = format!(
            "pwd; cat {0}/main.txt; echo x > {0}/written; cat ~/.ssh/id_rsa",
            f.ws.display()
        );
        let out = cmd
            .arg("-c")
            .arg(script)
            .env("HOME", &f.home)
            .output()
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let first = text.lines().next().unwrap_or("");
        assert!(!Path::new(first).starts_with(&f.ws), "{text}");
        assert!(text.contains("workspace file"), "{text}");
        assert!(!f.ws.join("written").exists());
        assert!(!text.contains("PRIVATE KEY"), "{text}");
        // Set on the command by the caller after this, a variable stays.
        let mut cmd = helper_command(&sandbox, Helper::Lsp, "sh", &f.ws).unwrap();
        let out = cmd
            .arg("-c")
            .arg("echo $ON_PURPOSE")
            .env("ON_PURPOSE", "given")
            .output()
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "given");
    }
}

/// Runs a helper to its end and returns its output, or `None` when it
/// takes longer than `limit` (it is killed): a repository can make git
/// wait on a FIFO or a terminal its configuration names, and cairn must
/// not wait with it. Output is read while the helper runs.
pub fn output_within(
    cmd: &mut std::process::Command,
    limit: std::time::Duration,
) -> Option<std::process::Output> {
    use std::io::Read;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        pipe.map(|mut p| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = p.read_to_end(&mut buf);
                buf
            })
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                // The helper leads its own group when it is sandboxed.
                super::kill_group(child.id() as i32);
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let collect = |t: Option<std::thread::JoinHandle<Vec<u8>>>| {
        t.and_then(|t| t.join().ok()).unwrap_or_default()
    };
    Some(std::process::Output {
        status,
        stdout: collect(out),
        stderr: collect(err),
    })
}
