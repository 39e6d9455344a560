//! The security inspector's look at `rm`: the filesystem root, the home
//! directory and system directories in every spelling that reaches them.

use std::path::Path;

use super::findings::Findings;
use super::targets::{is_critical, is_recursive_flag, system_write};
use crate::permission::paths;

pub(super) fn inspect_rm(
    args: &[String],
    literal: &[bool],
    cwd: &Path,
    home: Option<&Path>,
    findings: &mut Findings,
) {
    if args.iter().any(|a| a == "--no-preserve-root") {
        findings.block(
            "blocked: `rm --no-preserve-root` exists only to delete the whole filesystem.".into(),
        );
    }
    let recursive = args.iter().any(|a| is_recursive_flag(a, true));
    for (arg, lit) in args.iter().zip(literal) {
        if recursive && let Some(what) = sweeping_target(arg, *lit) {
            findings.block(format!(
                "blocked: `rm -r {arg}` would delete {what}. Remove specific paths inside the \
                 workspace instead."
            ));
            continue;
        }
        if !lit && let Some(var) = empty_var_root(arg) {
            if recursive {
                findings.block(format!(
                    "blocked: `rm -r {arg}` removes from the filesystem root if `{var}` is empty \
                     or unset. Use a literal path inside the workspace."
                ));
            }
            continue;
        }
        // `dir/*` removes what `dir` holds: judge it as `dir`.
        let stripped = arg
            .strip_suffix("/*")
            .or(if arg == "*" { Some(".") } else { None });
        let word = stripped
            .map(|s| if s.is_empty() { "/" } else { s })
            .unwrap_or(arg);
        if *lit && word.starts_with('-') {
            continue;
        }
        let Some(path) = paths::resolve_word(word, *lit, cwd, home) else {
            continue;
        };
        if recursive && is_critical(&path, home) {
            let what = if path == Path::new("/") {
                "the whole filesystem".to_string()
            } else if home.is_some_and(|h| path == paths::normalize(h)) {
                "your home directory".to_string()
            } else {
                format!("the system directory `{}`", path.display())
            };
            findings.block(format!(
                "blocked: `rm -r {arg}` would delete {what}. Remove specific paths inside the \
                 workspace instead."
            ));
        } else if let Some(message) = system_write(&path, "`rm` deletes") {
            findings.block(message);
        }
    }
}

/// A target that sweeps the filesystem root or the home directory in a
/// spelling the path resolver does not follow: a glob directly under `/`
/// (`/*`, `/?*`, `/.*`), or the home directory through any expansion
/// (`${HOME:-}`, `$HOME*`, `~/.*`, `~user`). What it reaches, for messages.
pub(super) fn sweeping_target(arg: &str, literal: bool) -> Option<&'static str> {
    let text = if literal {
        arg.to_string()
    } else {
        arg.replace(['"', '\''], "")
    };
    const GLOB: [char; 3] = ['*', '?', '['];
    if let Some(under_root) = text.strip_prefix('/') {
        let first = under_root
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        if first.contains(GLOB) {
            return Some("everything under `/`, the whole filesystem");
        }
    }
    if literal {
        return None;
    }
    let mut whose = "your home directory";
    let rest = if let Some(rest) = text.strip_prefix('~') {
        // `~` or `~user`: some home directory.
        let after_user =
            rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || "._-".contains(c));
        if after_user.len() != rest.len() {
            whose = "a home directory";
        }
        after_user
    } else if let Some(rest) = text.strip_prefix("${HOME") {
        // `${HOME}`, `${HOME:-}`, `${HOME%/}`, ...
        &rest[rest.find('}')? + 1..]
    } else if let Some(rest) = text.strip_prefix("$HOME") {
        if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            return None; // `$HOMEDIR`
        }
        rest
    } else {
        return None;
    };
    let rest = rest.trim_matches('/');
    let sweeping =
        rest.is_empty() || (rest.contains(GLOB) && rest.chars().all(|c| "*?[]!.^".contains(c)));
    sweeping.then_some(whose)
}

/// `$X/` or `"${X}"/*`: the name of `X`.
fn empty_var_root(word: &str) -> Option<String> {
    let text = word.replace('"', "");
    let rest = text.strip_prefix('$')?;
    let (name, after) = if let Some(braced) = rest.strip_prefix('{') {
        let end = braced.find('}')?;
        (&braced[..end], &braced[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    let valid = !name.is_empty() && name != "HOME";
    (valid && (after == "/" || after == "/*")).then(|| name.to_string())
}
