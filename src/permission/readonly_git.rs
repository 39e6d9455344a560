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
    "ls-remote",
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
    for arg in rest {
        if arg.starts_with("--output")
            || arg.starts_with("-O")
            || arg.starts_with("--open-files-in-pager")
        {
            return Err(format!("`git {sub} {arg}` writes a file or runs a pager"));
        }
        if arg.starts_with("--ext-diff") || arg.starts_with("--exec") {
            return Err(format!("`git {sub} {arg}` runs another program"));
        }
    }
    let sub = sub.as_str();
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
