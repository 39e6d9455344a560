//! `cairn sandbox -- CMD [ARGS…]` runs one command under the configured
//! policy and exits with its status; `cairn sandbox --status` says what
//! this machine enforces.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;

use crate::sandbox::{Sandbox, Support, status};

/// Returns the process exit code.
pub fn run(show_status: bool, command: &[OsString], no_sandbox: bool) -> u8 {
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: cannot read the current directory: {e}");
            return 1;
        }
    };
    let root = crate::agent::instructions::project_root(&cwd);
    let config = match crate::config::load(&root) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: {e}");
            return 2;
        }
    };
    let sandbox = Sandbox::from_config(&config.file.sandbox, no_sandbox);
    let policy = sandbox.policy(&root);
    if show_status {
        print!(
            "workspace: {}\n{}",
            root.display(),
            status::report(&sandbox, policy.as_ref(), Support::detect())
        );
        return 0;
    }
    let Some((program, args)) = command.split_first() else {
        eprintln!(
            "cairn: give the command after `--`, e.g. `cairn sandbox -- ls ~/.ssh`, or use --status"
        );
        return 2;
    };
    if policy.is_some() && !Support::detect().enforces_files() {
        eprintln!("cairn: the sandbox is not enforced on this system; the command runs unconfined");
    }
    // Under bubblewrap a missing program is bubblewrap's error, not ours.
    if !crate::sandbox::resolves(program) {
        eprintln!("cairn: command not found: {}", program.to_string_lossy());
        return 127;
    }
    let mut cmd = match crate::sandbox::std_command(program, policy.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: {e}");
            return 1;
        }
    };
    crate::tools::env::scrub_std(&mut cmd);
    let confined = policy.is_some();
    // Held by the sandbox, the command sees the person's whole PATH (their
    // venv); cairn's own stays cut (sandbox::own_path).
    if confined && let Some(path) = crate::sandbox::own_path::for_commands() {
        cmd.env("PATH", path);
    }
    if confined {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    let run = cmd
        .args(args)
        .current_dir(&cwd)
        .spawn()
        .and_then(|mut child| {
            let status = child.wait();
            if confined {
                // What the command left running dies with it, as with `bash`.
                crate::sandbox::kill_group(child.id() as i32);
            }
            status
        });
    match run {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => code.clamp(0, 255) as u8,
            (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
            (None, None) => 1,
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("cairn: command not found: {}", program.to_string_lossy());
            127
        }
        Err(e) => {
            eprintln!("cairn: cannot start {}: {e}", program.to_string_lossy());
            126
        }
    }
}
