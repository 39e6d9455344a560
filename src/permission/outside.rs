//! Which paths outside the workspace a shell command names: words,
//! assignments, redirections and `cd`, resolved against each command's own
//! working directory.

use std::path::{Path, PathBuf};

use super::paths;
use super::runtime_paths;
use crate::shell::{ShellAnalysis, SimpleCommand};

/// Judges the paths of one shell command against the workspace.
pub(super) struct Outside<'a> {
    workspace: &'a Path,
    home: Option<&'a Path>,
    real_workspace: Option<PathBuf>,
    reasons: Vec<String>,
}

impl<'a> Outside<'a> {
    pub fn new(workspace: &'a Path, home: Option<&'a Path>) -> Self {
        Self {
            workspace,
            home,
            real_workspace: std::fs::canonicalize(workspace).ok(),
            reasons: Default::default(),
        }
    }

    /// Every reason the command reaches outside the workspace, with `cwd`
    /// the shell's working directory.
    pub fn shell(mut self, a: &ShellAnalysis, cwd: &Path) -> Vec<String> {
        if !paths::is_within(cwd, self.workspace) {
            self.push(format!(
                "the shell is in `{}`, outside the workspace",
                cwd.display()
            ));
        }
        let dirs = paths::command_dirs(a, cwd, self.home);
        for (cmd, dir) in a.commands.iter().zip(&dirs) {
            self.command(cmd, dir);
            self.assignments(cmd, dir);
        }
        for (word, literal) in &a.loose_words {
            for candidate in path_candidates(word, *literal, true) {
                self.judge_word(candidate, *literal, cwd);
            }
        }
        self.redirects(a, &dirs, cwd);
        self.reasons
    }

    fn push(&mut self, reason: String) {
        self.reasons.push(reason);
    }

    fn outside(&mut self, path: &Path) {
        if !paths::is_within(path, self.workspace) && !paths::is_harmless_device(path) {
            self.push(format!("outside the workspace: {}", path.display()));
        }
    }

    /// A word that names a path: resolved and judged, or, when it is only
    /// known at run time, asked about.
    fn judge_word(&mut self, word: &str, literal: bool, cwd: &Path) {
        match paths::resolve_word(word, literal, cwd, self.home) {
            Some(path) => self.outside(&path),
            None if word.replace('"', "").starts_with('~') => {
                self.push(format!("outside the workspace: {word}"))
            }
            None => self.push(format!(
                "`{word}` is a path only known when it runs, possibly outside the workspace"
            )),
        }
    }

    fn command(&mut self, cmd: &SimpleCommand, cwd: &Path) {
        let is_cd = cmd.name() == Some("cd");
        if is_cd {
            match cmd.words.get(1).map(String::as_str) {
                None => {
                    if let Some(home) = self.home {
                        self.outside(home);
                    }
                }
                Some("-") => {
                    self.push("`cd -` goes to a directory only known when it runs".to_string())
                }
                Some(_) => {}
            }
        }
        // `echo $HOME` prints a path and reads nothing.
        let printing = matches!(cmd.name(), Some("echo" | "printf"));
        for (i, (word, literal)) in cmd.words.iter().zip(&cmd.literal).enumerate().skip(1) {
            if printing && !word.contains(['*', '?', '[']) {
                continue;
            }
            if is_cd && i == 1 {
                match paths::resolve_word(word, *literal, cwd, self.home) {
                    Some(path) => self.outside(&path),
                    None => self.push(format!(
                        "`cd {word}` goes to a directory only known when it runs"
                    )),
                }
                continue;
            }
            self.word(word, *literal, cwd);
        }
    }

    /// An argument: its path candidates, or a relative word that may still
    /// lead out through a symbolic link (so may a glob or `--opt=value`).
    fn word(&mut self, word: &str, literal: bool, cwd: &Path) {
        let candidates = path_candidates(word, literal, true);
        for candidate in &candidates {
            self.judge_word(candidate, literal, cwd);
        }
        if candidates.is_empty()
            && literal
            && let Some(real_workspace) = &self.real_workspace
            && paths::is_within(cwd, self.workspace)
            && let Some(real) = runtime_paths::link_escape(word, cwd, real_workspace)
        {
            self.push(format!("outside the workspace: {}", real.display()));
        }
    }

    fn assignments(&mut self, cmd: &SimpleCommand, cwd: &Path) {
        for assignment in &cmd.assignments {
            let Some((name, value)) = assignment.split_once('=') else {
                continue;
            };
            // `$NAME` of an upper-case variable is judged where it is used.
            if !name.chars().any(|c| c.is_ascii_lowercase()) {
                continue;
            }
            let literal = !value.contains(['$', '`', '~']);
            let value = value.replace(['"', '\''], "");
            for piece in value.split(':') {
                for candidate in path_candidates(piece, literal, false) {
                    self.judge_word(candidate, literal, cwd);
                }
            }
        }
    }

    fn redirects(&mut self, a: &ShellAnalysis, dirs: &[PathBuf], shell_cwd: &Path) {
        for redirect in &a.redirects {
            if redirect.operator == "<<" || redirect.operator == "<<<" {
                continue;
            }
            let fd_dup = redirect.operator.ends_with('&') && !redirect.writes_file;
            if fd_dup {
                continue;
            }
            let cwd = redirect
                .command
                .and_then(|i| dirs.get(i))
                .map_or(shell_cwd, |d| d.as_path());
            match paths::resolve_word(&redirect.target, redirect.target_literal, cwd, self.home) {
                Some(path) => self.outside(&path),
                None if redirect.writes_file => self.push(format!(
                    "writes to `{}`, a path only known when it runs",
                    redirect.target
                )),
                None if unresolved_path_like(&redirect.target, true) => self.push(format!(
                    "reads `{}`, a path only known when it runs",
                    redirect.target
                )),
                None => {}
            }
        }
    }
}

/// Words worth resolving as paths: absolute ones whose first directory
/// exists, home-relative ones, and relative ones climbing with `..`.
fn path_like(word: &str, literal: bool) -> bool {
    if !literal {
        return unresolved_path_like(word, true);
    }
    if word.starts_with('/') {
        // A glob (`/e*/passwd`) may name anything: treat it as a path.
        return word.contains(['*', '?', '[']) || paths::looks_like_root_path(Path::new(word));
    }
    word.starts_with('~') || word.split('/').any(|c| c == "..")
}

/// Whether a word with expansions may name a path: it holds a `/`, `..` or
/// `~`, or (`env_vars`) an upper-case variable such as `$PWD` or `$TMPDIR`.
fn unresolved_path_like(word: &str, env_vars: bool) -> bool {
    let text = word.replace('"', "");
    if text.contains('/') || text.contains("..") || text.starts_with('~') {
        return true;
    }
    env_vars
        && text.match_indices('$').any(|(at, _)| {
            let rest = text[at + 1..].trim_start_matches('{');
            rest.starts_with(|c: char| c.is_ascii_uppercase())
        })
}

/// The parts of an argument that may name paths: the word itself, the
/// value of `--opt=VALUE` and `key=VALUE` (`of=/dev/sda`), and a path glued
/// to a short option (`-f/etc/x`, `-I../inc`). `env_vars`: see
/// [`unresolved_path_like`].
fn path_candidates(word: &str, literal: bool, env_vars: bool) -> Vec<&str> {
    let mut parts = vec![word];
    if let Some((key, value)) = word.split_once('=')
        && !key.is_empty()
    {
        parts.push(value);
    } else if word.starts_with('-') && !word.starts_with("--") {
        let glued = word
            .char_indices()
            .skip(2)
            .find(|(_, c)| matches!(c, '/' | '~' | '.' | '$'))
            .map(|(at, _)| &word[at..]);
        parts.extend(glued);
    }
    let mut out: Vec<&str> = Vec::new();
    for part in parts {
        let wanted = if literal {
            path_like(part, true)
        } else {
            unresolved_path_like(part, env_vars)
        };
        if wanted && !out.contains(&part) {
            out.push(part);
        }
    }
    // `--flag=/x` and `of=/x` are judged by their value alone.
    if out.len() > 1 {
        out.retain(|p| *p != word);
    }
    out
}
