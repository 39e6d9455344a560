//! What a shell command needs beyond the sandbox's defaults: the network,
//! or writes outside the workspace. The gate asks for those; the person's
//! approval grants exactly them for that run (`crate::sandbox::Grant`).

use std::path::{Path, PathBuf};

use super::paths;
use super::readonly;
use crate::shell::{ShellAnalysis, SimpleCommand};

/// Programs that exist to talk to other machines.
const NETWORK_PROGRAMS: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "ping",
    "dig", "nslookup", "host", "http", "https", "aria2c", "gh", "aws", "gcloud", "az", "kubectl",
    "npx", "pnpx", "bunx",
];

/// Subcommands that fetch or publish, per program.
const NETWORK_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "fetch",
            "pull",
            "push",
            "clone",
            "ls-remote",
            "submodule",
            "remote",
        ],
    ),
    (
        "npm",
        &[
            "install", "i", "ci", "add", "update", "upgrade", "publish", "view", "info",
            "outdated", "audit", "exec",
        ],
    ),
    (
        "pnpm",
        &["install", "i", "add", "update", "up", "publish", "dlx"],
    ),
    ("yarn", &["install", "add", "upgrade", "up", "dlx", "npm"]),
    ("bun", &["install", "i", "add", "update", "x"]),
    (
        "cargo",
        &[
            "add", "install", "update", "fetch", "publish", "search", "login", "owner", "yank",
        ],
    ),
    ("pip", &["install", "download"]),
    ("pip3", &["install", "download"]),
    ("pipx", &["install", "run", "upgrade"]),
    ("uv", &["add", "sync", "pip", "lock", "tool", "run"]),
    ("poetry", &["add", "install", "update", "lock"]),
    ("go", &["get", "install", "mod"]),
    ("gem", &["install", "update", "fetch"]),
    ("bundle", &["install", "update"]),
    ("composer", &["install", "require", "update"]),
    ("apt", &["install", "update", "upgrade"]),
    ("apt-get", &["install", "update", "upgrade", "download"]),
    ("brew", &["install", "update", "upgrade"]),
    ("docker", &["pull", "push", "login"]),
];

/// Global options whose value is the next word (`git -C dir fetch`).
const OPTIONS_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--prefix",
    "--cwd",
    "-Z",
];

/// Words before the real program that only change how it runs.
const WRAPPERS: &[&str] = &[
    "env", "timeout", "nice", "nohup", "time", "command", "exec", "xargs", "stdbuf", "setsid",
    "flock", "sudo",
];

fn program_needing_network(words: &[String]) -> Option<String> {
    let mut rest = words;
    while let Some(first) = rest.first() {
        let name = first.rsplit('/').next().unwrap_or(first);
        if NETWORK_PROGRAMS.contains(&name) {
            return Some(format!("`{name}` uses the network"));
        }
        if let Some((_, subs)) = NETWORK_SUBCOMMANDS.iter().find(|(p, _)| *p == name) {
            // The first word that is neither an option nor its value.
            let mut words = rest[1..].iter();
            let sub = loop {
                let w = words.next()?;
                if OPTIONS_WITH_VALUE.contains(&w.as_str()) {
                    words.next();
                } else if !w.starts_with('-') {
                    break w;
                }
            };
            return subs
                .contains(&sub.as_str())
                .then(|| format!("`{name} {sub}` uses the network"));
        }
        if matches!(name, "python" | "python3") && rest.get(1).is_some_and(|w| w == "-m") {
            return program_needing_network(&rest[2..]);
        }
        // A wrapper's own arguments: options, `VAR=x`, durations and counts.
        let wrapper_arg = first.contains('=')
            || first.starts_with('-')
            || first.starts_with(|c: char| c.is_ascii_digit());
        let past_a_wrapper = rest.len() < words.len();
        if !(WRAPPERS.contains(&name) || (wrapper_arg && past_a_wrapper)) {
            return None;
        }
        rest = &rest[1..];
    }
    None
}

/// Why the command needs the network, if cairn can tell that it does.
pub fn network(analysis: &ShellAnalysis) -> Option<String> {
    analysis
        .commands
        .iter()
        .find_map(|c| program_needing_network(&c.words))
}

/// Why the command destroys work in a way `/undo` may not restore:
/// recursive deletes, history- or worktree-rewriting git commands,
/// recursive mode and owner changes.
/// Every such command of a compound line is named, not only the first.
pub fn destructive(analysis: &ShellAnalysis) -> Option<String> {
    let mut named: Vec<String> = Vec::new();
    for why in analysis
        .commands
        .iter()
        .filter_map(|c| destructive_command(&c.words))
    {
        if !named.contains(&why) {
            named.push(why);
        }
    }
    (!named.is_empty()).then(|| named.join("; "))
}

/// Whether this one command destroys work as [`destructive`] means it:
/// "Allow always" then offers no prefix rule for it.
pub fn is_destructive(cmd: &SimpleCommand) -> bool {
    destructive_command(&cmd.words).is_some()
}

/// git's own options before its subcommand (`-C DIR`, `-c KEY=VALUE`,
/// `--git-dir=…`) skipped: what `git` is asked to do.
fn git_subcommand_args(args: &[String]) -> &[String] {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            _ if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    &args[i.min(args.len())..]
}

fn has_flag(args: &[String], short: char, long: &str) -> bool {
    args.iter()
        .any(|a| a == long || (a.starts_with('-') && !a.starts_with("--") && a.contains(short)))
}

fn destructive_command(words: &[String]) -> Option<String> {
    let name = words.first()?.rsplit('/').next()?;
    let args = &words[1..];
    let recursive = |what: &str| Some(format!("`{what}` changes a whole tree"));
    match name {
        "rm" if has_flag(args, 'r', "--recursive") || has_flag(args, 'R', "--recursive") => {
            recursive("rm -r")
        }
        "find" if args.iter().any(|a| a == "-delete") => recursive("find -delete"),
        "find"
            if args.iter().any(|a| a == "-exec" || a == "-execdir")
                && args.iter().any(|a| a == "rm") =>
        {
            recursive("find -exec rm")
        }
        "chmod" | "chown" | "chgrp" if has_flag(args, 'R', "--recursive") => {
            recursive(&format!("{name} -R"))
        }
        "git" => {
            let args = git_subcommand_args(args);
            let sub: Vec<&str> = args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .map(String::as_str)
                .collect();
            let rewrites = match sub.first().copied() {
                Some("reset") => args.iter().any(|a| a == "--hard" || a == "--merge"),
                Some("clean") => has_flag(args, 'f', "--force"),
                Some("checkout") => args.iter().any(|a| a == "--" || a == "." || a == "-f"),
                Some("restore" | "rebase" | "filter-branch" | "filter-repo" | "stash") => {
                    !matches!(sub.get(1).copied(), Some("list" | "show"))
                }
                Some("commit") => args.iter().any(|a| a == "--amend"),
                Some("branch") => {
                    has_flag(args, 'D', "--delete")
                        && args.iter().any(|a| a == "-D" || a == "--force")
                }
                Some("push") => args.iter().any(|a| a.starts_with("--force") || a == "-f"),
                _ => false,
            };
            rewrites.then(|| {
                format!(
                    "`git {}` rewrites history or the working tree",
                    sub.first().unwrap_or(&"")
                )
            })
        }
        _ => None,
    }
}

/// Paths outside the workspace the command may write: targets of `>`
/// redirects, and path arguments of commands that are not read-only.
pub fn writes_outside(
    analysis: &ShellAnalysis,
    cwd: &Path,
    workspace: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    // The temporary directory is writable in every sandbox mode.
    let temp = [std::env::temp_dir(), PathBuf::from("/tmp")];
    let mut add = |path: PathBuf| {
        if !paths::is_within(&path, workspace)
            && !temp.iter().any(|t| paths::is_within(&path, t))
            && !paths::is_harmless_device(&path)
            && !out.contains(&path)
        {
            out.push(path);
        }
    };
    for redirect in analysis.file_writes() {
        if let Some(p) = paths::resolve_word(&redirect.target, redirect.target_literal, cwd, home) {
            add(p);
        }
    }
    for cmd in analysis.commands.iter().filter(|c| writes(c)) {
        for (word, literal) in cmd.words.iter().zip(&cmd.literal).skip(1) {
            let value = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
            let path_like =
                value.starts_with('/') || value.starts_with('~') || value.contains("..");
            if path_like && let Some(p) = paths::resolve_word(value, *literal, cwd, home) {
                add(p);
            }
        }
    }
    out
}

fn writes(cmd: &SimpleCommand) -> bool {
    cmd.name().is_some() && readonly::check(cmd).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    #[test]
    fn commands_that_fetch_or_publish_need_the_network() {
        for command in [
            "curl -s https://example.com",
            "git -C x fetch origin",
            "git pull",
            "npm install",
            "cargo add serde",
            "pip install requests",
            "python3 -m pip install x",
            "timeout 10 wget http://x",
            "FOO=1 env BAR=2 curl x",
            "make && git push",
        ] {
            assert!(network(&parse(command)).is_some(), "{command}");
        }
        for command in [
            "cargo build",
            "cargo test",
            "git status",
            "git commit -m x",
            "npm test",
            "echo curl",
            "ls",
        ] {
            assert_eq!(network(&parse(command)), None, "{command}");
        }
    }

    #[test]
    fn destructive_commands_are_named() {
        for command in [
            "rm -rf build",
            "rm -r src",
            "find . -name '*.o' -delete",
            "chmod -R 777 .",
            "git reset --hard HEAD~1",
            "git clean -fdx",
            "git checkout -- .",
            "git rebase -i main",
            "git commit --amend -m x",
            "git push --force origin main",
            "git -C sub clean -fdx",
            "cargo build && git clean -fdx",
            "cd sub && git clean -fdx && make",
        ] {
            assert!(destructive(&parse(command)).is_some(), "{command}");
        }
        // A compound line names each, once.
        let both = destructive(&parse("rm -rf out; git clean -fdx; rm -rf out")).unwrap();
        assert!(
            both.contains("rm -r") && both.contains("git clean"),
            "{both}"
        );
        assert_eq!(both.matches("rm -r").count(), 1, "{both}");
        for command in [
            "rm a.txt",
            "git commit -m x",
            "git stash list",
            "chmod +x run.sh",
            "cargo fmt",
        ] {
            assert_eq!(destructive(&parse(command)), None, "{command}");
        }
    }

    #[test]
    fn writes_outside_are_named_reads_are_not() {
        let ws = Path::new("/w/project");
        let home = Some(Path::new("/home/u"));
        let a = parse("cp out.txt /etc/x && echo hi > ~/log.txt && cat /usr/share/doc");
        assert_eq!(
            writes_outside(&a, ws, ws, home),
            [PathBuf::from("/home/u/log.txt"), PathBuf::from("/etc/x")]
        );
        assert!(writes_outside(&parse("cat /etc/hosts > out.txt"), ws, ws, home).is_empty());
        assert!(writes_outside(&parse("touch new.txt 2>/dev/null"), ws, ws, home).is_empty());
        assert!(writes_outside(&parse("flock /tmp/x.lock make"), ws, ws, home).is_empty());
    }
}
