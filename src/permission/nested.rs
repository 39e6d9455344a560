//! Shell code that hides outside a command's argv: the script of `sh -c`,
//! `eval`, `env -S`, `script -c`, `watch`, `flock -c`, `su -c`, `gdb -ex
//! shell`, `trap`; other programs' command hooks (`git -c core.pager=…`,
//! `GIT_CONFIG_*`, `tar --to-command`, `rsync -e`, `ssh -o ProxyCommand`,
//! `zip -TT`); and variables bash runs or expands as code (`PROMPT_COMMAND`,
//! `PS4`, `BASH_ENV`, `ENV`). The security inspector and deny rules look
//! into each; a script only known when it runs cannot be looked into.

use super::security::{SHELLS, family};
use super::wrappers::{basename, wrapper_options};

/// A piece of shell code a command will run.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub text: String,
    /// False when the code is only known when the command runs.
    pub literal: bool,
    /// Where it comes from, for messages: "`git -c core.pager`".
    pub origin: String,
}

impl Script {
    fn new(text: &str, literal: bool, origin: impl Into<String>) -> Script {
        Script {
            text: text.to_string(),
            literal,
            origin: origin.into(),
        }
    }
}

/// git configuration keys whose value is a command git runs (git-config(1)).
pub fn git_key_runs_code(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "core.fsmonitor",
        "core.pager",
        "core.sshcommand",
        "core.editor",
        "core.askpass",
        "core.gitproxy",
        "core.hookspath",
        "diff.external",
        "sequence.editor",
        "gpg.program",
        "credential.helper",
        "uploadpack.packobjectshook",
        "interactive.difffilter",
        "sendemail.smtpserver",
        "sendemail.sendmailcmd",
        "web.browser",
        "man.viewer",
        "remote.origin.uploadpack",
        "remote.origin.receivepack",
        "init.templatedir",
    ];
    let parts: Vec<&str> = key.split('.').collect();
    let last = parts.last().copied().unwrap_or("");
    EXACT.contains(&key.as_str())
        || key.starts_with("alias.")
        || key.starts_with("pager.")
        || (parts.len() >= 3
            && matches!(
                (parts[0], last),
                ("diff", "textconv" | "command")
                    | ("filter", "clean" | "smudge" | "process")
                    | ("merge", "driver")
                    | ("gpg", "program")
                    | ("credential", "helper")
                    | ("remote", "uploadpack" | "receivepack" | "proxy")
                    | ("man", "cmd" | "path")
                    | ("browser", "cmd" | "path")
                    | ("difftool" | "mergetool", "cmd" | "path")
                    | ("sendemail", "sendmailcmd" | "tocmd" | "cccmd")
            ))
}

/// A git config value as the command it runs: an alias's `!` or a
/// credential helper's `!` introduces shell code.
fn git_value_script(key: &str, value: &str) -> String {
    let key = key.to_ascii_lowercase();
    if key.starts_with("alias.") || key.contains("credential") {
        value.strip_prefix('!').unwrap_or(value).to_string()
    } else {
        value.to_string()
    }
}

/// Environment variables whose value is a command some program runs.
const COMMAND_VARS: &[&str] = &[
    "PROMPT_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "RSYNC_RSH",
    "SUDO_ASKPASS",
];

/// Variables bash expands (and so runs any `$(…)` in) when it starts or
/// prompts: `BASH_ENV`/`ENV` name a file after expansion, `PS*` are
/// prompt-expanded.
const EXPANDED_VARS: &[&str] = &["BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS4"];

/// The code held by assignments `NAME=value` (as written): command
/// variables, expanded variables, and `GIT_CONFIG_KEY_n`/`VALUE_n` pairs
/// and `GIT_CONFIG_PARAMETERS` naming a git key that runs code.
pub fn assignment_scripts(assignments: &[String]) -> Vec<Script> {
    let mut out = Vec::new();
    let values: Vec<(&str, (String, bool))> = assignments
        .iter()
        .filter_map(|a| {
            let (name, raw) = a.split_once('=')?;
            Some((name.trim_end_matches('+'), dequote(raw)))
        })
        .collect();
    for (name, (value, literal)) in &values {
        if COMMAND_VARS.contains(name) {
            let text = value.trim_start_matches('|').replace("%s", "x");
            out.push(Script::new(&text, *literal, format!("`{name}`")));
        } else if EXPANDED_VARS.contains(name) {
            // Expanded as a word: what runs is any substitution inside.
            let text = format!(": {value}");
            out.push(Script::new(&text, *literal, format!("`{name}`")));
        } else if let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_") {
            let value_name = format!("GIT_CONFIG_VALUE_{n}");
            if git_key_runs_code(value) {
                let origin = format!("`{name}={value}`");
                match values.iter().find(|(v, _)| *v == value_name) {
                    Some((_, (code, lit))) => {
                        out.push(Script::new(&git_value_script(value, code), *lit, origin))
                    }
                    None => out.push(Script::new("", false, origin)),
                }
            }
        } else if *name == "GIT_CONFIG_PARAMETERS" {
            let cleaned = value.replace('\'', "");
            for pair in cleaned.split_whitespace() {
                if let Some((key, code)) = pair.split_once('=')
                    && git_key_runs_code(key)
                {
                    let origin = "`GIT_CONFIG_PARAMETERS`";
                    out.push(Script::new(&git_value_script(key, code), *literal, origin));
                }
            }
        } else if ["GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"].contains(name) {
            // GIT_CONFIG_GLOBAL / GIT_CONFIG_SYSTEM / GIT_CONFIG point git
            // at a file that can hold any hook.
            out.push(Script::new("", false, format!("`{name}`")));
        }
    }
    out
}

/// De-quote an assignment's value as bash would, by parsing it as a word.
fn dequote(raw: &str) -> (String, bool) {
    let parsed = crate::shell::parse(&format!(": {raw}"));
    match parsed.commands.first() {
        Some(cmd) if parsed.is_complete() && cmd.words.len() == 2 => {
            (cmd.words[1].clone(), cmd.literal[1])
        }
        _ => (raw.to_string(), false),
    }
}

/// The code one command layer (`name` with `args`) hands to a shell or
/// runs as a hook.
pub fn scripts(name: &str, args: &[String], literal: &[bool]) -> Vec<Script> {
    let mut out = Vec::new();
    let lit = |i: usize| literal.get(i).copied().unwrap_or(false);
    let mut push = |text: &str, is_literal: bool, origin: String| {
        out.push(Script::new(text, is_literal, origin));
    };
    // The value of option `-x` / `--long`, written `-x V`, `-xV`,
    // `--long=V`, `--long V`.
    let values_of = |shorts: &[&str], longs: &[&str]| -> Vec<(String, bool)> {
        let mut found = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            for short in shorts {
                if arg == short {
                    if let Some(v) = args.get(i + 1) {
                        found.push((v.clone(), lit(i + 1)));
                    }
                } else if short.len() == 2 && arg.starts_with('-') && !arg.starts_with("--") {
                    // In a cluster (`-qc CMD`, `-cCMD`): the rest of the
                    // cluster, or the next argument when it ends there.
                    let letter = &short[1..];
                    if let Some(at) = arg[1..].find(letter) {
                        let rest = &arg[1 + at + 1..];
                        if !rest.is_empty() {
                            found.push((rest.to_string(), lit(i)));
                        } else if let Some(v) = args.get(i + 1) {
                            found.push((v.clone(), lit(i + 1)));
                        }
                    }
                }
            }
            for long in longs {
                if arg == long {
                    if let Some(v) = args.get(i + 1) {
                        found.push((v.clone(), lit(i + 1)));
                    }
                } else if let Some(v) = arg.strip_prefix(&format!("{long}=")) {
                    found.push((v.to_string(), lit(i)));
                }
            }
        }
        found
    };
    let base = basename(name);
    let shell_like = SHELLS.contains(&family(base));
    match base {
        _ if shell_like => {
            // `sh -c`, `bash -ec`, `bash -o pipefail -c`: the first operand
            // after the options is the script.
            let c_at = args
                .iter()
                .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'));
            if let Some(at) = c_at {
                let mut i = at + 1;
                while args.get(i).is_some_and(|a| a.starts_with(['-', '+'])) {
                    i += if args[i] == "-o" || args[i] == "+o" {
                        2
                    } else {
                        1
                    };
                }
                if let Some(script) = args.get(i) {
                    push(script, lit(i), format!("`{base} -c`"));
                }
            }
        }
        "eval" => {
            let all_literal = (0..args.len()).all(lit);
            push(&args.join(" "), all_literal, "`eval`".into());
        }
        "env" => {
            if let Some(parsed) = wrapper_options("env", args) {
                for opt in parsed.options.iter().filter(|o| o.is('S', "split-string")) {
                    push(opt.value.unwrap_or(""), true, "`env -S`".into());
                }
                // `env PAGER='…' git log`: the variables env sets.
                let start = parsed.end.min(args.len());
                let assigned: Vec<String> = args[start..]
                    .iter()
                    .zip(literal.get(start..).unwrap_or(&[]))
                    .take_while(|(a, _)| a.contains('=') || *a == "-")
                    .filter(|(a, _)| a.contains('='))
                    .map(|(a, l)| quote_value(a, *l))
                    .collect();
                out.extend(assignment_scripts(&assigned));
            }
        }
        "trap" => {
            let first = args.iter().position(|a| a != "--");
            if let Some(i) = first
                && !args[i].starts_with('-')
                && args.len() > i + 1
            {
                push(&args[i], lit(i), "`trap`".into());
            }
        }
        "script" => {
            for (v, l) in values_of(&["-c"], &["--command"]) {
                push(&v, l, "`script -c`".into());
            }
        }
        "flock" => {
            for (v, l) in values_of(&["-c"], &["--command"]) {
                push(&v, l, "`flock -c`".into());
            }
        }
        "su" | "runuser" | "sg" => {
            for (v, l) in values_of(&["-c"], &["--command", "--session-command"]) {
                push(&v, l, format!("`{base} -c`"));
            }
            if base == "sg"
                && let Some(last) = args.len().checked_sub(1)
                && args.len() >= 2
            {
                push(&args[last], lit(last), "`sg`".into());
            }
        }
        "watch" => {
            // Without `-x`, watch hands its arguments to `sh -c` as one string.
            let exec = args.iter().any(|a| {
                a == "-x"
                    || a == "--exec"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            });
            let mut i = 0;
            while let Some(a) = args.get(i) {
                if !a.starts_with('-') {
                    break;
                }
                let takes = ["-n", "--interval", "-q", "--equexit", "--chgexit"];
                i += if takes.contains(&a.as_str()) { 2 } else { 1 };
            }
            if !exec && i < args.len() {
                let all_literal = (i..args.len()).all(lit);
                push(&args[i..].join(" "), all_literal, "`watch`".into());
            }
        }
        "gdb" | "cgdb" | "gdb-multiarch" => {
            let shorts = ["-ex", "-iex", "-eval-command", "-init-eval-command"];
            let longs = ["--ex", "--eval-command", "--init-eval-command", "--iex"];
            for (v, l) in values_of(&shorts, &longs) {
                let v = v.trim_start();
                let code = v
                    .strip_prefix("shell ")
                    .or_else(|| v.strip_prefix('!'))
                    .or_else(|| v.strip_prefix("pipe "));
                let runs_other = ["python", "py ", "pi ", "guile", "source", "pipe", "|"];
                match code {
                    Some(code) => push(code, l, "`gdb -ex shell`".into()),
                    None if runs_other.iter().any(|p| v.starts_with(p)) => {
                        push("", false, "`gdb -ex`".into())
                    }
                    None => {}
                }
            }
            if !values_of(&["-x", "-ix"], &["--command", "--init-command"]).is_empty() {
                push("", false, "a `gdb` command file".into());
            }
        }
        "ssh" | "scp" | "sftp" => {
            for (v, l) in values_of(&["-o"], &[]) {
                let (key, value) = match v.split_once(['=', ' ']) {
                    Some((k, val)) => (k.trim().to_ascii_lowercase(), val.trim().to_string()),
                    None => continue,
                };
                if [
                    "proxycommand",
                    "localcommand",
                    "knownhostscommand",
                    "remotecommand",
                ]
                .contains(&key.as_str())
                    && key != "remotecommand"
                {
                    push(&value, l, format!("`{base} -o {key}`"));
                }
            }
            if !values_of(&["-F", "-S"], &[]).is_empty() && base == "scp" {
                push("", false, "an `scp` program".into());
            }
        }
        "rsync" => {
            for (v, l) in values_of(&["-e"], &["--rsh"]) {
                push(&v, l, "`rsync -e`".into());
            }
        }
        "tar" | "gtar" | "bsdtar" => {
            for (v, l) in values_of(&["-I"], &["--use-compress-program", "--to-command"]) {
                push(&v, l, "`tar`'s command option".into());
            }
            for (v, l) in values_of(&[], &["--rsh-command"]) {
                push(&v, l, "`tar --rsh-command`".into());
            }
            for (v, l) in values_of(&[], &["--checkpoint-action"]) {
                if let Some(code) = v.strip_prefix("exec=") {
                    push(code, l, "`tar --checkpoint-action=exec`".into());
                }
            }
            for (i, arg) in args.iter().enumerate() {
                if arg.starts_with("--info-script")
                    || arg.starts_with("--new-volume-script")
                    || (arg == "-F" && args.get(i + 1).is_some())
                {
                    push("", false, "a `tar` volume script".into());
                }
            }
        }
        "zip" => {
            for (v, l) in values_of(&["-TT"], &["--unzip-command"]) {
                push(&v, l, "`zip -TT`".into());
            }
        }
        "git" => {
            for (i, arg) in args.iter().enumerate() {
                let setting = if arg == "-c" {
                    args.get(i + 1).map(|v| (v.as_str(), lit(i + 1)))
                } else if let Some(v) = arg.strip_prefix("-c") {
                    (!v.is_empty() && !arg.starts_with("--")).then_some((v, lit(i)))
                } else {
                    None
                };
                if let Some((setting, l)) = setting
                    && let Some((key, value)) = setting.split_once('=')
                    && git_key_runs_code(key)
                {
                    push(&git_value_script(key, value), l, format!("`git -c {key}`"));
                }
                if let Some(env) = arg.strip_prefix("--config-env=")
                    && git_key_runs_code(env.split('=').next().unwrap_or(""))
                {
                    push("", false, "`git --config-env`".into());
                }
                if arg == "--config-env"
                    && args
                        .get(i + 1)
                        .is_some_and(|v| git_key_runs_code(v.split('=').next().unwrap_or("")))
                {
                    push("", false, "`git --config-env`".into());
                }
                if arg == "--exec-path" || arg.starts_with("--exec-path=") {
                    push("", false, "`git --exec-path`".into());
                }
            }
        }
        "tmux" => {
            const RUNNING: &[&str] = &[
                "new-session",
                "new",
                "new-window",
                "neww",
                "split-window",
                "splitw",
                "run-shell",
                "run",
                "respawn-pane",
                "respawnp",
                "respawn-window",
                "respawnw",
                "send-keys",
                "send",
                "pipe-pane",
                "pipep",
                "display-popup",
                "popup",
            ];
            if let Some(at) = args.iter().position(|a| RUNNING.contains(&a.as_str())) {
                // Operands, skipping the values of tmux's value options.
                const VALUED: &[&str] = &["-t", "-s", "-n", "-c", "-F", "-x", "-y", "-e", "-T"];
                let words: Vec<usize> = (at + 1..args.len())
                    .filter(|i| !args[*i].starts_with('-'))
                    .filter(|i| !VALUED.contains(&args[*i - 1].as_str()))
                    .collect();
                let origin = format!("`tmux {}`", args[at]);
                let all_literal = words.iter().all(|i| lit(*i));
                let text: Vec<&str> = words.iter().map(|i| args[*i].as_str()).collect();
                push(&text.join(" "), all_literal, origin.clone());
                // `send-keys` types each argument as its own line.
                for i in words.iter().filter(|_| text.len() > 1) {
                    push(&args[*i], lit(*i), origin.clone());
                }
            }
        }
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff" => {
            let mut commands = values_of(&["-c", "-S"], &["--cmd"]);
            commands.extend(
                args.iter()
                    .enumerate()
                    .filter_map(|(i, a)| a.strip_prefix('+').map(|c| (c.to_string(), lit(i)))),
            );
            for (command, l) in commands {
                if let Some((_, code)) = command.split_once('!') {
                    push(code, l, format!("`{base}`'s `!`"));
                }
            }
        }
        _ if super::security::INTERPRETERS.contains(&family(base))
            || base.starts_with("python")
            || super::security::AWKS.contains(&family(base)) =>
        {
            let all_literal = (0..args.len()).all(lit);
            for code in called_strings(&args.join(" ")) {
                push(&code, all_literal, format!("a command `{base}` runs"));
            }
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            let assigned: Vec<String> = args
                .iter()
                .zip(literal)
                .filter(|(a, _)| a.contains('=') && !a.starts_with('-'))
                .map(|(a, l)| quote_value(a, *l))
                .collect();
            out.extend(assignment_scripts(&assigned));
        }
        _ => {}
    }
    out
}

/// String literals handed to a command-running call in interpreter code:
/// `system("…")`, `os.system('…')`, `popen`, `exec`, `spawn`,
/// `subprocess.run("…", shell=True)`, `` `…` ``.
fn called_strings(code: &str) -> Vec<String> {
    const CALLS: &[&str] = &[
        "system(",
        "popen(",
        "exec(",
        "execSync(",
        "spawn(",
        "spawnSync(",
        "run(",
        "call(",
        "check_output(",
        "check_call(",
        "Popen(",
        "getoutput(",
        "getstatusoutput(",
        "shell_exec(",
        "passthru(",
        "proc_open(",
        "qx(",
        "system ",
        "exec ",
    ];
    let mut out = Vec::new();
    for call in CALLS {
        for (at, _) in code.match_indices(call) {
            let rest = code[at + call.len()..].trim_start_matches([' ', '[']);
            if let Some(text) = quoted_prefix(rest) {
                out.push(text);
            }
        }
    }
    // Perl's and Ruby's backticks run their text in a shell.
    let mut parts = code.split('`');
    parts.next();
    while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
        out.push(inside.to_string());
    }
    out
}

/// The text of a string literal at the start of `text` (`"…"` or `'…'`).
fn quoted_prefix(text: &str) -> Option<String> {
    let mut chars = text.chars();
    let quote = chars.next().filter(|q| *q == '"' || *q == '\'')?;
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c if c == quote => return Some(out),
            c => out.push(c),
        }
    }
    None
}

/// An `export NAME=value` argument (already de-quoted when literal) back
/// in assignment form, so [`assignment_scripts`] reads it as written.
fn quote_value(arg: &str, literal: bool) -> String {
    match arg.split_once('=') {
        Some((name, value)) if literal => format!("{name}='{}'", value.replace('\'', r"'\''")),
        _ => arg.to_string(),
    }
}
