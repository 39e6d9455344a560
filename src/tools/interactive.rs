//! Programs that need a terminal and a person at it. cairn runs commands
//! with no terminal and stdin from /dev/null, so these would hang or fail
//! confusingly; the bash tool refuses them up front with a hint instead.

use crate::shell::{ShellAnalysis, SimpleCommand};

const EDITORS: &[&str] = &["vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "joe"];
const PAGERS: &[&str] = &["less", "more", "most", "man", "info"];
const SCREENS: &[&str] = &[
    "top", "htop", "btop", "atop", "watch", "tmux", "screen", "mc", "nnn", "ranger", "tig",
    "lazygit",
];
const REPLS: &[&str] = &[
    "python", "python3", "python2", "ipython", "node", "irb", "ruby", "ghci", "lua", "php", "psql",
    "mysql", "sqlite3", "bash", "sh", "zsh", "fish",
];
/// Flags that make a REPL program run something and exit.
const RUN_FLAGS: &[&str] = &[
    "-c",
    "-m",
    "-e",
    "-p",
    "--eval",
    "--print",
    "--version",
    "-V",
    "--help",
    "-h",
    "-v",
    "-l",
    "--list",
];

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether the command's stdin is fed from a pipe or a redirection, in
/// which case a REPL reads that instead of waiting for a person.
fn stdin_fed(a: &ShellAnalysis, index: usize, cmd: &SimpleCommand) -> bool {
    cmd.pipe.is_some_and(|(_, stage)| stage > 0)
        || a.redirects.iter().any(|r| {
            r.command == Some(index) && matches!(r.operator.as_str(), "<" | "<<" | "<<<" | "<>")
        })
}

/// A message for the model when the command would need a terminal.
pub fn refusal(a: &ShellAnalysis) -> Option<String> {
    for (i, cmd) in a.commands.iter().enumerate() {
        let Some(name) = cmd.words.first().map(|w| base(w)) else {
            continue;
        };
        let args = &cmd.words[1..];
        let why = if EDITORS.contains(&name)
            && !(name == "emacs" && args.iter().any(|a| a == "--batch" || a == "-batch"))
        {
            Some("is an interactive editor; change files with edit, multiedit or write")
        } else if PAGERS.contains(&name) {
            Some(
                "is an interactive pager; read files with view, or pipe output through head or tail",
            )
        } else if SCREENS.contains(&name) {
            Some(
                "is a full-screen program; use a one-shot command instead (for example `ps aux` for top)",
            )
        } else if REPLS.contains(&name)
            && !stdin_fed(a, i, cmd)
            && args
                .iter()
                .all(|a| a.starts_with('-') && !RUN_FLAGS.contains(&a.as_str()))
        {
            Some(
                "with no script or -c starts an interactive session; pass a script file or code with -c (or -e)",
            )
        } else if name == "ssh" && ssh_without_command(args) {
            Some(
                "without a remote command opens an interactive login; add the command to run on the host",
            )
        } else if name == "git" {
            git_interactive(args)
        } else {
            None
        };
        if let Some(why) = why {
            return Some(format!(
                "`{}` {why}. Commands run without a terminal, so interactive programs cannot be used.",
                cmd.text()
            ));
        }
    }
    None
}

fn ssh_without_command(args: &[String]) -> bool {
    const WITH_VALUE: &[&str] = &[
        "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
        "-Q", "-R", "-S", "-W", "-w",
    ];
    let mut positional = 0;
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if WITH_VALUE.contains(&a.as_str()) {
            skip = true;
        } else if !a.starts_with('-') {
            positional += 1;
        }
    }
    positional <= 1
}

fn git_interactive(args: &[String]) -> Option<&'static str> {
    let sub = args.iter().find(|a| !a.starts_with('-'))?;
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    match sub.as_str() {
        "rebase" if has(&["-i", "--interactive"]) => Some(
            "opens an interactive todo editor; use a non-interactive rebase or other git commands",
        ),
        "add" | "checkout" | "reset" | "restore" | "stash" | "commit"
            if has(&["-p", "--patch", "-i", "--interactive"]) =>
        {
            Some("asks about each hunk interactively; name the files to act on instead")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn refused(cmd: &str) -> bool {
        refusal(&parse(cmd)).is_some()
    }

    #[test]
    fn refuses_interactive_programs() {
        for cmd in [
            "vim x",
            "cd src && nano main.rs",
            "less log.txt",
            "top",
            "python",
            "python3 -i",
            "node",
            "ssh host",
            "ssh -p 22 host",
            "git rebase -i HEAD~3",
            "git add -p",
            "/usr/bin/vi file",
        ] {
            assert!(refused(cmd), "{cmd}");
        }
    }

    #[test]
    fn allows_one_shot_uses() {
        for cmd in [
            "python script.py",
            "python3 -c 'print(1)'",
            "python -m pytest",
            "echo 'print(1)' | python3",
            "python3 <<EOF\nprint(1)\nEOF",
            "node -e 'console.log(1)'",
            "ssh host uptime",
            "git rebase main",
            "git add src/",
            "cat file | head",
            "bash script.sh",
            "emacs --batch -l x.el",
        ] {
            assert!(!refused(cmd), "{cmd}");
        }
    }
}
