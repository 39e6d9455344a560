//! What counts as code in other programs' settings and in interpreter
//! source: git configuration keys that name commands, and the command
//! strings interpreter code hands to a shell.

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
pub(super) fn git_value_script(key: &str, value: &str) -> String {
    let key = key.to_ascii_lowercase();
    if key.starts_with("alias.") || key.contains("credential") {
        value.strip_prefix('!').unwrap_or(value).to_string()
    } else {
        value.to_string()
    }
}

/// String literals handed to a command-running call in interpreter code:
/// `system("…")`, `os.system('…')`, `popen`, `exec`, `spawn`,
/// `subprocess.run("…", shell=True)`, `` `…` ``.
pub(super) fn called_strings(code: &str) -> Vec<String> {
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
