//! The security inspector's look at commands that run other code: shells
//! and interpreters fed by a download, and scripts handed to `sh -c`,
//! `eval`, here-documents or `echo … | sh`, which are inspected in turn.

use std::path::Path;

use super::catastrophes::NET_CLIENTS;
use super::findings::Findings;
use super::inspect_scripts;
use super::stdin_feed::Fed;
use crate::permission::layers::layers;
use crate::permission::nested::Script;
use crate::permission::programs::{AWKS, DOWNLOADERS, INTERPRETERS, SHELLS, family};
use crate::permission::wrappers::basename;
use crate::shell::{ShellAnalysis, SimpleCommand};

/// Whether `cmd`, under any wrappers, downloads (`curl`, `/usr/bin/wget`,
/// `command curl`, `busybox wget`).
fn downloads(cmd: &SimpleCommand) -> bool {
    layers(&cmd.words).iter().any(|layer| {
        let Some(name) = layer.first().map(|n| basename(n)) else {
            return false;
        };
        let args = &layer[1..];
        let connects = match family(name) {
            "openssl" => args.iter().any(|a| a == "s_client"),
            other => NET_CLIENTS.contains(&other),
        };
        DOWNLOADERS.contains(&name) || connects || (is_interpreter(name) && fetches_over_http(args))
    })
}

/// Inline interpreter code that uses an HTTP client (`urllib`,
/// `requests`, `LWP`, `Net::HTTP`, `fetch(`, `file_get_contents('http`).
fn fetches_over_http(args: &[String]) -> bool {
    const CLIENTS: &[&str] = &[
        "urllib",
        "requests",
        "http.client",
        "urlopen",
        "httpx",
        "lwp",
        "http::tiny",
        "net/http",
        "net::http",
        "open-uri",
        "fetch(",
        "https.get",
        "http.get",
        "axios",
        "file_get_contents('http",
        "file_get_contents(\"http",
        "curl_exec",
        "io::socket",
        "invoke-webrequest",
        "downloadstring",
    ];
    let code = args.join(" ").to_ascii_lowercase();
    CLIENTS.iter().any(|c| code.contains(c))
}

/// `sed` whose script may run commands, `make -f -`: programs that run
/// what they read on standard input.
fn runs_its_input(name: &str, args: &[String]) -> bool {
    match name {
        "sed" | "gsed" => crate::permission::readonly::check_sed(args).is_err(),
        "make" | "gmake" | "bmake" => args.iter().enumerate().any(|(i, a)| {
            let value = match a.as_str() {
                "-f" | "--file" | "--makefile" => args.get(i + 1).map(String::as_str),
                a => a
                    .strip_prefix("--file=")
                    .or(a.strip_prefix("--makefile="))
                    .or(a.strip_prefix("-f")),
            };
            matches!(value, Some("-" | "/dev/stdin"))
        }),
        _ => false,
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn inspect_interpreter(
    analysis: &ShellAnalysis,
    index: usize,
    name: &str,
    args: &[String],
    args_literal: &[bool],
    cwd: &Path,
    home: Option<&Path>,
    nesting: usize,
    findings: &mut Findings,
) {
    let shell_like = SHELLS.contains(&family(name));
    let awk_running = AWKS.contains(&family(name)) && awk_may_run_commands(args, args_literal);
    let schedules = matches!(name, "at" | "batch" | "crontab");
    if !(shell_like
        || is_interpreter(name)
        || awk_running
        || schedules
        || runs_its_input(name, args))
    {
        return;
    }
    let cmd = &analysis.commands[index];
    // Downloads feeding this command through a pipe or a substitution.
    let fed_by_download = analysis.commands.iter().enumerate().any(|(i, other)| {
        let piped =
            matches!((other.pipe, cmd.pipe), (Some((p, s)), Some((q, t))) if p == q && s < t);
        downloads(other) && (piped || descends_from(analysis, i, index))
    });
    if fed_by_download {
        findings.block(format!(
            "blocked: this runs downloaded code with `{name}` without anyone reading it first. \
             Download the file, show it to the user, and let them decide."
        ));
    } else if analysis.commands.iter().any(downloads) {
        findings.cautions.push(format!(
            "downloads something and runs `{name}` in the same command"
        ));
    }
    let fed = match script_source(name, args, shell_like) {
        Some(Source::Stdin) => super::stdin_feed::fed(analysis, index, 0),
        Some(Source::Substitution) => substitution_output(analysis, index),
        None => return,
    };
    let crontab = name == "crontab";
    match fed {
        Fed::Text(text) => {
            let text = if crontab {
                crontab_commands(&text)
            } else {
                text
            };
            let script = Script {
                text,
                literal: true,
                origin: format!("the script fed to `{name}`"),
            };
            inspect_scripts(&[script], cwd, home, nesting, findings);
        }
        Fed::Undecodable(what) => findings
            .cautions
            .push(format!("`{name}` runs {what}, which cairn cannot read")),
        Fed::Unknown => {}
    }
}

/// Where a shell (or `source`, `at`, `crontab`) takes its script from
/// when it is neither an argument nor a named file.
enum Source {
    Stdin,
    /// `bash <(…)`, `. <(…)`: the output of a process substitution.
    Substitution,
}

fn script_source(name: &str, args: &[String], shell_like: bool) -> Option<Source> {
    let first = args
        .iter()
        .find(|a| !a.starts_with(['-', '+']) || *a == "-");
    let stdin_file = |a: &str| matches!(a, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    let from_first = |first: Option<&String>| match first.map(String::as_str) {
        None => Some(Source::Stdin),
        Some(a) if stdin_file(a) => Some(Source::Stdin),
        Some("<(…)") => Some(Source::Substitution),
        Some(_) => None,
    };
    let cluster_has = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    };
    match name {
        _ if shell_like => {
            if cluster_has('c') {
                None
            } else if cluster_has('s') {
                Some(Source::Stdin)
            } else {
                from_first(first)
            }
        }
        "source" | "." => first.and_then(|f| from_first(Some(f))),
        "at" | "batch" if !cluster_has('f') && !cluster_has('l') && !cluster_has('r') => {
            Some(Source::Stdin)
        }
        "crontab" => {
            let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            let lists = cluster_has('l') || cluster_has('r') || cluster_has('e');
            (!lists && (operands.is_empty() || operands.iter().any(|a| stdin_file(a))))
                .then_some(Source::Stdin)
        }
        _ => None,
    }
}

/// What the process substitution in command `index` prints, when it is
/// literal text (`bash <(echo '…')`).
fn substitution_output(analysis: &ShellAnalysis, index: usize) -> Fed {
    let inside: Vec<usize> = (0..analysis.commands.len())
        .filter(|i| analysis.commands[*i].parent == Some(index))
        .collect();
    match inside.as_slice() {
        [only] => match super::stdin_feed::fed(analysis, *only, 1) {
            Fed::Text(text) => Fed::Text(text),
            Fed::Undecodable(what) => Fed::Undecodable(what),
            Fed::Unknown => Fed::Unknown,
        },
        _ => Fed::Unknown,
    }
}

/// The commands of a crontab: each line without its schedule.
fn crontab_commands(table: &str) -> String {
    table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let fields = if l.starts_with('@') { 1 } else { 5 };
            l.splitn(fields + 1, char::is_whitespace)
                .nth(fields)
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&family(name)) || name.starts_with("python") || name.starts_with("pypy")
}

/// Whether an awk program can run commands (`system()`, `print | "sh"`,
/// `"cmd" | getline`, gawk's indirect `@f()`), or comes from somewhere
/// cairn cannot read (`-f file`, `--exec`, an expansion).
fn awk_may_run_commands(args: &[String], literal: &[bool]) -> bool {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if !literal.get(i).copied().unwrap_or(false) {
            return true;
        }
        if arg == "--" {
            i += 1;
            break;
        }
        if arg.starts_with("--") {
            return true; // gawk's long options include --file, --exec, --load
        }
        match arg.strip_prefix('-').filter(|c| !c.is_empty()) {
            None => break,
            Some("F" | "v") => i += 2,
            Some(c) if c.starts_with(['F', 'v']) => i += 1,
            Some(c) if c.contains(['f', 'E', 'e', 'i', 'l', 'W']) => return true,
            Some(_) => i += 1,
        }
    }
    match (args.get(i), literal.get(i)) {
        (Some(program), Some(true)) => {
            program.contains("system") || program.contains('|') || program.contains('@')
        }
        _ => true,
    }
}

/// True when command `i` runs inside a substitution held by `ancestor`.
fn descends_from(analysis: &ShellAnalysis, i: usize, ancestor: usize) -> bool {
    let mut current = analysis.commands[i].parent;
    let mut steps = 0;
    while let Some(p) = current {
        if p == ancestor {
            return true;
        }
        current = analysis.commands[p].parent;
        steps += 1;
        if steps > analysis.commands.len() {
            break;
        }
    }
    false
}
