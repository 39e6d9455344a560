//! Cautions: calls that are not dangerous enough to block but must be
//! confirmed by the person even in auto mode, where nothing else asks.

use std::path::Path;

use super::paths;
use super::security::{Findings, is_recursive_flag, layers};
use super::wrappers::basename;
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
    for cmd in &analysis.commands {
        for layer in layers(&cmd.words) {
            let offset = cmd.words.len() - layer.len();
            let literal = &cmd.literal[offset..];
            if layer.first().map(|n| basename(n)) != Some("rm")
                || !layer.iter().any(|a| is_recursive_flag(a, true))
            {
                continue;
            }
            for (arg, lit) in layer.iter().zip(literal).skip(1) {
                let word = if arg == "*" {
                    "."
                } else {
                    arg.strip_suffix("/*").unwrap_or(arg)
                };
                if *lit && word.starts_with('-') {
                    continue;
                }
                if paths::resolve_word(word, *lit, cwd, home).is_some_and(|p| p == workspace) {
                    out.push(format!("`rm -r {arg}` deletes the whole workspace"));
                }
            }
        }
    }
    out
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
