//! Shell code that hides outside a command's argv: the script of `sh -c`,
//! `eval`, `env -S`, `script -c`, `watch`, `flock -c`, `su -c`, `gdb -ex
//! shell`, `trap`; other programs' command hooks (`git -c core.pager=…`,
//! `GIT_CONFIG_*`, `tar --to-command`, `rsync -e`, `ssh -o ProxyCommand`,
//! `zip -TT`); and variables bash runs or expands as code (`PROMPT_COMMAND`,
//! `PS4`, `BASH_ENV`, `ENV`). The security inspector and deny rules look
//! into each; a script only known when it runs cannot be looked into.

use super::nested_code::{called_strings, git_key_runs_code, git_value_script};
use super::programs::{AWKS, INTERPRETERS, SHELLS, family};
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
            let name = name.trim_end_matches('+');
            // Only variables that can hold code are worth de-quoting.
            let relevant = COMMAND_VARS.contains(&name)
                || EXPANDED_VARS.contains(&name)
                || name.starts_with("GIT_CONFIG");
            relevant.then(|| (name, dequote(raw)))
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
    let base = basename(name);
    let mut call = Call {
        base,
        args,
        literal,
        out: Vec::new(),
    };
    match base {
        _ if SHELLS.contains(&family(base)) => call.shell_c(),
        "eval" => call.eval(),
        "env" => call.env(),
        "trap" => call.trap(),
        "script" => call.script(),
        "flock" => call.flock(),
        "su" | "runuser" | "sg" => call.su(),
        "watch" => call.watch(),
        "gdb" | "cgdb" | "gdb-multiarch" => call.gdb(),
        "ssh" | "scp" | "sftp" => call.ssh(),
        "rsync" => call.rsync(),
        "tar" | "gtar" | "bsdtar" => call.tar(),
        "zip" => call.zip(),
        "git" => call.git(),
        "tmux" => call.tmux(),
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff" => call.vim(),
        _ if INTERPRETERS.contains(&family(base))
            || base.starts_with("python")
            || AWKS.contains(&family(base)) =>
        {
            call.interpreter()
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => call.export(),
        _ => {}
    }
    call.out
}

/// One command layer being read for the code it hands on.
struct Call<'a> {
    base: &'a str,
    args: &'a [String],
    literal: &'a [bool],
    out: Vec<Script>,
}

impl Call<'_> {
    fn lit(&self, i: usize) -> bool {
        self.literal.get(i).copied().unwrap_or(false)
    }

    fn push(&mut self, text: &str, is_literal: bool, origin: String) {
        self.out.push(Script::new(text, is_literal, origin));
    }

    /// The values of option `-x` / `--long`, written `-x V`, `-xV`,
    /// `--long=V`, `--long V`; in a cluster (`-qc CMD`) the rest of the
    /// cluster, or the next argument when it ends there.
    fn values_of(&self, shorts: &[&str], longs: &[&str]) -> Vec<(String, bool)> {
        let args = self.args;
        let mut found = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            for short in shorts {
                if arg == short {
                    if let Some(v) = args.get(i + 1) {
                        found.push((v.clone(), self.lit(i + 1)));
                    }
                } else if short.len() == 2 && arg.starts_with('-') && !arg.starts_with("--") {
                    let letter = &short[1..];
                    if let Some(at) = arg[1..].find(letter) {
                        let rest = &arg[1 + at + 1..];
                        if !rest.is_empty() {
                            found.push((rest.to_string(), self.lit(i)));
                        } else if let Some(v) = args.get(i + 1) {
                            found.push((v.clone(), self.lit(i + 1)));
                        }
                    }
                }
            }
            for long in longs {
                if arg == long {
                    if let Some(v) = args.get(i + 1) {
                        found.push((v.clone(), self.lit(i + 1)));
                    }
                } else if let Some(v) = arg.strip_prefix(&format!("{long}=")) {
                    found.push((v.to_string(), self.lit(i)));
                }
            }
        }
        found
    }

    fn shell_c(&mut self) {
        let (base, args) = (self.base, self.args);
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
                self.push(script, self.lit(i), format!("`{base} -c`"));
            }
        }
    }

    fn eval(&mut self) {
        let args = self.args;
        let all_literal = (0..args.len()).all(|i| self.lit(i));
        self.push(&args.join(" "), all_literal, "`eval`".into());
    }

    fn env(&mut self) {
        let (args, literal) = (self.args, self.literal);
        if let Some(parsed) = wrapper_options("env", args) {
            for opt in parsed.options.iter().filter(|o| o.is('S', "split-string")) {
                self.push(opt.value.unwrap_or(""), true, "`env -S`".into());
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
            self.out.extend(assignment_scripts(&assigned));
        }
    }

    fn trap(&mut self) {
        let args = self.args;
        let first = args.iter().position(|a| a != "--");
        if let Some(i) = first
            && !args[i].starts_with('-')
            && args.len() > i + 1
        {
            self.push(&args[i], self.lit(i), "`trap`".into());
        }
    }

    fn script(&mut self) {
        for (v, l) in self.values_of(&["-c"], &["--command"]) {
            self.push(&v, l, "`script -c`".into());
        }
    }

    fn flock(&mut self) {
        for (v, l) in self.values_of(&["-c"], &["--command"]) {
            self.push(&v, l, "`flock -c`".into());
        }
    }

    fn su(&mut self) {
        let (base, args) = (self.base, self.args);
        for (v, l) in self.values_of(&["-c"], &["--command", "--session-command"]) {
            self.push(&v, l, format!("`{base} -c`"));
        }
        if base == "sg"
            && let Some(last) = args.len().checked_sub(1)
            && args.len() >= 2
        {
            self.push(&args[last], self.lit(last), "`sg`".into());
        }
    }

    fn watch(&mut self) {
        let args = self.args;
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
            let all_literal = (i..args.len()).all(|i| self.lit(i));
            self.push(&args[i..].join(" "), all_literal, "`watch`".into());
        }
    }

    fn gdb(&mut self) {
        let shorts = ["-ex", "-iex", "-eval-command", "-init-eval-command"];
        let longs = ["--ex", "--eval-command", "--init-eval-command", "--iex"];
        for (v, l) in self.values_of(&shorts, &longs) {
            let v = v.trim_start();
            let code = v
                .strip_prefix("shell ")
                .or_else(|| v.strip_prefix('!'))
                .or_else(|| v.strip_prefix("pipe "));
            let runs_other = ["python", "py ", "pi ", "guile", "source", "pipe", "|"];
            match code {
                Some(code) => self.push(code, l, "`gdb -ex shell`".into()),
                None if runs_other.iter().any(|p| v.starts_with(p)) => {
                    self.push("", false, "`gdb -ex`".into())
                }
                None => {}
            }
        }
        if !self
            .values_of(&["-x", "-ix"], &["--command", "--init-command"])
            .is_empty()
        {
            self.push("", false, "a `gdb` command file".into());
        }
    }

    fn ssh(&mut self) {
        let base = self.base;
        for (v, l) in self.values_of(&["-o"], &[]) {
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
                self.push(&value, l, format!("`{base} -o {key}`"));
            }
        }
        if !self.values_of(&["-F", "-S"], &[]).is_empty() && base == "scp" {
            self.push("", false, "an `scp` program".into());
        }
    }

    fn rsync(&mut self) {
        for (v, l) in self.values_of(&["-e"], &["--rsh"]) {
            self.push(&v, l, "`rsync -e`".into());
        }
    }

    fn tar(&mut self) {
        let args = self.args;
        for (v, l) in self.values_of(&["-I"], &["--use-compress-program", "--to-command"]) {
            self.push(&v, l, "`tar`'s command option".into());
        }
        for (v, l) in self.values_of(&[], &["--rsh-command"]) {
            self.push(&v, l, "`tar --rsh-command`".into());
        }
        for (v, l) in self.values_of(&[], &["--checkpoint-action"]) {
            if let Some(code) = v.strip_prefix("exec=") {
                self.push(code, l, "`tar --checkpoint-action=exec`".into());
            }
        }
        for (i, arg) in args.iter().enumerate() {
            if arg.starts_with("--info-script")
                || arg.starts_with("--new-volume-script")
                || (arg == "-F" && args.get(i + 1).is_some())
            {
                self.push("", false, "a `tar` volume script".into());
            }
        }
    }

    fn zip(&mut self) {
        for (v, l) in self.values_of(&["-TT"], &["--unzip-command"]) {
            self.push(&v, l, "`zip -TT`".into());
        }
    }

    fn git(&mut self) {
        let args = self.args;
        for (i, arg) in args.iter().enumerate() {
            let setting = if arg == "-c" {
                args.get(i + 1).map(|v| (v.as_str(), self.lit(i + 1)))
            } else if let Some(v) = arg.strip_prefix("-c") {
                (!v.is_empty() && !arg.starts_with("--")).then_some((v, self.lit(i)))
            } else {
                None
            };
            if let Some((setting, l)) = setting
                && let Some((key, value)) = setting.split_once('=')
                && git_key_runs_code(key)
            {
                self.push(&git_value_script(key, value), l, format!("`git -c {key}`"));
            }
            if let Some(env) = arg.strip_prefix("--config-env=")
                && git_key_runs_code(env.split('=').next().unwrap_or(""))
            {
                self.push("", false, "`git --config-env`".into());
            }
            if arg == "--config-env"
                && args
                    .get(i + 1)
                    .is_some_and(|v| git_key_runs_code(v.split('=').next().unwrap_or("")))
            {
                self.push("", false, "`git --config-env`".into());
            }
            if arg == "--exec-path" || arg.starts_with("--exec-path=") {
                self.push("", false, "`git --exec-path`".into());
            }
        }
    }

    fn tmux(&mut self) {
        let args = self.args;
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
            let all_literal = words.iter().all(|i| self.lit(*i));
            let text: Vec<&str> = words.iter().map(|i| args[*i].as_str()).collect();
            self.push(&text.join(" "), all_literal, origin.clone());
            // `send-keys` types each argument as its own line.
            for i in words.iter().filter(|_| text.len() > 1) {
                self.push(&args[*i], self.lit(*i), origin.clone());
            }
        }
    }

    fn vim(&mut self) {
        let (base, args) = (self.base, self.args);
        let mut commands = self.values_of(&["-c", "-S"], &["--cmd"]);
        commands.extend(
            args.iter()
                .enumerate()
                .filter_map(|(i, a)| a.strip_prefix('+').map(|c| (c.to_string(), self.lit(i)))),
        );
        for (command, l) in commands {
            if let Some((_, code)) = command.split_once('!') {
                self.push(code, l, format!("`{base}`'s `!`"));
            }
        }
    }

    fn interpreter(&mut self) {
        let (base, args) = (self.base, self.args);
        let all_literal = (0..args.len()).all(|i| self.lit(i));
        for code in called_strings(&args.join(" ")) {
            self.push(&code, all_literal, format!("a command `{base}` runs"));
        }
    }

    fn export(&mut self) {
        let (args, literal) = (self.args, self.literal);
        let assigned: Vec<String> = args
            .iter()
            .zip(literal)
            .filter(|(a, _)| a.contains('=') && !a.starts_with('-'))
            .map(|(a, l)| quote_value(a, *l))
            .collect();
        self.out.extend(assignment_scripts(&assigned));
    }
}

/// An `export NAME=value` argument (already de-quoted when literal) back
/// in assignment form, so [`assignment_scripts`] reads it as written.
fn quote_value(arg: &str, literal: bool) -> String {
    match arg.split_once('=') {
        Some((name, value)) if literal => format!("{name}='{}'", value.replace('\'', r"'\''")),
        _ => arg.to_string(),
    }
}
