//! The first inspector: commands too dangerous to offer for approval. A
//! block holds in every mode and no rule lifts it; the message tells the
//! model why, so it can choose another way. A caution is milder: the call
//! must be confirmed by the person even in auto mode.
//!
//! This file walks a parsed command (every layer of every simple command,
//! redirections, functions, and the shell code it hands on) and asks:
//! - `catastrophes` — commands that wreck the machine or pipe the network
//!   into a shell;
//! - `rm` — removals of critical or sweeping targets;
//! - `exec` — interpreters and shells fed code from files, downloads or
//!   standard input (`stdin_feed` reads what a shell is fed);
//! - `cautions` — what must be confirmed even in auto mode (`git push
//!   --force`, changes to the workspace's own settings);
//! - `targets` — the paths a command's arguments name and writes;
//! - `findings` — the answer: a block and cautions.

use std::path::Path;

use super::layers::{PRIVILEGE, layers};
use super::nested::Script;
use super::paths;
use super::wrappers::basename;
use crate::shell::{ShellAnalysis, SimpleCommand};
use rm::sweeping_target;
use targets::{is_critical, is_recursive_flag, operands, system_write, write_targets};

pub use findings::Findings;

mod catastrophes;
pub(super) mod cautions;
mod exec;
mod findings;
mod rm;
mod stdin_feed;
mod targets;

const POWER: &[&str] = &["shutdown", "reboot", "halt", "poweroff"];
const DISK_TOOLS: &[&str] = &[
    "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "gdisk", "cfdisk", "parted",
];
/// Levels of `sh -c "…"` / `eval "…"` looked into.
pub(super) const MAX_NESTING: usize = 3;

/// The files a shell command writes that its words name: redirection
/// targets, what `tee`, `cp`/`mv`, `sed -i`, `dd of=` and the like write
/// (through wrappers such as `env` or `sudo` too), resolved against `cwd`.
pub fn written_paths(
    analysis: &ShellAnalysis,
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = (analysis.file_writes())
        .filter_map(|r| paths::resolve_word(&r.target, r.target_literal, cwd, home))
        .collect();
    for cmd in &analysis.commands {
        let offset_of = |layer: &[String]| cmd.words.len() - layer.len();
        for layer in layers(&cmd.words) {
            let literal = &cmd.literal[offset_of(layer)..];
            let Some(name) = layer.first().map(|n| basename(n)) else {
                continue;
            };
            let (args, args_literal) = (&layer[1..], &literal[1..]);
            out.extend(write_targets(name, args, args_literal, cwd, home));
            if name == "dd" {
                let of = args.iter().filter_map(|a| a.strip_prefix("of="));
                out.extend(of.filter_map(|t| paths::resolve_word(t, true, cwd, home)));
            }
        }
    }
    out
}

/// Inspect a file path an edit or write tool would change.
pub fn inspect_write_path(path: &Path) -> Option<String> {
    let lexical = paths::normalize(path);
    // A symbolic link may lead into a system directory.
    let real = paths::physical_path(&lexical);
    let dir = paths::system_dir_of(&lexical)
        .or_else(|| real.as_deref().and_then(paths::system_dir_of))?;
    Some(format!(
        "blocked: `{}` is inside `{dir}`, a system directory; cairn never changes system files. \
         Work on files in the workspace instead.",
        path.display()
    ))
}

/// Inspect a shell command. `command` is the raw text, used only when the
/// parser fails.
pub fn inspect_shell(
    command: &str,
    analysis: &ShellAnalysis,
    cwd: &Path,
    home: Option<&Path>,
) -> Findings {
    let mut findings = Findings::default();
    inspect_nested(command, analysis, cwd, home, 0, &mut findings);
    findings
}

pub(super) fn inspect_nested(
    command: &str,
    analysis: &ShellAnalysis,
    cwd: &Path,
    home: Option<&Path>,
    nesting: usize,
    findings: &mut Findings,
) {
    if analysis.parse_error.is_some() {
        if let Some(name) = text_fork_bomb(command) {
            findings.block(fork_bomb_message(&name));
        }
        return;
    }
    let dirs = paths::command_dirs(analysis, cwd, home);
    catastrophes::inspect_analysis(analysis, cwd, findings);
    for (index, cmd) in analysis.commands.iter().enumerate() {
        inspect_command(analysis, index, cmd, &dirs[index], home, nesting, findings);
    }
    for redirect in analysis.file_writes() {
        let dir = redirect
            .command
            .and_then(|i| dirs.get(i))
            .map_or(cwd, |d| d.as_path());
        if let Some(path) =
            paths::resolve_word(&redirect.target, redirect.target_literal, dir, home)
            && let Some(message) =
                system_write(&path, &format!("`{}` redirects into", redirect.operator))
        {
            findings.block(message);
        }
    }
    for function in &analysis.functions {
        let (self_calls, in_background) = self_calls(analysis, function);
        if self_calls >= 2 || (self_calls == 1 && in_background) {
            findings.block(fork_bomb_message(&function.name));
        } else if self_calls == 1 {
            findings.cautions.push(format!(
                "the function `{}` calls itself, which can run away",
                function.name
            ));
        }
    }
}

/// How often a function's body calls it, directly or through code it hands
/// to `eval`/`sh -c`, and whether such a call runs in the background.
fn self_calls(analysis: &ShellAnalysis, function: &crate::shell::FunctionDef) -> (usize, bool) {
    let name = function.name.as_str();
    let mut calls = 0;
    let mut background = false;
    for &i in &function.body {
        let cmd = &analysis.commands[i];
        if cmd.name() == Some(name) {
            calls += 1;
        }
        for layer in layers(&cmd.words) {
            let offset = cmd.words.len() - layer.len();
            let Some((first, args)) = layer.split_first() else {
                continue;
            };
            let literal = &cmd.literal[(offset + 1).min(cmd.literal.len())..];
            for script in super::nested::scripts(first, args, literal) {
                let inner = crate::shell::parse(&script.text);
                let n = inner
                    .commands
                    .iter()
                    .filter(|c| c.name() == Some(name))
                    .count();
                calls += n;
                background |= n > 0 && (script.text.contains('&') || script.text.contains('|'));
            }
        }
    }
    (calls, background)
}

fn fork_bomb_message(name: &str) -> String {
    format!(
        "blocked: the function `{name}` calls itself repeatedly in the background — a fork bomb \
         that would exhaust the machine's processes."
    )
}

fn inspect_command(
    analysis: &ShellAnalysis,
    index: usize,
    cmd: &SimpleCommand,
    cwd: &Path,
    home: Option<&Path>,
    nesting: usize,
    findings: &mut Findings,
) {
    if cmd.literal.first() == Some(&false) {
        findings.cautions.push(format!(
            "the command name `{}` is only known when it runs",
            cmd.words[0]
        ));
    }
    let assigned = super::nested::assignment_scripts(&cmd.assignments);
    inspect_scripts(&assigned, cwd, home, nesting, findings);
    let offset_of = |layer: &[String]| cmd.words.len() - layer.len();
    for layer in layers(&cmd.words) {
        let literal = &cmd.literal[offset_of(layer)..];
        let Some(name) = layer.first().map(|n| basename(n)) else {
            continue;
        };
        let args = &layer[1..];
        let args_literal = &literal[1..];
        inspect_machine_wide(name, layer, findings);
        catastrophes::inspect(name, args, findings);
        match name {
            "rm" => rm::inspect_rm(args, args_literal, cwd, home, findings),
            "dd" => {
                for arg in args {
                    if let Some(target) = arg.strip_prefix("of=")
                        && let Some(message) =
                            system_write(&paths::normalize(&cwd.join(target)), "`dd` writes to")
                    {
                        findings.block(message);
                    }
                }
            }
            "chmod" | "chown" | "chgrp" => {
                inspect_permission_change(name, args, args_literal, cwd, home, findings)
            }
            "find" if find_destroys(args) => {
                for path in operands(args, args_literal, cwd, home).into_iter().take(1) {
                    if is_critical(&path, home) || paths::system_dir_of(&path).is_some() {
                        findings.block(format!(
                            "blocked: `find {} …` would delete or change every file under it.",
                            path.display()
                        ));
                    }
                }
            }
            "git" => cautions::inspect_git_push(args, findings),
            _ => {}
        }
        for target in write_targets(name, args, args_literal, cwd, home) {
            if let Some(message) = system_write(&target, &format!("`{name}` writes to")) {
                findings.block(message);
            }
        }
        let mut scripts = super::nested::scripts(name, args, args_literal);
        if name == "xargs" {
            scripts.extend(stdin_feed::xargs_scripts(analysis, index, args));
        }
        inspect_scripts(&scripts, cwd, home, nesting, findings);
        exec::inspect_interpreter(
            analysis,
            index,
            name,
            args,
            args_literal,
            cwd,
            home,
            nesting,
            findings,
        );
    }
}

/// Commands that act on the whole machine: privilege, power, disks.
fn inspect_machine_wide(name: &str, layer: &[String], findings: &mut Findings) {
    let args = &layer[1..];
    if PRIVILEGE.contains(&name) {
        findings.block(format!(
            "blocked: `{name}` runs commands with other privileges; cairn never escalates. \
             If it is really needed, tell the user the command so they can run it themselves."
        ));
    }
    if POWER.contains(&name)
        || (name == "systemctl"
            && args.iter().any(|a| {
                [
                    "poweroff",
                    "reboot",
                    "halt",
                    "suspend",
                    "hibernate",
                    "kexec",
                ]
                .contains(&a.as_str())
            }))
        || ((name == "init" || name == "telinit") && args.iter().any(|a| a == "0" || a == "6"))
    {
        findings.block(format!(
            "blocked: `{}` would shut down or restart the machine.",
            layer.join(" ")
        ));
    }
    if name.starts_with("mkfs") || DISK_TOOLS.contains(&name) {
        findings.block(format!(
            "blocked: `{name}` formats or repartitions disks and can destroy their data."
        ));
    }
}

/// `chmod`, `chown` and `chgrp`: sweeping or system-wide changes are refused.
fn inspect_permission_change(
    name: &str,
    args: &[String],
    args_literal: &[bool],
    cwd: &Path,
    home: Option<&Path>,
    findings: &mut Findings,
) {
    let recursive = args.iter().any(|a| is_recursive_flag(a, false));
    for (arg, lit) in args.iter().zip(args_literal) {
        if recursive && let Some(what) = sweeping_target(arg, *lit) {
            findings.block(format!(
                "blocked: `{name} -R {arg}` would change permissions of {what}."
            ));
        }
    }
    for path in operands(args, args_literal, cwd, home) {
        if (recursive && is_critical(&path, home)) || path == Path::new("/") {
            findings.block(format!(
                "blocked: `{name}` on `{}` would change permissions of the whole \
                 system or home directory.",
                path.display()
            ));
        } else if let Some(message) = system_write(&path, &format!("`{name}` changes")) {
            findings.block(message);
        }
    }
}

/// Look into the shell code a command hands on ([`super::nested`]): code
/// only known when it runs must be confirmed; code nested deeper than
/// [`MAX_NESTING`] is refused, never passed unread.
pub(super) fn inspect_scripts(
    scripts: &[Script],
    cwd: &Path,
    home: Option<&Path>,
    nesting: usize,
    findings: &mut Findings,
) {
    for script in scripts {
        if !script.literal {
            findings.cautions.push(format!(
                "{} runs a command that is only known when it runs",
                script.origin
            ));
            continue;
        }
        if nesting >= MAX_NESTING {
            findings.block(format!(
                "blocked: {} runs shell code nested more than {MAX_NESTING} levels deep, deeper \
                 than cairn inspects. Write the command without the nesting.",
                script.origin
            ));
            continue;
        }
        let inner = crate::shell::parse(&script.text);
        if let Some(error) = &inner.parse_error {
            findings.cautions.push(format!(
                "{} runs shell code cairn cannot read ({error})",
                script.origin
            ));
        }
        inspect_nested(&script.text, &inner, cwd, home, nesting + 1, findings);
    }
}

/// `find -delete`, or `-exec` of a command that removes or changes files.
fn find_destroys(args: &[String]) -> bool {
    const DESTRUCTIVE: &[&str] = &[
        "rm", "shred", "unlink", "chmod", "chown", "chgrp", "mv", "truncate", "dd", "sh", "bash",
    ];
    args.iter().enumerate().any(|(i, a)| {
        a == "-delete"
            || (["-exec", "-execdir", "-ok", "-okdir"].contains(&a.as_str())
                && args
                    .get(i + 1)
                    .is_some_and(|c| DESTRUCTIVE.contains(&basename(c))))
    })
}

/// Fork bombs in text the parser could not read: `NAME(){ … NAME|NAME …`.
fn text_fork_bomb(command: &str) -> Option<String> {
    let compact: String = command.chars().filter(|c| !c.is_whitespace()).collect();
    let mut search = compact.as_str();
    while let Some(at) = search.find("(){") {
        let head = &search[..at];
        let name_start = head
            .rfind([';', '&', '|', '{', '}'])
            .map(|i| i + 1)
            .unwrap_or(0);
        let name = &head[name_start..];
        let body = &search[at + 3..];
        if !name.is_empty() && body.contains(&format!("{name}|{name}")) {
            return Some(name.to_string());
        }
        search = body;
    }
    None
}

#[cfg(test)]
mod tests;
