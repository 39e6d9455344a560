//! Catastrophes in their other spellings (issue 10, category 6): killing
//! every process, powering off, gaining privileges, reverse shells,
//! containers with the host's root. Each is blocked in every mode, like
//! `rm -rf /` and `sudo`.

use std::path::Path;

use super::findings::Findings;
use crate::permission::layers::layers;
use crate::permission::programs::{AWKS, DOWNLOADERS, INTERPRETERS, SHELLS, family};
use crate::permission::wrappers::basename;
use crate::shell::ShellAnalysis;

/// Programs that run commands as another user or in another root, or
/// load code into the kernel.
const ESCALATE: &[&str] = &[
    "sudoedit",
    "sg",
    "newgrp",
    "nsenter",
    "chroot",
    "runuser",
    "insmod",
    "modprobe",
    "rmmod",
    "kexec",
    "setcap",
    "machinectl",
    "ksu",
    "calife",
    "super",
    "please",
];

/// Network clients that can hand a connection to a program.
pub(super) const NET_CLIENTS: &[&str] = &[
    "nc",
    "ncat",
    "netcat",
    "nc.traditional",
    "nc.openbsd",
    "socat",
    "telnet",
    "openssl",
    "cryptcat",
    "pwncat",
];

/// Inspect one layer of a simple command.
pub(super) fn inspect(name: &str, args: &[String], findings: &mut Findings) {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    match name {
        "kill" if kill_pids(args).contains(&"-1") => {
            findings.block("blocked: `kill … -1` signals every process you own.".into());
        }
        "pkill" | "killall" => kill_all(name, args, findings),
        "killall5" => findings.block("blocked: `killall5` signals every process.".into()),
        "systemctl" | "loginctl" | "busctl" | "dbus-send" | "gdbus" if !only_looks(args) => {
            power(name, args, findings)
        }
        _ if ESCALATE.contains(&name) => findings.block(format!(
            "blocked: `{name}` runs commands with other privileges or loads code into the \
             kernel; cairn never escalates. Tell the user the command so they can run it."
        )),
        "systemd-run" => {
            let user = has("--user");
            let other_uid = args.iter().any(|a| {
                a.starts_with("--uid")
                    || a.starts_with("--gid")
                    || a.contains("User=")
                    || a.contains("Group=")
            });
            if !user || other_uid {
                findings.block(
                    "blocked: `systemd-run` outside `--user` (or with `--uid`) runs commands as \
                     the system manager; cairn never escalates."
                        .into(),
                );
            } else {
                findings.cautions.push(
                    "`systemd-run --user` starts the command outside cairn's process tree and \
                     sandbox"
                        .into(),
                );
            }
        }
        "docker" | "podman" | "nerdctl" | "finch" => inspect_container(name, args, findings),
        _ => {}
    }
    reverse_shell(name, args, findings);
}

/// `pkill -u me`, `killall -u me`, `pkill .`: every process of a user.
fn kill_all(name: &str, args: &[String], findings: &mut Findings) {
    let by_user = args.iter().any(|a| {
        a == "-u"
            || a == "-U"
            || a.starts_with("--euid")
            || a.starts_with("--uid")
            || a.starts_with("--user")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains(['u', 'U']))
    });
    let everything = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .any(|p| [".", ".*", "", "^", "^.*", ".+"].contains(&p.as_str()));
    if by_user || everything {
        findings.block(format!(
            "blocked: `{name} {}` signals every process of a user, cairn's own included.",
            args.join(" ")
        ));
    }
}

/// `systemctl reboot`, `systemctl start poweroff.target`, `loginctl
/// poweroff`, a D-Bus call to logind's `PowerOff`.
fn power(name: &str, args: &[String], findings: &mut Findings) {
    let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
    const POWER: &[&str] = &[
        "poweroff",
        "reboot",
        "halt",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "suspend-then-hibernate",
        "kexec",
        "soft-reboot",
        "rescue",
        "emergency",
        "isolate",
        "kill-user",
        "terminate-user",
        "kill-session",
        "terminate-session",
    ];
    let hits = lower.iter().any(|a| {
        let unit = a.strip_suffix(".target").unwrap_or(a);
        let member = a.rsplit(['.', ' ']).next().unwrap_or(a);
        POWER.contains(&unit) || ["poweroff", "reboot", "halt"].contains(&member)
    });
    if hits {
        findings.block(format!(
            "blocked: `{name} {}` would shut down, restart or end the session.",
            args.join(" ")
        ));
    }
}

/// `systemctl status …`, `loginctl show-session …`: reads, whatever unit
/// it names.
fn only_looks(args: &[String]) -> bool {
    const LOOKING: &[&str] = &[
        "status",
        "show",
        "cat",
        "help",
        "list-units",
        "list-unit-files",
        "list-dependencies",
        "list-timers",
        "list-jobs",
        "is-active",
        "is-enabled",
        "is-failed",
        "show-session",
        "show-user",
        "list-sessions",
        "list-users",
        "session-status",
        "user-status",
    ];
    args.iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|a| LOOKING.contains(&a.as_str()))
}

/// The process ids `kill` signals: its operands after the signal.
fn kill_pids(args: &[String]) -> Vec<&str> {
    let mut i = 0;
    let mut pids = Vec::new();
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if options_done || !arg.starts_with('-') || arg == "-" {
            pids.push(arg.as_str());
            options_done = true;
            continue;
        }
        match arg.as_str() {
            "--" => options_done = true,
            "-s" | "-n" | "--signal" => i += 1,
            "-l" | "-L" | "--list" | "--table" => return Vec::new(),
            // `-9`, `-KILL`, `-1` as the first argument: a signal.
            _ if i == 1 || arg.starts_with("--") => {}
            _ => {
                pids.push(arg.as_str());
                options_done = true;
            }
        }
    }
    pids
}

fn inspect_container(name: &str, args: &[String], findings: &mut Findings) {
    let runs = args
        .iter()
        .any(|a| ["run", "create", "exec", "container"].contains(&a.as_str()));
    if !runs {
        return;
    }
    let mut why = None;
    for (i, arg) in args.iter().enumerate() {
        let value = |flag: &str| -> Option<&str> {
            if arg == flag {
                args.get(i + 1).map(String::as_str)
            } else {
                arg.strip_prefix(&format!("{flag}="))
            }
        };
        if arg == "--privileged" || arg.starts_with("--privileged=true") {
            why = Some("`--privileged` gives it the host's root");
        }
        for flag in ["-v", "--volume", "--mount"] {
            if let Some(v) = value(flag) {
                let source = v
                    .split(',')
                    .find_map(|p| p.strip_prefix("source=").or(p.strip_prefix("src=")))
                    .unwrap_or_else(|| v.split(':').next().unwrap_or(v));
                let host_root = source == "/"
                    || crate::permission::paths::SYSTEM_DIRS
                        .contains(&source.trim_end_matches('/'))
                    || crate::permission::paths::CRITICAL_DIRS
                        .contains(&source.trim_end_matches('/'))
                    || source.ends_with("docker.sock");
                if host_root {
                    why =
                        Some("it mounts the host's root, a system directory or the daemon socket");
                }
            }
        }
        for flag in ["--pid", "--ipc", "--userns", "--uts", "--cgroupns"] {
            if value(flag) == Some("host") {
                why = Some("it shares the host's namespaces");
            }
        }
        if let Some(cap) = value("--cap-add")
            && ["ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE"]
                .contains(&cap.to_uppercase().as_str())
        {
            why = Some("it adds capabilities that reach the host");
        }
        if value("--security-opt").is_some_and(|v| v.contains("unconfined"))
            || value("--device").is_some()
        {
            why = Some("it lifts the container's confinement");
        }
    }
    if let Some(why) = why {
        findings.block(format!(
            "blocked: `{name} {}` — {why}; that is root on this machine.",
            args.join(" ")
        ));
    }
}

/// A shell handed to a network connection (`nc -e sh`, `socat
/// exec:bash tcp:…`, an interpreter's socket plus a process).
fn reverse_shell(name: &str, args: &[String], findings: &mut Findings) {
    let message = || {
        format!(
            "blocked: `{name}` connects a shell to the network (a reverse or bind shell), which \
             hands this machine to whoever is at the other end."
        )
    };
    let fam = family(name);
    if NET_CLIENTS.contains(&fam) {
        let execs = args.iter().any(|a| {
            ["-e", "-c", "--exec", "--sh-exec", "--lua-exec"].contains(&a.as_str())
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a.len() > 2
                    && a.ends_with(['e', 'c']))
        });
        let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
        let socat_exec = fam == "socat"
            && lower
                .iter()
                .any(|a| a.starts_with("exec:") || a.starts_with("system:"));
        if (execs && fam != "openssl") || socat_exec {
            findings.block(message());
        }
    }
    let code_runner = INTERPRETERS.contains(&fam)
        || name.starts_with("python")
        || SHELLS.contains(&fam)
        || AWKS.contains(&fam);
    if code_runner {
        let code = args.join(" ").to_ascii_lowercase();
        let socket =
            code.contains("socket") || code.contains("/inet/") || code.contains("fsockopen");
        let process = [
            "subprocess",
            "pty.spawn",
            "exec",
            "dup2",
            "/bin/sh",
            "/bin/bash",
            "popen",
            "system",
            "spawn",
            "|&",
        ]
        .iter()
        .any(|p| code.contains(p));
        if socket && (process || code.contains("/inet/")) {
            findings.block(message());
        }
    }
}

/// Catastrophes spread over a whole command line: a shell wired to a
/// network connection through a pipe or `/dev/tcp`, a download run in a
/// later step, a process flood.
pub(super) fn inspect_analysis(analysis: &ShellAnalysis, cwd: &Path, findings: &mut Findings) {
    let name_of = |i: usize| {
        analysis.commands[i]
            .name()
            .map(|n| family(basename(n)).to_string())
            .unwrap_or_default()
    };
    let runs_code = |i: usize| {
        let n = name_of(i);
        SHELLS.contains(&n.as_str())
            || INTERPRETERS.contains(&n.as_str())
            || n.starts_with("python")
    };
    // bash's network redirections (`/dev/tcp/host/port`) on a shell or `exec`.
    for r in &analysis.redirects {
        let net = r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/");
        if net {
            let on_shell = r
                .command
                .is_none_or(|i| runs_code(i) || name_of(i) == "exec");
            if on_shell {
                findings.block(
                    "blocked: this wires a shell to a network connection (`/dev/tcp`), a \
                     reverse shell."
                        .into(),
                );
            } else {
                findings
                    .cautions
                    .push(format!("opens a network connection through `{}`", r.target));
            }
        }
    }
    // A network client and a shell in one pipeline.
    let piped: Vec<(usize, usize)> = analysis
        .commands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.pipe.map(|(p, _)| (p, i)))
        .collect();
    for (pipe, i) in &piped {
        let net = layers(&analysis.commands[*i].words).iter().any(|l| {
            l.first()
                .is_some_and(|n| NET_CLIENTS.contains(&family(basename(n))))
        });
        if net
            && piped
                .iter()
                .any(|(q, j)| q == pipe && j != i && runs_code(*j))
        {
            findings.block(
                "blocked: this pipes a network connection and a shell into each other: \
                 remote code would run here, or this machine would be handed to the other end."
                    .into(),
            );
        }
    }
    download_then_run(analysis, cwd, findings);
    for flood in &analysis.background_in_loops {
        findings.block(format!(
            "blocked: {flood} starts background jobs in a loop with no small bound, a process \
             flood that would exhaust the machine."
        ));
    }
}

/// The files a command downloads to, and whether one is saved under a
/// name cairn cannot tell.
fn download_targets(analysis: &ShellAnalysis) -> (Vec<String>, bool) {
    let mut targets: Vec<String> = Vec::new();
    let mut anonymous = false;
    for (i, cmd) in analysis.commands.iter().enumerate() {
        for layer in layers(&cmd.words) {
            let Some((name, args)) = layer.split_first() else {
                continue;
            };
            if !DOWNLOADERS.contains(&basename(name)) {
                continue;
            }
            let mut named = false;
            for (j, arg) in args.iter().enumerate() {
                let value = match arg.as_str() {
                    "-o" | "--output" | "-O" | "--output-document"
                        if basename(name) != "curl" || arg != "-O" =>
                    {
                        args.get(j + 1).cloned()
                    }
                    a => a
                        .strip_prefix("--output=")
                        .or(a.strip_prefix("--output-document="))
                        .map(str::to_string),
                };
                if let Some(v) = value {
                    targets.push(v);
                    named = true;
                }
            }
            if !named {
                // `curl -O URL`, `wget URL`: saved under the URL's last part.
                let saves = basename(name) == "wget"
                    || args.iter().any(|a| {
                        a == "-O"
                            || a == "--remote-name"
                            || a.starts_with("-") && !a.starts_with("--") && a.contains('O')
                    });
                if saves {
                    match args
                        .iter()
                        .rev()
                        .find(|a| a.contains("://") || a.contains('.'))
                    {
                        Some(url) => targets.push(
                            basename(url.split(['?', '#']).next().unwrap_or(url)).to_string(),
                        ),
                        None => anonymous = true,
                    }
                }
            }
            for r in analysis.file_writes().filter(|r| r.command == Some(i)) {
                targets.push(r.target.clone());
            }
        }
    }
    (targets, anonymous)
}

/// `curl -o f URL && chmod +x f && ./f`, `wget URL; sh file`: a file the
/// command downloads, run by a later part of it.
fn download_then_run(analysis: &ShellAnalysis, cwd: &Path, findings: &mut Findings) {
    let (targets, anonymous) = download_targets(analysis);
    if targets.is_empty() && !anonymous {
        return;
    }
    let same = |word: &str| {
        let clean = |w: &str| {
            let p = cwd.join(w);
            crate::permission::paths::normalize(&p)
        };
        targets.iter().any(|t| clean(t) == clean(word))
    };
    for cmd in &analysis.commands {
        for layer in layers(&cmd.words) {
            let Some((name, args)) = layer.split_first() else {
                continue;
            };
            let base = family(basename(name));
            let runs_file = if name.contains('/') {
                same(name) || anonymous
            } else if SHELLS.contains(&base)
                || INTERPRETERS.contains(&base)
                || base.starts_with("python")
            {
                args.iter()
                    .find(|a| !a.starts_with('-'))
                    .is_some_and(|f| same(f))
            } else {
                false
            };
            if runs_file {
                findings.block(format!(
                    "blocked: this downloads a file and runs it (`{}`) without anyone reading it \
                     first. Download it, show it to the user, and let them decide.",
                    layer.join(" ")
                ));
            }
        }
    }
}
