//! The security inspector's look at commands that run other code: shells
//! and interpreters fed by a download, and scripts handed to `sh -c`,
//! `eval`, here-documents or `echo … | sh`, which are inspected in turn.

use std::path::Path;

use super::security::{
    AWKS, DOWNLOADERS, Findings, INTERPRETERS, MAX_NESTING, SHELLS, family, inspect_nested, layers,
};
use super::wrappers::basename;
use crate::shell::{self, ShellAnalysis, SimpleCommand};

/// Whether `cmd`, under any wrappers, downloads (`curl`, `/usr/bin/wget`,
/// `command curl`, `busybox wget`).
fn downloads(cmd: &SimpleCommand) -> bool {
    layers(&cmd.words).iter().any(|layer| {
        layer
            .first()
            .is_some_and(|n| DOWNLOADERS.contains(&basename(n)))
    })
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
    if !(shell_like || is_interpreter(name) || awk_running) {
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
    // `sh -c "…"` and `eval "…"`: inspect the inner command too.
    let script_at = if name == "eval" {
        Some(0)
    } else if shell_like {
        args.iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
            .map(|i| i + 1)
    } else {
        None
    };
    if let Some(at) = script_at
        && at < args.len()
    {
        let parts = if name == "eval" {
            &args[at..]
        } else {
            &args[at..=at]
        };
        if args_literal[at..at + parts.len()].iter().all(|l| *l) {
            let inner = parts.join(" ");
            if nesting < MAX_NESTING {
                let analysis = shell::parse(&inner);
                inspect_nested(&inner, &analysis, cwd, home, nesting + 1, findings);
            }
        } else {
            findings.cautions.push(format!(
                "`{name}` runs a command that is only known when it runs"
            ));
        }
    } else if shell_like && !args.iter().any(|a| !a.starts_with(['-', '+'])) {
        // A shell reading its script from standard input.
        let fed = analysis
            .redirects
            .iter()
            .filter(|r| r.command == Some(index))
            .filter_map(|r| r.input.as_deref())
            .collect::<Vec<_>>();
        for script in &fed {
            if nesting < MAX_NESTING {
                let inner = shell::parse(script);
                inspect_nested(script, &inner, cwd, home, nesting + 1, findings);
            }
        }
        // `echo '…' | sh`: the echoed text is the script.
        let echoed = analysis.commands.iter().filter(|other| {
            matches!((other.pipe, cmd.pipe), (Some((p, s)), Some((q, t))) if p == q && s + 1 == t)
                && matches!(other.name().map(basename), Some("echo" | "printf"))
                && other.literal.iter().all(|l| *l)
        });
        for other in echoed {
            let text = other.words[1..]
                .iter()
                .filter(|w| !w.starts_with('-'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            if nesting < MAX_NESTING {
                let inner = shell::parse(&text);
                inspect_nested(&text, &inner, cwd, home, nesting + 1, findings);
            }
        }
    }
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
