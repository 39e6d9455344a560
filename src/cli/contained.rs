//! `cairn __contained SPEC`: the launcher an editor's terminal runs for a
//! `bash` call (`tools::shell::launch` says why and how). It rebuilds the
//! call's command with the in-process builder, replaces the editor's
//! environment by the spec's, runs it with the terminal as its output and
//! no input, and exits with its status. Ended by a signal, it kills the
//! command's process group first; killed outright, its children die with
//! it (bubblewrap's `--die-with-parent`, the shell's parent-death signal).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;

use tokio::signal::unix::{SignalKind, signal};

use crate::tools::jobs::shell_command;
use crate::tools::shell::launch;

/// Exit code when nothing was run (the spec or the sandbox failed).
const NOT_RUN: u8 = 125;

pub async fn run(spec_path: &Path) -> u8 {
    let Some(dir) = launch::spec_dir() else {
        eprintln!("cairn: no cache folder, so no launch spec");
        return NOT_RUN;
    };
    let spec = match launch::read_in(&dir, spec_path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cairn: {e}");
            return NOT_RUN;
        }
    };
    let built = shell_command(&spec.program, &spec.script, &spec.cwd, spec.policy.as_ref());
    let mut cmd = match built {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: cannot build the sandbox: {e}");
            return NOT_RUN;
        }
    };
    // The editor's environment is not the command's: cairn's, scrubbed.
    cmd.env_clear().envs(spec.env).stdin(Stdio::null());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: cannot start {}: {e}", spec.program.display());
            return NOT_RUN;
        }
    };
    // Closes what the sandbox held open for the start.
    drop(cmd);
    let group = child.id() as i32;
    if let Err(e) = launch::mark_started(spec_path, group) {
        eprintln!("cairn: cannot record the start: {e}");
        crate::sandbox::kill_group(group);
        let _ = child.wait();
        return NOT_RUN;
    }
    let waited = tokio::task::spawn_blocking(move || child.wait());
    let ended = tokio::select! {
        status = waited => Some(status),
        n = stopped() => {
            crate::sandbox::kill_group(group);
            return (128 + n).clamp(0, 255) as u8;
        }
    };
    // What the command left running dies with it, as with `bash`.
    crate::sandbox::kill_group(group);
    match ended {
        Some(Ok(Ok(status))) => match (status.code(), status.signal()) {
            (Some(code), _) => code.clamp(0, 255) as u8,
            (None, Some(n)) => (128 + n).clamp(0, 255) as u8,
            (None, None) => 1,
        },
        _ => 1,
    }
}

/// Waits for a signal asking the launcher to end: its number.
async fn stopped() -> i32 {
    let kinds = [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ];
    let mut streams: Vec<_> = kinds.iter().filter_map(|k| signal(*k).ok()).collect();
    if streams.len() != kinds.len() {
        return std::future::pending().await;
    }
    let (a, rest) = streams.split_at_mut(1);
    let (b, c) = rest.split_at_mut(1);
    tokio::select! {
        _ = a[0].recv() => libc::SIGTERM,
        _ = b[0].recv() => libc::SIGINT,
        _ = c[0].recv() => libc::SIGHUP,
    }
}
