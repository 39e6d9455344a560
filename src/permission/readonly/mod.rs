//! The commands smart mode runs without asking. The list is kept honestly
//! read-only: a command is here only if no option of it writes files or runs
//! other programs, or if the options that do are recognised and refused.
//! Anything that executes project code (builds, tests, interpreters) asks.
//!
//! This file holds the plain list and walks wrappers and nested scripts;
//! the programs with options to check have their own files: `tools` (find,
//! sed, sort, rg, …, with `sed_script` reading sed programs), `builtins`
//! (bash builtins that read a variable name), `more` (archives, awk,
//! `--version`, pagers) and `git`.

use super::getopt::Opt;
pub use super::wrappers::wrapped_command;
use super::wrappers::{is_command_lookup, wrapper_options};
use crate::shell::SimpleCommand;
pub(in crate::permission) use tools::check_sed;
use tools::refuse;

mod builtins;
mod git;
mod more;
mod sed_script;
mod tools;

/// Commands none of whose options write files or run other programs, so
/// any argument (even one only known at run time) is harmless.
#[rustfmt::skip]
const PLAIN: &[&str] = &[
    ":", "basename", "break", "continue", "exit", "return", "shift", "b2sum",
    "base64", "cat", "cd", "cksum", "cmp", "column", "comm", "cut", "df", "diff", "dirname", "du",
    "echo", "expand", "false", "fold", "grep", "egrep", "fgrep", "head", "hexdump", "id", "jq",
    "join", "ls", "md5sum", "nl", "nproc", "od", "paste", "printenv", "ps", "pwd",
    "readlink", "realpath", "rev", "seq", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
    "sha512sum", "sleep", "stat", "strings", "tac", "tail", "tr", "true", "type", "uname",
    "unexpand", "wc", "which", "whoami",
];

/// Variables that may prefix a read-only command: they change formatting,
/// never which program runs or what it loads.
#[rustfmt::skip]
const SAFE_VARS: &[&str] = &[
    "LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES",
    "TERM", "GREP_COLORS", "RUST_BACKTRACE", "RUST_LOG", "CARGO_TERM_COLOR",
];

/// Why a command is not read-only, as a sentence for the dialog.
pub type Reason = String;

type ArgCheck = fn(&[String]) -> Result<(), Reason>;

/// Ok when `cmd` only reads.
pub fn check(cmd: &SimpleCommand) -> Result<(), Reason> {
    for assignment in &cmd.assignments {
        let name = assignment.split(['=', '+', '[']).next().unwrap_or("");
        let standalone = cmd.words.is_empty();
        if !safe_var(name, standalone) && !more::harmless_prefix_variable(name) {
            return Err(format!("sets `{name}`, which can change what runs"));
        }
        if assignment.starts_with(&format!("{name}[")) {
            return Err(format!(
                "assigns an element of `{name}`, whose subscript bash evaluates as code"
            ));
        }
    }
    if cmd.words.is_empty() {
        return Ok(());
    }
    // A pager fed by a pipe prints its input like `cat`.
    if matches!(cmd.name(), Some("less" | "more")) && cmd.pipe.is_some_and(|(_, s)| s > 0) {
        return more::check_pager(&cmd.words[1..]);
    }
    check_words(&cmd.words, &cmd.literal, 0)
}

/// Whether an assignment (`NAME=value`) leaves what runs unchanged.
/// `standalone`: the assignment is a command of its own (`x=1; …`).
pub fn is_safe_assignment(assignment: &str, standalone: bool) -> bool {
    let name = assignment.split(['=', '+', '[']).next().unwrap_or("");
    safe_var(name, standalone)
}

fn safe_var(name: &str, standalone: bool) -> bool {
    if name.starts_with("LC_") || SAFE_VARS.contains(&name) {
        return true;
    }
    // A shell variable of the script's own (lowercase by convention) is
    // not read by other programs.
    standalone
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn check_words(words: &[String], literal: &[bool], depth: usize) -> Result<(), Reason> {
    let Some(name) = words.first() else {
        return Ok(());
    };
    if !literal.first().copied().unwrap_or(false) {
        return Err(format!(
            "the command name `{name}` is only known when it runs"
        ));
    }
    let args = &words[1..];
    let arg_literal = &literal[1..];
    let args_literal = arg_literal.iter().all(|l| *l);
    if PLAIN.contains(&name.as_str())
        || more::PLAIN_MORE.contains(&name.as_str())
        || more::is_version_query(name, args)
    {
        return Ok(());
    }
    if more::is_awk(name) {
        return more::check_awk(args, arg_literal);
    }
    if let Some(script) = more::shell_script(name, args) {
        let at = args.iter().position(|a| a == script).unwrap_or(0);
        if !arg_literal.get(at).copied().unwrap_or(false) {
            return Err(format!("`{name} -c` runs a script only known when it runs"));
        }
        return check_script(name, script, depth);
    }
    match name.as_str() {
        "printf" => return builtins::check_printf(args, arg_literal),
        "read" => return builtins::check_read(args, arg_literal),
        "test" | "[" => return builtins::check_test(args, arg_literal),
        "[[" => return builtins::check_extended_test(args, arg_literal),
        _ => {}
    }
    if depth < 4
        && let Some(inner) = wrapped_command(name, args)
    {
        let offset = words.len() - inner.len();
        if literal[1..offset].iter().any(|l| !l) {
            return Err(format!(
                "`{name}` has options only known when it runs, which could change what it runs"
            ));
        }
        check_wrapper_options(name, &args[..offset - 1], inner)?;
        if inner.is_empty() {
            return Ok(());
        }
        if name == "xargs" {
            // xargs appends arguments read at run time: only commands with
            // no dangerous options may receive them.
            if !PLAIN.contains(&inner[0].as_str()) {
                return Err(format!(
                    "`xargs` passes unchecked arguments to `{}`",
                    inner[0]
                ));
            }
        }
        return check_words(inner, &literal[offset..], depth + 1);
    }
    let checked = arg_checker(name);
    let Some(checked) = checked else {
        return Err(format!("`{name}` is not on the read-only list"));
    };
    if !args_literal {
        return Err(format!(
            "`{name}` has arguments only known when it runs, which could be options that write"
        ));
    }
    checked(args)
}

/// The argument check of a command that is read-only with some options.
fn arg_checker(name: &str) -> Option<ArgCheck> {
    match name {
        "find" => Some(tools::check_find),
        "sed" => Some(tools::check_sed),
        "sort" => Some(tools::check_sort),
        "uniq" => Some(tools::check_uniq),
        "tree" => Some(|a| refuse("tree", a, &['o', 'R'], &[], "writes its listing to a file")),
        "file" => Some(|a| refuse("file", a, &['C'], &["compile"], "writes a file")),
        "date" => Some(|a| refuse("date", a, &['s'], &["set"], "sets the clock")),
        "rg" => Some(tools::check_rg),
        "tar" | "gtar" | "bsdtar" => Some(more::check_tar),
        "unzip" => Some(more::check_unzip),
        "xxd" => Some(more::check_xxd),
        "ag" => Some(|a| refuse("ag", a, &[], &["pager"], "runs another program")),
        "hostname" => Some(tools::check_hostname),
        "command" => Some(check_command_lookup),
        "git" => Some(git::check_git),
        _ => None,
    }
}

/// `sh -c 'script'` is read-only when everything in the script is: every
/// command, no file written, nothing evaluated, and no path that could
/// lead out of the workspace (the gate's path checks see only the outer
/// command, where the script is one word).
fn check_script(shell: &str, script: &str, depth: usize) -> Result<(), Reason> {
    let refuse = |why: &str| Err(format!("`{shell} -c` runs a script that {why}"));
    if depth >= 3 {
        return refuse("nests shells too deeply to judge");
    }
    let inner = crate::shell::parse(script);
    if !inner.is_complete() || !inner.evaluated.is_empty() || inner.file_writes().next().is_some() {
        return refuse("cairn cannot judge as read-only");
    }
    let leaves = |word: &str| {
        let value = word.rsplit_once('=').map_or(word, |(_, v)| v);
        [word, value].iter().any(|w| {
            (w.starts_with('/') && !super::paths::is_harmless_device(std::path::Path::new(w)))
                || w.starts_with('~')
                || w.split('/').any(|c| c == "..")
        })
    };
    for cmd in &inner.commands {
        let printing = matches!(cmd.name(), Some("echo" | "printf"));
        for (word, literal) in cmd.words.iter().zip(&cmd.literal).skip(1) {
            if leaves(word) || (!literal && !printing) {
                return refuse(&format!(
                    "names `{word}`, which may be outside the workspace"
                ));
            }
        }
        if cmd.name() == Some("cd") {
            return refuse("changes directory");
        }
        for assignment in &cmd.assignments {
            if !is_safe_assignment(assignment, cmd.words.is_empty()) {
                return refuse(&format!("sets `{assignment}`"));
            }
        }
        check_words(&cmd.words, &cmd.literal, depth + 1)?;
    }
    if inner
        .redirects
        .iter()
        .any(|r| leaves(&r.target) || !r.target_literal)
    {
        return refuse("reads a file that may be outside the workspace");
    }
    Ok(())
}

/// What a wrapper does besides running its command, judged on its own
/// options (`options`: the arguments before the command it runs).
fn check_wrapper_options(name: &str, options: &[String], inner: &[String]) -> Result<(), Reason> {
    let Some(parsed) = wrapper_options(name, options) else {
        return Err(format!("`{name}` has options cairn cannot read"));
    };
    match name {
        "nohup" => Err("`nohup` may write `nohup.out`".into()),
        "exec" if !inner.is_empty() => {
            Err(format!("`exec` replaces the shell with `{}`", inner[0]))
        }
        "time" => match parsed.options.iter().find(|o| o.short != Some('p')) {
            Some(opt) if opt.is('o', "output") => Err("`time -o` writes a file".into()),
            Some(opt) => Err(format!(
                "`time {}`: of `time`'s options only `-p` is judged read-only",
                opt.written
            )),
            None => Ok(()),
        },
        "xargs" => {
            for opt in &parsed.options {
                if !xargs_option_reads(opt) {
                    return Err(format!(
                        "`xargs {}` is not among the options cairn judges read-only",
                        opt.written
                    ));
                }
            }
            Ok(())
        }
        "env" => {
            for arg in &options[parsed.end.min(options.len())..] {
                if arg.contains('=') && !is_safe_assignment(arg, false) {
                    let name = arg.split('=').next().unwrap_or(arg);
                    return Err(format!("sets `{name}`, which can change what runs"));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The few xargs options judged read-only: they change how input is split
/// or how many commands run, never which command runs or what it reads.
fn xargs_option_reads(opt: &Opt) -> bool {
    let number =
        |v: Option<&str>| v.is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()));
    // A long option must be written in full.
    if let Some(body) = opt.written.strip_prefix("--") {
        let name = body.split('=').next().unwrap_or(body);
        if opt.long != Some(name) {
            return false;
        }
    }
    match opt.short {
        Some('0' | 'r' | 't' | 'x') => true,
        Some('n' | 'L' | 'P' | 's') => number(opt.value),
        Some('d') => true,
        _ => false,
    }
}

fn check_command_lookup(args: &[String]) -> Result<(), Reason> {
    if is_command_lookup(args) {
        Ok(())
    } else {
        Err("`command` runs another command".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell;

    fn judge(command: &str) -> Result<(), Reason> {
        let analysis = shell::parse(command);
        analysis.commands.iter().try_for_each(check)
    }

    #[test]
    fn reading_commands_pass() {
        for command in [
            "ls -la",
            "cat a b",
            "grep -rn foo src",
            "find . -name '*.rs' -type f",
            "sed -n '1,20p' f",
            "sort -u -k 2 f",
            "sort -t o f",
            "uniq -c f",
            "git status --short",
            "git --no-pager log -p",
            "git -C sub diff HEAD~1",
            "git branch -a --contains HEAD",
            "git tag -l 'v*'",
            "git remote -v",
            "git config --get user.name",
            "env",
            "env LC_ALL=C ls",
            "xargs -0 -n 1 grep foo",
            "command -v cargo",
            "time wc -l f",
            "timeout 5 cat f",
            "date +%s",
            "tree -L 2",
            "rg -n TODO",
            "x=1",
            "LC_ALL=C ls",
        ] {
            assert_eq!(judge(command), Ok(()), "{command}");
        }
    }

    #[test]
    fn acting_commands_are_refused_with_a_reason() {
        let cases = [
            ("rm x", "`rm` is not on the read-only list"),
            ("find . -delete", "`find -delete` removes files"),
            ("find . -execdir ls \\;", "runs other commands"),
            ("find . -fprint out", "writes a file"),
            ("sed -i.bak s/a/b/ f", "`sed -i` edits files in place"),
            ("sed -ni p f", "`sed -i`"),
            ("sed --in-place s/a/b/ f", "`sed -i`"),
            ("sed -f script.sed f", "`sed -f`"),
            ("sed 's/a/b/e' f", "runs a command"),
            ("sort -o out f", "`sort -o` writes a file"),
            ("sort -uo out f", "`sort -o` writes a file"),
            ("sort --compress-program=gzip f", "runs another program"),
            ("uniq in out", "writes the second"),
            ("tree -ao out", "`tree -o`"),
            ("date -s 2020-01-01", "sets the clock"),
            ("rg --pre=./x foo", "runs another program"),
            ("git push", "`git push` may change the repository"),
            ("git branch -D x", "may change"),
            ("git tag v1", "may change"),
            ("git -c x=y log", "`git -c`"),
            ("git log --output=f", "writes a file"),
            ("git grep -Ovim x", "pager"),
            ("git stash pop", "may change"),
            ("env -S 'rm x'", "`env` is not on the read-only list"),
            ("xargs sort", "`xargs` passes unchecked arguments to `sort`"),
            ("$EDITOR f", "only known when it runs"),
            ("find . $ARGS", "only known when it runs"),
            ("PATH=. ls", "sets `PATH`"),
            ("PATH=/tmp", "sets `PATH`"),
            ("hostname evil", "change the host name"),
            ("env LD_PRELOAD=./x.so ls", "sets `LD_PRELOAD`"),
            ("env -u A PATH=. ls", "sets `PATH`"),
            ("\\time -o out ls", "`time -o` writes a file"),
            ("nohup ls", "nohup.out"),
            ("command rm x", "`rm` is not on the read-only list"),
            ("awk '{system(\"rm x\")}' f", "may run commands"),
            (
                "awk '{print > \"out\"}' f",
                "may run commands or write files",
            ),
            ("cargo test", "`cargo` is not on the read-only list"),
        ];
        for (command, reason) in cases {
            match judge(command) {
                Ok(()) => panic!("`{command}` should not be read-only"),
                Err(r) => assert!(r.contains(reason), "{command}: {r}"),
            }
        }
    }
}
