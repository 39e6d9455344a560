//! Commands whose work is code the repository decides: a package
//! manager's install and lifecycle scripts, a build's `build.rs`, a
//! Makefile's recipes, a test runner's `conftest.py`. The dialog says so
//! plainly, since "Allow always" for `npm install` lets whatever the
//! repository later puts into `package.json` run unasked. Such code runs
//! inside the sandbox like every command (docs/security.md, "Package
//! managers and builds"); cairn does not rewrite the command (no
//! `--ignore-scripts`): many packages need their scripts, and `build.rs`,
//! `setup.py` or a Makefile have no such switch.

use crate::shell::SimpleCommand;

/// What `cmd` lets the repository run, in words; `None` for other commands.
fn runs(cmd: &SimpleCommand) -> Option<&'static str> {
    let words: Vec<&str> = cmd.words.iter().map(String::as_str).collect();
    let program = words.first()?.rsplit('/').next()?;
    let sub = words.iter().skip(1).find(|w| !w.starts_with('-')).copied();
    let node = "the package.json scripts of the project and the install scripts of its \
                dependencies";
    Some(match (program, sub) {
        ("npm" | "pnpm" | "bun", Some("install" | "i" | "ci" | "add" | "rebuild" | "update"))
        | ("yarn", None | Some("install" | "add" | "upgrade")) => node,
        ("npm" | "pnpm" | "yarn" | "bun", Some("run" | "test" | "start" | "exec" | "t"))
        | ("npx" | "pnpx" | "bunx", _) => "scripts and packages the repository names",
        ("pip" | "pip3" | "uv", Some("install" | "pip" | "sync" | "run")) | ("poetry", _) => {
            "the build scripts (`setup.py`, build backends) of the packages it installs"
        }
        ("cargo", Some("build" | "b" | "test" | "t" | "run" | "r" | "check" | "c"))
        | ("cargo", Some("clippy" | "bench" | "doc" | "install")) => {
            "the `build.rs` scripts and procedural macros of the crate and its dependencies"
        }
        ("make" | "gmake" | "just" | "ninja" | "cmake" | "meson", _)
        | ("gradle" | "gradlew" | "mvn" | "mvnw" | "rake", _) => {
            "the recipes the repository's build files define"
        }
        ("go", Some("generate" | "test" | "run")) => "the code and `go:generate` lines it names",
        ("pytest" | "tox" | "nox", _) => "the repository's `conftest.py` and test code",
        _ => return None,
    })
}

/// A sentence for each of `commands` that runs what the repository
/// decides, for the permission dialog.
pub fn notes<'a>(commands: impl Iterator<Item = &'a SimpleCommand>) -> Vec<String> {
    commands
        .filter_map(|cmd| {
            let what = runs(cmd)?;
            Some(format!(
                "`{}` runs code the repository decides: {what}. It runs inside the sandbox \
                 (your home, sockets and the repository's control files stay out of its \
                 reach; the network only if granted), and an \"Always\" rule lets it run \
                 whatever the repository puts there from now on",
                cmd.text()
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(line: &str) -> Vec<String> {
        notes(crate::shell::parse(line).commands.iter())
    }

    #[test]
    fn package_managers_and_builds_are_named_and_other_commands_are_not() {
        for line in [
            "npm install",
            "pnpm i",
            "yarn",
            "pip install -e .",
            "cargo build --release",
            "make -j4 test",
            "npx prettier --write .",
        ] {
            let notes = said(line);
            assert_eq!(notes.len(), 1, "{line}: {notes:?}");
            assert!(notes[0].contains("Always"), "{line}");
        }
        for line in ["ls -la", "git status", "npm view react", "cargo --version"] {
            assert!(said(line).is_empty(), "{line}");
        }
    }
}
