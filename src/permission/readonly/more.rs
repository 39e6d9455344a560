//! Commands smart mode used to ask about needlessly (issue 10, category
//! 8): listing archives, `xxd`, `awk` programs that only print, a
//! program's `--version`, `bash -c` of a read-only script, a pager at the
//! end of a pipe, and harmless variables before a read-only command.

use super::Reason;
use crate::permission::programs::{AWKS, SHELLS, family};

/// Programs with no option that writes a file or runs another program.
#[rustfmt::skip]
pub const PLAIN_MORE: &[&str] = &[
    "numfmt", "free", "uptime", "groups", "cal", "ncal", "whereis", "whatis", "bc", "users",
    "tty", "locale", "arch", "getconf", "logname", "lscpu", "lsblk", "lsmem", "vmstat",
    "factor", "tsort", "sum", "expr", "fmt", "pr", "look", "nm", "size", "readelf", "md5",
];

/// Names that must never run as "a program's --version": they run code
/// of the argument or change the shell.
const NOT_A_PROGRAM: &[&str] = &[
    "eval",
    "exec",
    "source",
    ".",
    "trap",
    "command",
    "builtin",
    "alias",
    "set",
    "shopt",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unset",
    "enable",
    "cd",
    "pushd",
    "popd",
    "let",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "hash",
    "ulimit",
    "umask",
    "kill",
    "exit",
    "logout",
    "return",
    "wait",
    "fg",
    "bg",
    "disown",
    "suspend",
    "times",
    "coproc",
    "complete",
];

/// Prefixes of variables read by the programs they name.
const DANGEROUS_PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "GIT_",
    "BASH",
    "PYTHON",
    "PERL",
    "RUBY",
    "NODE_",
    "NPM_",
    "JAVA",
    "_JAVA",
    "JDK_",
    "GEM_",
    "BUNDLE",
    "CARGO",
    "RUST",
    "GO",
    "LUA",
    "TCL",
    "XDG_",
    "SSH_",
    "GNUPG",
    "GPG",
    "LESS",
    "MAN",
    "SYSTEMD_",
    "GLIBC_",
    "MALLOC_",
    "AWK",
    "GCONV",
    "PS",
    "SUDO",
    "KRB5",
    "CURL",
    "WGET",
    "HTTP",
    "HTTPS",
    "ALL_PROXY",
    "NO_PROXY",
    "FTP",
    "DOCKER",
];
/// Words in names of variables that point at code or configuration.
const DANGEROUS_PARTS: &[&str] = &[
    "PATH", "OPT", "CONFIG", "RC", "DIR", "HOME", "LIB", "PRELOAD", "COMMAND", "CMD", "EXEC",
    "PAGER", "EDITOR", "VISUAL", "SHELL", "ENV", "PROG", "HOOK", "PLUGIN", "LOAD", "TUNABLE",
    "DEFAULT", "FILE", "SOCK", "PROXY", "FLAGS", "BROWSER", "TERMINFO", "ASKPASS",
];
/// Single variables that change what a program runs or reads.
const DANGEROUS_EXACT: &[&str] = &[
    "IFS",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "AS",
    "NM",
    "FC",
    "MAKE",
    "GZIP",
    "BZIP",
    "BZIP2",
    "UNZIP",
    "ZIPOPT",
    "XZ_OPT",
    "TAR_OPTIONS",
    "POSIXLY_CORRECT",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "RES_OPTIONS",
    "CDPATH",
    "GLOBIGNORE",
    "TMOUT",
    "PROMPT_COMMAND",
    "ENV",
    "TZDIR",
    "NLSPATH",
    "LOCPATH",
    "TMPDIR",
];

/// Variables that change what a program runs, loads or reads as
/// configuration: never harmless before a read-only command.
fn dangerous_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    DANGEROUS_EXACT.contains(&upper.as_str())
        || DANGEROUS_PREFIXES.iter().any(|p| upper.starts_with(p))
        || DANGEROUS_PARTS.iter().any(|p| upper.contains(p))
}

/// Whether `NAME=value` before a read-only command leaves it read-only:
/// a plain name no program reads as code, configuration or a search path.
pub fn harmless_prefix_variable(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !dangerous_variable(name)
}

/// `prog --version`: prints and exits for every program worth the name.
pub fn is_version_query(name: &str, args: &[String]) -> bool {
    args.len() == 1
        && args[0] == "--version"
        && !name.contains('/')
        && !NOT_A_PROGRAM.contains(&name)
}

/// `tar -t`/`--list` of an archive, with no option that runs a program
/// or reaches another host.
pub fn check_tar(args: &[String]) -> Result<(), Reason> {
    let mut lists = false;
    for (i, arg) in args.iter().enumerate() {
        let bundle = i == 0 && !arg.starts_with('-');
        if arg == "--list" || (bundle && arg.contains('t')) {
            lists = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            const READING: &[&str] = &[
                "list",
                "file",
                "verbose",
                "gzip",
                "gunzip",
                "bzip2",
                "xz",
                "zstd",
                "lzma",
                "auto-compress",
                "numeric-owner",
                "wildcards",
                "no-wildcards",
                "anchored",
                "exclude",
                "quiet",
                "utc",
                "full-time",
                "force-local",
                "null",
                "ignore-case",
            ];
            let key = long.split('=').next().unwrap_or(long);
            if !READING.contains(&key) {
                return Err(format!(
                    "`tar --{key}` is not among the options judged read-only"
                ));
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            if cluster.contains('t') {
                lists = true;
            }
            if let Some(c) = cluster.chars().find(|c| !"tvfzjJaZwO".contains(*c)) {
                return Err(format!(
                    "`tar -{c}` is not among the options judged read-only"
                ));
            }
        }
        // A remote archive (`host:file`) runs rsh/ssh.
        if !arg.starts_with('-') && arg.contains(':') && !arg.starts_with('/') {
            return Err(format!("`tar` would reach `{arg}` over the network"));
        }
    }
    if lists {
        Ok(())
    } else {
        Err("`tar` without `-t` extracts or creates files".into())
    }
}

/// `unzip -l`/`-v`/`-t`/`-Z`/`-p`: lists, tests or prints; writes nothing.
pub fn check_unzip(args: &[String]) -> Result<(), Reason> {
    let first = args.first().map(String::as_str).unwrap_or("");
    let listing = first.strip_prefix('-').is_some_and(|c| {
        c.chars().any(|c| "lvtZp".contains(c)) && c.chars().all(|c| "lvtZpqz".contains(c))
    });
    if listing && !args.iter().any(|a| a == "-d" || a.starts_with("-d")) {
        Ok(())
    } else {
        Err("`unzip` without `-l`, `-v`, `-t` or `-p` extracts files".into())
    }
}

/// `xxd` writes its second operand, and `-r` turns a dump back into bytes.
pub fn check_xxd(args: &[String]) -> Result<(), Reason> {
    let operands = args.iter().filter(|a| !a.starts_with('-')).count();
    let takes_value = ["-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-len", "-seek"];
    let values = args
        .iter()
        .filter(|a| takes_value.contains(&a.as_str()))
        .count();
    if operands.saturating_sub(values) <= 1 {
        Ok(())
    } else {
        Err("`xxd` with two files writes the second".into())
    }
}

/// A pager fed by a pipe prints its input, as `cat` would, when its output
/// is no terminal (the bash tool also drops a pager at the end of a pipe).
/// Only flags that change the display are accepted: `-o` logs to a file,
/// `+cmd` and `-p` run pager commands, `-k` loads key bindings.
pub fn check_pager(args: &[String]) -> Result<(), Reason> {
    let harmless = |a: &String| {
        a.strip_prefix('-')
            .is_some_and(|c| !c.is_empty() && c.chars().all(|c| "RrSNFXKiIMmEeJQqsw~".contains(c)))
    };
    if args.iter().all(harmless) {
        Ok(())
    } else {
        Err("a pager with files or options is judged only as the end of a pipe".into())
    }
}

/// An awk program that neither runs commands nor writes files: no
/// `system()`, no pipes or `|&`, no `getline` (which also reads named
/// files), no output redirection `print > f`, no network (`/inet/`), and
/// given inline (not `-f`, no gawk extensions).
pub fn check_awk(args: &[String], literal: &[bool]) -> Result<(), Reason> {
    let refused = Err("the awk program may run commands or write files".to_string());
    if !literal.iter().all(|l| *l) {
        return Err("the awk program is only known when it runs".into());
    }
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-F" | "-v" => i += 2,
            a if a.starts_with("-F") || a.starts_with("-v") => i += 1,
            "--" => {
                i += 1;
                break;
            }
            a if a.starts_with('-') => return refused,
            _ => break,
        }
    }
    let Some(program) = args.get(i) else {
        return refused;
    };
    // Assignments `-v x=…` may not hide code either.
    let code = strip_strings(program);
    let writes = code.contains('>') && print_redirects(&code);
    let runs = [
        "system", "getline", "|", "/inet", "@", "close", "fflush", "ENVIRON", "PROCINFO",
    ]
    .iter()
    .any(|w| code.contains(w));
    if writes || runs {
        return refused;
    }
    Ok(())
}

/// The program text with string literals emptied (`"a|b"` → `""`).
fn strip_strings(program: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut chars = program.chars();
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => {
                in_string = false;
                out.push('"');
            }
            (true, _) => {}
            (false, '"') => {
                in_string = true;
                out.push('"');
            }
            (false, _) => out.push(c),
        }
    }
    out
}

/// Whether a `>` belongs to a `print`/`printf` statement (a redirection)
/// rather than a comparison in a pattern or condition.
fn print_redirects(code: &str) -> bool {
    code.split([';', '{', '}', '\n']).any(|statement| {
        let s = statement.trim_start();
        (s.starts_with("print") || s.starts_with("printf")) && s.contains('>')
    })
}

/// `sh -c 'script'`: the script, when the shell gets only harmless
/// options, so the script can be judged like any command.
pub fn shell_script<'a>(name: &str, args: &'a [String]) -> Option<&'a str> {
    if !SHELLS.contains(&family(name)) {
        return None;
    }
    let mut i = 0;
    let mut has_c = false;
    while let Some(arg) = args.get(i) {
        let Some(cluster) = arg.strip_prefix('-') else {
            break;
        };
        if cluster.is_empty() || cluster.starts_with('-') {
            return None;
        }
        if !cluster.chars().all(|c| "ceuxo".contains(c)) {
            return None;
        }
        has_c |= cluster.contains('c');
        i += if cluster.contains('o') {
            if args
                .get(i + 1)
                .is_some_and(|o| o == "pipefail" || o == "errexit" || o == "nounset")
            {
                2
            } else {
                return None;
            }
        } else {
            1
        };
    }
    // `sh -c script name args…`: extra words only set `$0`, `$1`, ….
    if has_c {
        args.get(i).map(String::as_str)
    } else {
        None
    }
}

/// Whether `name` is an awk.
pub fn is_awk(name: &str) -> bool {
    AWKS.contains(&family(name))
}
