//! What a command's arguments point at: its operands as paths, the paths it
//! writes, and whether such a path is critical or inside a system directory.

use std::path::{Path, PathBuf};

use crate::permission::paths::{self, CRITICAL_DIRS};

/// `-R`, `--recursive`, and for `rm` also `-r`, in a cluster of short options.
pub(super) fn is_recursive_flag(arg: &str, rm: bool) -> bool {
    if arg == "--recursive" {
        return true;
    }
    match arg.strip_prefix('-') {
        Some(cluster) if !cluster.starts_with('-') => {
            cluster.contains('R') || (rm && cluster.contains('r'))
        }
        _ => false,
    }
}

/// Operands (non-option arguments) that resolve to paths.
pub(super) fn operands(
    args: &[String],
    literal: &[bool],
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut options_done = false;
    for (arg, lit) in args.iter().zip(literal) {
        if !options_done && arg == "--" {
            options_done = true;
            continue;
        }
        if !options_done && *lit && arg.starts_with('-') {
            continue;
        }
        if let Some(path) = paths::resolve_word(arg, *lit, cwd, home) {
            out.push(path);
        }
    }
    out
}

/// The root, a top-level system directory or the home directory itself.
pub(super) fn is_critical(path: &Path, home: Option<&Path>) -> bool {
    CRITICAL_DIRS.iter().any(|d| path == Path::new(d))
        || paths::SYSTEM_DIRS.iter().any(|d| path == Path::new(d))
        || home.is_some_and(|h| path == paths::normalize(h))
}

/// Paths a command writes to (beyond redirections).
pub(super) fn write_targets(
    name: &str,
    args: &[String],
    literal: &[bool],
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let all = || operands(args, literal, cwd, home);
    match name {
        "touch" | "mkdir" | "rmdir" | "truncate" | "shred" | "unlink" | "tee" => all(),
        "sed"
            if args
                .iter()
                .any(|a| a.starts_with("-i") || a.starts_with("--in-place")) =>
        {
            all()
        }
        "cp" | "mv" | "install" | "rsync" | "ln" => {
            for (i, arg) in args.iter().enumerate() {
                let dir = if arg == "-t" {
                    args.get(i + 1).map(String::as_str)
                } else {
                    arg.strip_prefix("--target-directory=")
                };
                if let Some(dir) = dir {
                    return paths::resolve_word(dir, true, cwd, home)
                        .into_iter()
                        .collect();
                }
            }
            let ops = all();
            if ops.len() >= 2 {
                ops.last().cloned().into_iter().collect()
            } else {
                Vec::new()
            }
        }
        "curl" | "wget" => {
            let mut out = Vec::new();
            for (i, arg) in args.iter().enumerate() {
                let value = match arg.as_str() {
                    "-o" | "--output" | "-O" | "--output-document" | "-P" => {
                        args.get(i + 1).map(String::as_str)
                    }
                    a => a
                        .strip_prefix("--output-document=")
                        .or(a.strip_prefix("--output=")),
                };
                if let Some(path) = value.and_then(|v| paths::resolve_word(v, true, cwd, home)) {
                    out.push(path);
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The block message for `action` on a path inside a system directory.
pub(super) fn system_write(path: &Path, action: &str) -> Option<String> {
    let dir = paths::system_dir_of(path)?;
    if dir == "/dev" {
        return Some(format!(
            "blocked: {action} the device `{}`; writing to devices can destroy disks.",
            path.display()
        ));
    }
    Some(format!(
        "blocked: {action} `{}`, inside the system directory `{dir}`. cairn never changes \
         system files; keep changes inside the workspace.",
        path.display()
    ))
}
