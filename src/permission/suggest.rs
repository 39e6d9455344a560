//! The narrow rules "Allow always" may store for a call. Never a rule that
//! allows all of bash or all edits: a command prefix, a file, a directory.

use std::path::Path;

use super::CallInfo;
use super::paths;
use super::programs::{self, AWKS, INTERPRETERS, SHELLS};
use super::readonly;
use super::rules::{Rule, fetch_host};
use super::wrappers::basename;
use crate::shell::{ShellAnalysis, SimpleCommand};

/// Tools whose second word names what they do (`cargo test`, `git log`).
const WITH_SUBCOMMANDS: &[&str] = &[
    "cargo",
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "uv",
    "pip",
    "pip3",
    "rustup",
    "deno",
    "dotnet",
    "mvn",
    "gradle",
    "make",
    "just",
    "poetry",
    "gh",
    "brew",
    "apt",
    "systemctl",
    "terraform",
    "helm",
    "composer",
    "mix",
    "stack",
    "cabal",
    "zig",
];

/// Tools whose third word matters too (`npm run build`).
const RUNNERS: &[(&str, &str)] = &[
    ("npm", "run"),
    ("pnpm", "run"),
    ("yarn", "run"),
    ("bun", "run"),
    ("uv", "run"),
    ("poetry", "run"),
];

/// Commands for which `name*` would be a blank cheque: offer only the exact
/// command. Besides these: shells and interpreters in any version and
/// under any path (`python3.12`, `ksh`, `/usr/bin/mawk`).
const EXACT_ONLY: &[&str] = &[
    "rm",
    "mv",
    "cp",
    "dd",
    "chmod",
    "chown",
    "chgrp",
    "ln",
    "sh",
    "bash",
    "zsh",
    "dash",
    "fish",
    "python",
    "python3",
    "python2",
    "node",
    "perl",
    "ruby",
    "php",
    "lua",
    "deno",
    "bun",
    "eval",
    "exec",
    "env",
    "xargs",
    "find",
    "sed",
    "awk",
    "gawk",
    "perl",
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "kill",
    "pkill",
    "killall",
    "truncate",
    "tee",
    "install",
    "npx",
    "bunx",
    "source",
    ".",
    "command",
    "builtin",
    "nohup",
    "timeout",
    "time",
    "nice",
    "watch",
    "sudo",
    "git",
    "stdbuf",
    "ionice",
    "chrt",
    "taskset",
    "setsid",
    "unshare",
    "nsenter",
    "chroot",
    "flock",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "run0",
    "parallel",
    "busybox",
    "toybox",
    "script",
    "expect",
    "socat",
    "nc",
    "ncat",
    "tmux",
    "screen",
    "[[",
    "exec",
    "trap",
    "alias",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "mapfile",
    "readarray",
    "printf",
    "read",
    "test",
    "[",
    "sort",
    "uniq",
    "tree",
    "file",
    "date",
    "rg",
    "ag",
    "hostname",
];

/// Whether `name*` would let the rule run any program or any code.
fn exact_only(name: &str) -> bool {
    let base = basename(name);
    let family = programs::family(base);
    EXACT_ONLY.contains(&base)
        || EXACT_ONLY.contains(&family)
        || SHELLS.contains(&family)
        || INTERPRETERS.contains(&family)
        || AWKS.contains(&family)
        || base.starts_with("python")
        || base.starts_with("pypy")
}

/// Longest command (in characters) offered as an exact rule.
const MAX_EXACT: usize = 120;

/// Rules for the commands of a call that are not read-only (those run
/// without asking in smart mode), narrowest first.
pub fn suggest_rules(call: &CallInfo, analysis: Option<&ShellAnalysis>) -> Vec<String> {
    suggest_rules_covering(call, analysis, false)
}

/// Like `suggest_rules`; with `cover_read_only` read-only commands get
/// rules too (always-ask mode asks for them).
pub fn suggest_rules_covering(
    call: &CallInfo,
    analysis: Option<&ShellAnalysis>,
    cover_read_only: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    match call.tool {
        "bash" => {
            if let Some(analysis) = analysis
                && let Some(rules) = bash_rules(analysis, call, cover_read_only)
            {
                out = rules;
            }
        }
        "edit" | "multiedit" | "write" => {
            let family = if call.tool == "write" {
                "write"
            } else {
                "edit"
            };
            out = path_rules(family, &call.paths, call.workspace);
        }
        "fetch" => {
            if let Some(host) = fetch_host(call.input) {
                out.push(format!("fetch({host})"));
            }
        }
        "web_search" => out.push("web_search".to_string()),
        tool if tool.starts_with("mcp__") => out.push(tool.to_string()),
        _ => {}
    }
    out.retain(|r| Rule::parse(r).is_ok());
    let mut seen = Vec::new();
    out.retain(|r| {
        let fresh = !seen.contains(r);
        seen.push(r.clone());
        fresh
    });
    out
}

/// Rules that together cover the commands that are not read-only and the
/// files redirections write; None when some part cannot be covered narrowly.
fn bash_rules(
    analysis: &ShellAnalysis,
    call: &CallInfo,
    cover_read_only: bool,
) -> Option<Vec<String>> {
    if !analysis.is_complete() {
        return None;
    }
    let mut out = Vec::new();
    for cmd in &analysis.commands {
        if !cover_read_only && readonly::check(cmd).is_ok() {
            continue;
        }
        out.push(command_rule(cmd)?);
    }
    let home = paths::home_dir();
    for redirect in analysis.file_writes() {
        let path = paths::resolve_word(
            &redirect.target,
            redirect.target_literal,
            call.cwd,
            home.as_deref(),
        )?;
        let relative = path.strip_prefix(paths::normalize(call.workspace)).ok()?;
        out.push(format!(
            "write({})",
            glob_escape(&relative.to_string_lossy())
        ));
    }
    Some(out)
}

fn command_rule(cmd: &SimpleCommand) -> Option<String> {
    if cmd.words.is_empty() || !cmd.literal.first().copied().unwrap_or(false) {
        return None;
    }
    // Assignments that could change what runs stay in the rule.
    let standalone = cmd.words.is_empty();
    let mut prefix: Vec<String> = cmd
        .assignments
        .iter()
        .filter(|a| !readonly::is_safe_assignment(a, standalone))
        .cloned()
        .collect();
    if prefix
        .iter()
        .any(|a| a.contains(['$', '`', '*', '"', '\'', ' ']))
    {
        return None;
    }
    let name = cmd.words[0].as_str();
    let plain = |i: usize| {
        cmd.words.get(i).filter(|w| {
            cmd.literal[i]
                && !w.starts_with('-')
                && !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c))
        })
    };
    // A tool with subcommands offers `name sub*` only when the subcommand
    // comes first: `cargo +nightly test`, `docker -H host run` or a bare
    // `cargo` get the exact command.
    let subcommand_first = WITH_SUBCOMMANDS.contains(&name) && plain(1).is_some();
    // A command that destroys work gets no prefix rule: `git clean*`
    // would allow `git clean -fdx` anywhere, ever.
    let exact_wanted = if super::needs::is_destructive(cmd) {
        true
    } else if name == "git" {
        !subcommand_first
    } else {
        exact_only(name) || (WITH_SUBCOMMANDS.contains(&name) && !subcommand_first)
    };
    if exact_wanted {
        let text = super::rules::rule_text(cmd);
        let exact =
            cmd.literal.iter().all(|l| *l) && text.len() <= MAX_EXACT && !text.contains('*');
        return exact.then(|| format!("bash({text})"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.+/".contains(c))
    {
        return None;
    }
    prefix.push(name.to_string());
    if WITH_SUBCOMMANDS.contains(&name)
        && let Some(sub) = plain(1)
    {
        prefix.push(sub.clone());
        if RUNNERS.contains(&(name, sub.as_str()))
            && let Some(script) = plain(2)
        {
            prefix.push(script.clone());
        }
    }
    Some(format!("bash({}*)", prefix.join(" ")))
}

/// The file itself, then its directory (never the whole workspace).
fn path_rules(family: &str, files: &[std::path::PathBuf], workspace: &Path) -> Vec<String> {
    let workspace = paths::normalize(workspace);
    let relative: Option<Vec<_>> = files
        .iter()
        .map(|p| {
            paths::normalize(p)
                .strip_prefix(&workspace)
                .ok()
                .map(Path::to_path_buf)
        })
        .collect();
    let Some(relative) = relative.filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let [single] = relative.as_slice() {
        out.push(format!(
            "{family}({})",
            glob_escape(&single.to_string_lossy())
        ));
    }
    let mut dirs: Vec<_> = relative.iter().filter_map(|p| p.parent()).collect();
    dirs.dedup();
    if let [dir] = dirs.as_slice()
        && !dir.as_os_str().is_empty()
    {
        out.push(format!(
            "{family}({}/**)",
            glob_escape(&dir.to_string_lossy())
        ));
    }
    out
}

/// Escape glob metacharacters so a file name matches only itself.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "*?[]{}".contains(c) {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}
