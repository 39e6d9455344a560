//! The commands smart mode runs without asking. The list is kept honestly
//! read-only: a command is here only if no option of it writes files or runs
//! other programs, or if the options that do are recognised and refused.
//! Anything that executes project code (builds, tests, interpreters) asks.

use super::shell::SimpleCommand;

/// Commands none of whose options write files or run other programs, so
/// any argument (even one only known at run time) is harmless.
#[rustfmt::skip]
const PLAIN: &[&str] = &[
    ":", "[", "basename", "break", "continue", "exit", "read", "return", "shift", "b2sum",
    "base64", "cat", "cd", "cksum", "cmp", "column", "comm", "cut", "df", "diff", "dirname", "du",
    "echo", "expand", "false", "fold", "grep", "egrep", "fgrep", "head", "hexdump", "id", "jq",
    "join", "ls", "md5sum", "nl", "nproc", "od", "paste", "printenv", "printf", "ps", "pwd",
    "readlink", "realpath", "rev", "seq", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
    "sha512sum", "sleep", "stat", "strings", "tac", "tail", "test", "tr", "true", "type", "uname",
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
        if !safe_var(name, standalone) {
            return Err(format!("sets `{name}`, which can change what runs"));
        }
    }
    if cmd.words.is_empty() {
        return Ok(());
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
    let args_literal = literal.iter().skip(1).all(|l| *l);
    if PLAIN.contains(&name.as_str()) {
        return Ok(());
    }
    check_wrapper_side_effects(name, args)?;
    if depth < 4
        && let Some(inner) = wrapped_command(name, args)
    {
        let offset = words.len() - inner.len();
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
    let checked: Option<ArgCheck> = match name.as_str() {
        "find" => Some(check_find),
        "sed" => Some(check_sed),
        "sort" => Some(check_sort),
        "uniq" => Some(check_uniq),
        "tree" => Some(|a| refuse_flags("tree", a, &["-o"], "writes its listing to a file")),
        "file" => Some(|a| refuse_flags("file", a, &["-C", "--compile"], "writes a file")),
        "date" => Some(|a| refuse_flags("date", a, &["-s", "--set"], "sets the clock")),
        "rg" => Some(|a| refuse_flags("rg", a, &["--pre"], "runs another program")),
        "ag" => Some(|a| refuse_flags("ag", a, &["--pager"], "runs another program")),
        "hostname" => Some(check_hostname),
        "command" => Some(check_command_lookup),
        "git" => Some(super::readonly_git::check_git),
        _ => None,
    };
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

/// The command a wrapper (`env`, `time`, `xargs`, ...) runs, or None when
/// `name` is no wrapper or its options are not understood.
pub fn wrapped_command<'a>(name: &str, args: &'a [String]) -> Option<&'a [String]> {
    let mut i = 0;
    let takes_value: &[&str] = match name {
        "env" => &["-u", "--unset", "-C", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "xargs" => &[
            "-n", "-I", "-i", "-d", "-L", "-l", "-P", "-s", "-E", "-e", "-a",
        ],
        "time" | "nohup" | "exec" | "builtin" => &[],
        "command" if !args.iter().any(|a| a == "-v" || a == "-V") => &[],
        _ => return None,
    };
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if name == "env" && arg.contains('=') && !arg.starts_with('-') {
            i += 1;
            continue;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if name == "env" && (arg == "-S" || arg.starts_with("--split-string")) {
            return None;
        }
        i += if takes_value.contains(&arg.as_str()) {
            2
        } else {
            1
        };
    }
    if name == "timeout" {
        i += 1; // the duration
    }
    if name == "xargs" && i >= args.len() {
        return Some(&[]);
    }
    args.get(i..)
}

/// What a wrapper does besides running its command.
fn check_wrapper_side_effects(name: &str, args: &[String]) -> Result<(), Reason> {
    match name {
        "nohup" => Err("`nohup` may write `nohup.out`".into()),
        "time"
            if args
                .iter()
                .any(|a| a == "-o" || a == "-a" || a.starts_with("--output")) =>
        {
            Err("`time -o` writes a file".into())
        }
        "env" => {
            let mut rest = args.iter();
            while let Some(arg) = rest.next() {
                if ["-u", "--unset", "-C", "--chdir"].contains(&arg.as_str()) {
                    rest.next();
                } else if arg.contains('=') && !arg.starts_with('-') {
                    if !is_safe_assignment(arg, false) {
                        let name = arg.split('=').next().unwrap_or(arg);
                        return Err(format!("sets `{name}`, which can change what runs"));
                    }
                } else if !arg.starts_with('-') {
                    break;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_command_lookup(args: &[String]) -> Result<(), Reason> {
    if args.iter().any(|a| a == "-v" || a == "-V") {
        Ok(())
    } else {
        Err("`command` runs another command".into())
    }
}

fn check_hostname(args: &[String]) -> Result<(), Reason> {
    let reading = ["-f", "-s", "-i", "-I", "-d", "-A", "--fqdn", "--short"];
    if args.iter().all(|a| reading.contains(&a.as_str())) {
        Ok(())
    } else {
        Err("`hostname` with arguments can change the host name".into())
    }
}

/// Refuse any argument starting with one of `flags`; a one-letter flag is
/// also refused inside a cluster of short options (`-ao` holds `-o`).
fn refuse_flags(cmd: &str, args: &[String], flags: &[&str], what: &str) -> Result<(), Reason> {
    for arg in args {
        let cluster = arg.strip_prefix('-').filter(|c| !c.starts_with('-'));
        let refused = flags.iter().find(|flag| {
            arg.starts_with(**flag)
                || (flag.len() == 2 && cluster.is_some_and(|c| c.contains(&flag[1..])))
        });
        if let Some(flag) = refused {
            return Err(format!("`{cmd} {flag}` {what}"));
        }
    }
    Ok(())
}

fn check_find(args: &[String]) -> Result<(), Reason> {
    for arg in args {
        match arg.as_str() {
            "-delete" => return Err("`find -delete` removes files".into()),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                return Err(format!("`find {arg}` runs other commands"));
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return Err(format!("`find {arg}` writes a file"));
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_sort(args: &[String]) -> Result<(), Reason> {
    for arg in args {
        if arg.starts_with("--output") || arg == "-o" {
            return Err("`sort -o` writes a file".into());
        }
        if arg.starts_with("--compress-program") {
            return Err("`sort --compress-program` runs another program".into());
        }
        if let Some(cluster) = arg.strip_prefix('-')
            && !cluster.starts_with('-')
        {
            for c in cluster.chars() {
                if "ktST".contains(c) {
                    break; // the rest is that option's value
                }
                if c == 'o' {
                    return Err("`sort -o` writes a file".into());
                }
            }
        }
    }
    Ok(())
}

/// `uniq IN OUT` writes OUT.
fn check_uniq(args: &[String]) -> Result<(), Reason> {
    let mut positional = 0;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if ["-f", "-s", "-w"].contains(&arg.as_str()) {
            i += 2;
            continue;
        }
        if !arg.starts_with('-') || arg == "-" {
            positional += 1;
        }
        i += 1;
    }
    if positional > 1 {
        Err("`uniq` with two file names writes the second".into())
    } else {
        Ok(())
    }
}

fn check_sed(args: &[String]) -> Result<(), Reason> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut explicit_script = false;
    let mut first_operand: Option<&str> = None;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            if first_operand.is_none() {
                first_operand = args.get(i).map(String::as_str);
            }
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if long.starts_with("in-place") {
                return Err("`sed -i` edits files in place".into());
            }
            if let Some(script) = long.strip_prefix("expression=") {
                scripts.push(script);
                explicit_script = true;
            } else if long == "expression" {
                scripts.push(args.get(i).map(String::as_str).unwrap_or(""));
                explicit_script = true;
                i += 1;
            } else if long.starts_with("file") {
                return Err("`sed -f` runs a script that cannot be checked".into());
            }
            continue;
        }
        if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (at, c) in cluster.char_indices() {
                match c {
                    'i' => return Err("`sed -i` edits files in place".into()),
                    'f' => return Err("`sed -f` runs a script that cannot be checked".into()),
                    'e' | 'l' => {
                        let rest = &cluster[at + 1..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).map(String::as_str).unwrap_or("")
                        } else {
                            rest
                        };
                        if c == 'e' {
                            scripts.push(value);
                            explicit_script = true;
                        }
                        break;
                    }
                    _ => {}
                }
            }
            continue;
        }
        if first_operand.is_none() {
            first_operand = Some(arg);
        }
    }
    if !explicit_script && let Some(script) = first_operand {
        scripts.push(script);
    }
    for script in scripts {
        super::sed_script::check(script)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::shell;

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
            ("awk '{print}' f", "`awk` is not on the read-only list"),
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
