//! Families of programs the inspectors recognise by name: shells,
//! interpreters, awks, downloaders. Shared by the security inspector, the
//! read-only list, the nested-code reader and the rule suggestions.

use super::wrappers::basename;

pub(super) const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https", "xh"];
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "oksh", "yash", "posh", "ash", "fish",
    "csh", "tcsh", "rbash",
];
pub(super) const INTERPRETERS: &[&str] = &[
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "luajit",
    "deno",
    "bun",
    "source",
    ".",
    "eval",
    "python",
    "pypy",
    "tclsh",
    "wish",
    "expect",
    "Rscript",
    "julia",
    "guile",
    "jshell",
    "pwsh",
    "osascript",
    "irb",
];
pub(super) const AWKS: &[&str] = &["awk", "gawk", "mawk", "nawk", "goawk", "original-awk"];

/// A command name without a trailing version: `python3.12` → `python`,
/// `ruby3.2` → `ruby`, `bash5` → `bash`.
pub(super) fn family(name: &str) -> &str {
    let base = basename(name);
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if stem.is_empty() { base } else { stem }
}
