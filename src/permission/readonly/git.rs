//! Which `git` invocations only read the repository.

/// Subcommands that read whatever their arguments (apart from the options
/// refused in `check_git`).
const READING: &[&str] = &[
    "blame",
    "cat-file",
    "count-objects",
    "describe",
    "diff",
    "grep",
    "log",
    "ls-files",
    "ls-tree",
    "merge-base",
    "name-rev",
    "rev-list",
    "rev-parse",
    "shortlog",
    "show",
    "show-ref",
    "status",
    "version",
    "whatchanged",
];

/// Ok when this `git` call only reads.
pub fn check_git(args: &[String]) -> Result<(), String> {
    let mut i = 0;
    // Global options before the subcommand.
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "--no-pager" | "--no-optional-locks" | "-P" | "--bare" => i += 1,
            "-C" => i += 2,
            a if a.starts_with('-') => {
                return Err(format!(
                    "`git {a}` can change what git runs or where it writes"
                ));
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    let rest = &args[i + 1..];
    check_options(sub, rest)?;
    let sub = sub.as_str();
    if sub == "ls-remote" {
        return Err("`git ls-remote` talks to the network".into());
    }
    if READING.contains(&sub) {
        return Ok(());
    }
    let verdict = match sub {
        "branch" => listing_only(
            rest,
            &["-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u"],
            true,
        ),
        "tag" => {
            let lists = rest.iter().any(|a| a == "-l" || a == "--list");
            let only_flags = rest.iter().all(|a| a.starts_with('-'));
            let writing = rest.iter().any(|a| {
                [
                    "-a", "-s", "-d", "-f", "-m", "-F", "-u", "--delete", "--force",
                ]
                .contains(&a.as_str())
            });
            !writing && (lists || only_flags)
        }
        "remote" => {
            rest.is_empty()
                || rest.iter().all(|a| a == "-v" || a == "--verbose")
                || rest.first().is_some_and(|a| a == "get-url")
        }
        "stash" => rest.first().is_some_and(|a| a == "list" || a == "show"),
        "reflog" => rest.is_empty() || rest.first().is_some_and(|a| a == "show"),
        "config" => {
            rest.iter().any(|a| {
                ["--get", "--get-all", "--get-regexp", "--list", "-l"].contains(&a.as_str())
            }) && !rest.iter().any(|a| {
                [
                    "--add",
                    "--unset",
                    "--unset-all",
                    "--replace-all",
                    "-e",
                    "--edit",
                ]
                .contains(&a.as_str())
            })
        }
        "worktree" => rest.first().is_some_and(|a| a == "list"),
        _ => false,
    };
    if verdict {
        Ok(())
    } else {
        Err(format!("`git {sub}` may change the repository"))
    }
}

/// Long options of reading subcommands that write files or run programs.
/// git takes any unambiguous prefix of a long option (`--open=vim`), so an
/// argument that is a prefix of one of these, or starts with one, asks.
const DANGEROUS_LONG: &[&str] = &[
    "output",
    "open-files-in-pager",
    "ext-diff",
    "textconv",
    "exec",
    "upload-pack",
    "receive-pack",
    "pager",
];

/// Refuse options of a reading subcommand that write or run programs:
/// the long ones above (abbreviated too), `-O` (`git grep`'s pager,
/// anywhere in a cluster such as `-nO'rm -rf x'`), `-u` of `ls-remote`
/// (`--upload-pack`), and `ls-remote` remotes through a transport helper
/// (`ext::cmd`).
fn check_options(sub: &str, rest: &[String]) -> Result<(), String> {
    // Also after `--`: `git ls-remote -- ext::cmd` still reaches the helper.
    for arg in rest.iter().filter(|a| *a != "--") {
        if let Some(body) = arg.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or(body);
            if let Some(long) = DANGEROUS_LONG
                .iter()
                .find(|long| long.starts_with(name) || name.starts_with(**long))
            {
                return Err(format!(
                    "`git {sub} {arg}` (`--{long}`) writes a file or runs another program"
                ));
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            if cluster.contains('O') {
                return Err(format!("`git {sub} {arg}` (`-O`) runs a pager"));
            }
            if sub == "ls-remote" && cluster.contains('u') {
                return Err(format!(
                    "`git ls-remote {arg}` (`-u`, `--upload-pack`) runs another program"
                ));
            }
        } else if sub == "ls-remote" && arg.contains("::") {
            return Err(format!(
                "`git ls-remote {arg}` reaches a remote through a helper program"
            ));
        }
    }
    Ok(())
}

/// `git branch`: listing unless a writing flag or, without `--list`, a
/// branch name is given.
fn listing_only(rest: &[String], writing: &[&str], names_create: bool) -> bool {
    let lists = rest.iter().any(|a| a == "--list" || a == "-l");
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        let a = arg.as_str();
        if writing.contains(&a)
            || a.starts_with("--delete")
            || a.starts_with("--move")
            || a.starts_with("--copy")
            || a.starts_with("--set-upstream")
            || a.starts_with("--unset-upstream")
            || a.starts_with("--edit-description")
            || a == "--force"
        {
            return false;
        }
        if [
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "--sort",
            "--format",
        ]
        .contains(&a)
        {
            i += 2;
            continue;
        }
        if !a.starts_with('-') && names_create && !lists {
            return false;
        }
        i += 1;
    }
    true
}
