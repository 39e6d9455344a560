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
    // The editor started this launcher with its own PATH, in cairn's
    // cache folder: bubblewrap must not be found where the command's
    // workspace (or any folder it may write) could have planted one.
    crate::sandbox::own_path::workspace_opened(&spec.cwd);
    if let Some(policy) = &spec.policy {
        crate::sandbox::own_path::writable_places(&policy.writable);
    }
    let built = shell_command(&spec.program, &spec.script, &spec.cwd, spec.policy.as_ref());
    let mut cmd = match built {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: cannot build the sandbox: {e}");
            return NOT_RUN;
        }
    };
    // The editor's environment is not the command's: cairn's, scrubbed.
    // Its output goes to a pipe, as inside cairn, never the editor's
    // terminal itself; the launcher copies it there with colour kept and
    // every other sequence removed (no clipboard or title writes).
    let Ok((reader, writer)) = std::io::pipe() else {
        eprintln!("cairn: cannot make a pipe for the output");
        return NOT_RUN;
    };
    let Ok(second) = writer.try_clone() else {
        eprintln!("cairn: cannot make a pipe for the output");
        return NOT_RUN;
    };
    cmd.env_clear()
        .envs(spec.env)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(second);
    // Recorded before the start: from here on the command may have run,
    // and cairn must not run it a second time.
    let mut mark = match launch::begin(spec_path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("cairn: cannot record the start: {e}");
            return NOT_RUN;
        }
    };
    let spawned = cmd.spawn();
    // Closes what the sandbox held open for the start, and our copies of
    // the pipe's write end.
    drop(cmd);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: cannot start {}: {e}", spec.program.display());
            return NOT_RUN;
        }
    };
    let group = child.id() as i32;
    let _ = launch::record_group(&mut mark, group);
    let relay = std::thread::spawn(move || relay(reader));
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
    let _ = relay.join();
    match ended {
        Some(Ok(Ok(status))) => match (status.code(), status.signal()) {
            (Some(code), _) => code.clamp(0, 255) as u8,
            (None, Some(n)) => (128 + n).clamp(0, 255) as u8,
            (None, None) => 1,
        },
        _ => 1,
    }
}

/// Copies the command's output to the terminal, whole lines at a time (a
/// sequence is never cut in two), colour kept and nothing else.
fn relay(mut from: std::io::PipeReader) {
    use std::io::{Read, Write};
    let mut out = std::io::stdout().lock();
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    let show = |bytes: &[u8], out: &mut std::io::StdoutLock| {
        let text = crate::ansi::keep_colours(&String::from_utf8_lossy(bytes));
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    };
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&chunk[..n]);
        let cut = match pending.iter().rposition(|b| *b == b'\n') {
            Some(at) => at + 1,
            None if pending.len() > 8192 => pending.len(),
            None => continue,
        };
        let rest = pending.split_off(cut);
        show(&pending, &mut out);
        pending = rest;
    }
    if !pending.is_empty() {
        show(&pending, &mut out);
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
