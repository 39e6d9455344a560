//! Cautions: calls that are not dangerous enough to block but must be
//! confirmed by the person even in auto mode, where nothing else asks.

use std::path::Path;

use super::findings::Findings;
use super::targets::is_recursive_flag;
use crate::permission::layers::layers;
use crate::permission::paths;
use crate::permission::wrappers::basename;
use crate::shell::ShellAnalysis;

/// Recursive removal of the workspace itself (`rm -rf .` at its root,
/// `rm -rf *`, `rm -rf /path/to/workspace`).
pub fn workspace_cautions(
    analysis: &ShellAnalysis,
    cwd: &Path,
    workspace: &Path,
    home: Option<&Path>,
) -> Vec<String> {
    let workspace = paths::normalize(workspace);
    let mut out = Vec::new();
    let dirs = paths::command_dirs(analysis, cwd, home);
    for (cmd, cwd) in analysis.commands.iter().zip(&dirs) {
        let is_workspace = |word: &str, lit: bool| {
            let word = whole_directory_word(word, lit);
            paths::resolve_word(word, lit || word == ".", cwd, home).is_some_and(|p| p == workspace)
        };
        for layer in layers(&cmd.words) {
            let offset = cmd.words.len() - layer.len();
            let literal = &cmd.literal[offset..];
            match layer.first().map(|n| basename(n)) {
                Some("rm") if layer.iter().any(|a| is_recursive_flag(a, true)) => {
                    for (arg, lit) in layer.iter().zip(literal).skip(1) {
                        if *lit && arg.starts_with('-') {
                            continue;
                        }
                        if is_workspace(arg, *lit) {
                            out.push(format!("`rm -r {arg}` deletes the whole workspace"));
                        }
                    }
                }
                Some("find") if find_deletes_everything(&layer[1..]) => {
                    let starts: Vec<(&String, &bool)> = layer[1..]
                        .iter()
                        .zip(&literal[1..])
                        .take_while(|(a, _)| !a.starts_with(['-', '(', '!']))
                        .collect();
                    let whole = if starts.is_empty() {
                        is_workspace(".", true)
                    } else {
                        starts.iter().any(|(a, l)| is_workspace(a, **l))
                    };
                    if whole {
                        out.push(format!("`{}` deletes the whole workspace", layer.join(" ")));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The directory a removal of `word` empties: `dir/*`, `*`, `.*`,
/// `.[!.]*`, `"$PWD"`, `$(pwd)` and the like stand for the directory
/// itself.
fn whole_directory_word(word: &str, literal: bool) -> &str {
    let unquoted = word.trim_matches('"');
    if !literal
        && [
            "$PWD",
            "${PWD}",
            "$(pwd)",
            "`pwd`",
            "$(pwd -P)",
            "$(pwd -L)",
        ]
        .iter()
        .any(|p| unquoted.trim_end_matches(['/', '*']) == *p)
    {
        return ".";
    }
    if word.chars().all(|c| "*?.[]!^".contains(c)) && word.contains(['*', '?']) {
        return ".";
    }
    word.strip_suffix("/*").unwrap_or(word)
}

/// `find … -delete` or `-exec rm -r…` with no test that narrows what it
/// matches (a name, a path, an age, a size, …): every file goes.
fn find_deletes_everything(args: &[String]) -> bool {
    const NARROWING: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-newer",
        "-anewer",
        "-cnewer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-empty",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-lname",
        "-ilname",
        "-maxdepth",
        "-prune",
        "-nouser",
        "-nogroup",
        "-newermt",
        "-used",
        "-fstype",
        "-context",
        "-readable",
        "-writable",
        "-executable",
    ];
    let deletes = args.iter().enumerate().any(|(i, a)| {
        a == "-delete"
            || (["-exec", "-execdir", "-ok", "-okdir"].contains(&a.as_str())
                && args.get(i + 1).is_some_and(|c| basename(c) == "rm"))
    });
    deletes && !args.iter().any(|a| NARROWING.contains(&a.as_str()))
}

pub fn inspect_git_push(args: &[String], findings: &mut Findings) {
    let Some(at) = args.iter().position(|a| a == "push") else {
        return;
    };
    let rest = &args[at + 1..];
    let force = rest.iter().any(|a| {
        a == "-f"
            || a.starts_with("--force")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
    }) || rest.iter().any(|a| a.starts_with('+'));
    if !force {
        return;
    }
    let refs: Vec<&String> = rest
        .iter()
        .filter(|a| !a.starts_with('-'))
        .skip(1)
        .collect();
    let protected = |r: &str| {
        let dest = r.rsplit(':').next().unwrap_or(r).trim_start_matches('+');
        let dest = dest.trim_start_matches("refs/heads/");
        dest == "main" || dest == "master"
    };
    if refs.is_empty() || refs.iter().any(|r| protected(r)) {
        findings.cautions.push(
            "force-pushes (possibly to `main`/`master`), rewriting history others share".into(),
        );
    }
}
