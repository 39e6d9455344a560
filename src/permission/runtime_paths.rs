//! Smart mode's look at reads whose files it cannot see in the text
//! (issue 10, category 7): file names only known when the command runs
//! (a command substitution, a variable set by `read`, names fed to
//! `xargs`), searches that follow symbolic links out of the workspace, and
//! globs and `--opt=value` paths that lead out through a link.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::layers::layers;
use super::paths;
use super::wrappers::basename;
use crate::shell::{ShellAnalysis, SimpleCommand};

/// Commands that print their arguments and read no file.
const PRINTING: &[&str] = &["echo", "printf", ":", "true", "false"];

/// Entries a search for escaping links may look at before it gives up
/// (and asks).
const MAX_ENTRIES: usize = 20_000;

/// Why the read-only command `index` still asks in smart mode.
pub fn reasons(a: &ShellAnalysis, index: usize, cwd: &Path, workspace: &Path) -> Vec<String> {
    let cmd = &a.commands[index];
    let mut out = Vec::new();
    let name = cmd.name().map(basename).unwrap_or("");
    if !PRINTING.contains(&name) {
        let unknown = run_time_variables(a);
        for (word, literal) in cmd.words.iter().zip(&cmd.literal).skip(1) {
            if *literal {
                continue;
            }
            let substituted = word.contains("$(") || word.contains('`');
            let from_input = unknown.iter().any(|v| names_variable(word, v));
            if substituted || from_input {
                out.push(format!(
                    "`{word}` names files only known when it runs, possibly outside the workspace"
                ));
            }
        }
    }
    if let Some(why) = xargs_reason(a, index) {
        out.push(why);
    }
    if let Some(why) = follows_links_out(cmd, cwd, workspace) {
        out.push(why);
    }
    out
}

/// Variables whose value comes from input or another command: named by
/// `read`/`mapfile`, assigned a substitution, or looped over run-time words.
fn run_time_variables(a: &ShellAnalysis) -> Vec<String> {
    let mut out = Vec::new();
    for cmd in &a.commands {
        if matches!(
            cmd.name(),
            Some("read" | "mapfile" | "readarray" | "getopts")
        ) {
            out.extend(
                cmd.words[1..]
                    .iter()
                    .filter(|w| !w.starts_with('-'))
                    .cloned(),
            );
        }
        for assignment in &cmd.assignments {
            if let Some((name, value)) = assignment.split_once('=')
                && (value.contains("$(") || value.contains('`'))
            {
                out.push(name.to_string());
            }
        }
    }
    // `for f in $(cat list)`: the loop variable is not recorded, so any
    // lower-case variable counts.
    if a.loose_words
        .iter()
        .any(|(w, lit)| !lit && (w.contains("$(") || w.contains('`')))
    {
        out.push(String::new());
    }
    out
}

/// Whether `word` expands variable `name` (empty: any lower-case one).
fn names_variable(word: &str, name: &str) -> bool {
    word.match_indices('$').any(|(at, _)| {
        let rest = word[at + 1..].trim_start_matches('{');
        let var: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            var.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        } else {
            var == name
        }
    })
}

/// `… | xargs cat`: file names read at run time. Names listed by a
/// search of the workspace (`find` without `-L`, `git ls-files`, `rg -l`,
/// `grep -l`, `fd`) or echoed literally stay inside.
fn xargs_reason(a: &ShellAnalysis, index: usize) -> Option<String> {
    let cmd = &a.commands[index];
    let inner = layers(&cmd.words)
        .into_iter()
        .find(|l| l.first().is_some_and(|n| basename(n) == "xargs"))
        .and_then(|l| super::wrappers::wrapped_command("xargs", &l[1..]))?;
    let runs = inner.first().map(|n| basename(n)).unwrap_or("echo");
    if PRINTING.contains(&runs) {
        return None;
    }
    let (pipe, stage) = cmd.pipe?;
    let feeder = a
        .commands
        .iter()
        .rfind(|c| c.pipe == Some((pipe, stage.wrapping_sub(1))) && c.parent == cmd.parent);
    if feeder.is_some_and(lists_workspace_names) {
        return None;
    }
    Some(format!(
        "`xargs` hands `{runs}` file names only known when it runs, possibly outside the \
         workspace"
    ))
}

fn lists_workspace_names(cmd: &SimpleCommand) -> bool {
    let args = &cmd.words[1.min(cmd.words.len())..];
    let leaves = |w: &String| w.starts_with('/') || w.starts_with('~') || w.contains("..");
    let literal = cmd.literal.iter().all(|l| *l);
    match cmd.name().map(basename) {
        Some("find") => {
            literal
                && !args
                    .iter()
                    .any(|a| a == "-L" || a == "-follow" || leaves(a))
        }
        Some("fd" | "fdfind") => {
            literal
                && !args
                    .iter()
                    .any(|a| a == "-L" || a == "--follow" || leaves(a))
        }
        Some("git") => args.first().is_some_and(|s| s == "ls-files" || s == "diff"),
        Some("rg" | "grep") => {
            literal
                && args
                    .iter()
                    .any(|a| a == "-l" || a == "--files" || a == "--files-with-matches")
                && !args.iter().any(leaves)
        }
        Some("echo" | "printf") => literal && !args.iter().any(leaves),
        _ => false,
    }
}

/// `grep -R`, `rg -L`, `find -L`, `du -L`, `ls -RL`, `tree -l`: a search
/// that follows symbolic links, and one of its roots holds a link out of
/// the workspace.
fn follows_links_out(cmd: &SimpleCommand, cwd: &Path, workspace: &Path) -> Option<String> {
    let name = cmd.name().map(basename)?;
    let args = &cmd.words[1..];
    let cluster_has = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    };
    let follows = match name {
        "grep" | "egrep" | "fgrep" => {
            cluster_has('R') || args.iter().any(|a| a == "--dereference-recursive")
        }
        "rg" => cluster_has('L') || args.iter().any(|a| a == "--follow"),
        "find" => args.iter().any(|a| a == "-L" || a == "-follow"),
        "du" => cluster_has('L') || args.iter().any(|a| a == "--dereference"),
        "ls" => cluster_has('R') && cluster_has('L'),
        "tree" => cluster_has('l'),
        _ => false,
    };
    if !follows {
        return None;
    }
    let real_workspace = std::fs::canonicalize(workspace).ok()?;
    let mut roots: Vec<PathBuf> = args
        .iter()
        .zip(&cmd.literal[1..])
        .filter(|(a, lit)| **lit && !a.starts_with('-'))
        .map(|(a, _)| cwd.join(a))
        .filter(|p| p.is_dir())
        .collect();
    if roots.is_empty() {
        roots.push(cwd.to_path_buf());
    }
    let mut budget = MAX_ENTRIES;
    for root in roots {
        match escaping_link_under(&root, &real_workspace, &mut budget) {
            Ok(Some(link)) => {
                return Some(format!(
                    "`{name}` follows symbolic links, and `{}` leads out of the workspace",
                    link.display()
                ));
            }
            Ok(None) => {}
            Err(()) => {
                return Some(format!(
                    "`{name}` follows symbolic links in a tree too large to check for links \
                     out of the workspace"
                ));
            }
        }
    }
    None
}

/// The first symbolic link under `dir` whose target lies outside
/// `real_workspace`; Err when the budget runs out.
fn escaping_link_under(
    dir: &Path,
    real_workspace: &Path,
    budget: &mut usize,
) -> Result<Option<PathBuf>, ()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if *budget == 0 {
                return Err(());
            }
            *budget -= 1;
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                if paths::escapes_through_link(&path, real_workspace).is_some() {
                    return Ok(Some(path));
                }
            } else if kind.is_dir() {
                stack.push(path);
            }
        }
    }
    Ok(None)
}

/// Where a literal argument leads out of the workspace through a symbolic
/// link: the word itself, the value of `--opt=value` / `key=value`, and
/// every path a glob in them matches.
pub fn link_escape(word: &str, cwd: &Path, real_workspace: &Path) -> Option<PathBuf> {
    let mut pieces: Vec<&str> = Vec::new();
    if !word.starts_with('-') && !word.is_empty() {
        pieces.push(word);
    }
    if let Some((key, value)) = word.split_once('=')
        && !key.is_empty()
        && !value.is_empty()
    {
        pieces.push(value);
    }
    for piece in pieces {
        let candidates = if piece.contains(['*', '?', '[']) {
            expand_glob(piece, cwd)
        } else {
            vec![cwd.join(piece)]
        };
        for path in candidates {
            if let Some(real) = paths::escapes_through_link(&path, real_workspace) {
                return Some(real);
            }
        }
    }
    None
}

/// The existing paths a glob matches, component by component (at most a
/// few hundred).
fn expand_glob(pattern: &str, cwd: &Path) -> Vec<PathBuf> {
    let base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    };
    let mut current = vec![base];
    for component in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for dir in &current {
            if !component.contains(['*', '?', '[']) {
                next.push(dir.join(component));
                continue;
            }
            let Ok(glob) = GlobBuilder::new(component).literal_separator(true).build() else {
                continue;
            };
            let matcher = glob.compile_matcher();
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten().take(1000) {
                let name = entry.file_name();
                let hidden = name.to_string_lossy().starts_with('.');
                if matcher.is_match(&name) && (!hidden || component.starts_with('.')) {
                    next.push(entry.path());
                }
            }
        }
        next.truncate(500);
        current = next;
    }
    current
}
