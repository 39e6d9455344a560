//! The workspace's control files: what the person's own git, cairn, other
//! agents and other tools (editors, direnv) read later and run or obey
//! outside the sandbox. Commands
//! may not write them (see `policy::READ_ONLY_IN_WORKSPACE` and `bwrap`),
//! and cairn's own file tools change them only after asking, every time
//! (the gate), and never through a link (`tools::beneath`).

use std::path::{Component, Path};

/// What obeys the control file at `rel` (a path relative to the
/// workspace, normalised), or `None` when it is an ordinary file.
///
/// Everything named `.git` at any depth counts, and everything inside
/// one: the repository's config and hooks, a new `commondir`, a worktree's
/// or submodule's `commondir` and config, and a `.git` file (`gitdir: …`)
/// that makes a folder another repository, whose config a later
/// `git status` of the person's obeys.
pub fn control_file(rel: &Path) -> Option<&'static str> {
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p),
            _ => None,
        })
        .collect();
    // Case-blind: on a case-insensitive file system `.GIT` is `.git`.
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Some("one of git's control files: your own git reads it and runs what it names");
    }
    let lower = |p: &&std::ffi::OsStr| p.to_str().map(str::to_ascii_lowercase);
    let first = parts.first().and_then(lower)?;
    let second = parts.get(1).and_then(lower);
    match (first.as_str(), second.as_deref()) {
        (".cairn", _) => Some("cairn's project settings: cairn obeys them and runs what they name"),
        (
            ".claude",
            Some(
                "settings.json"
                | "settings.local.json"
                | "commands"
                | "skills"
                | "agents"
                | "hooks",
            ),
        ) => Some(
            "project settings other agents obey (hooks, commands, skills): they run what they name",
        ),
        (".agents", Some("skills")) => {
            Some("skills other agents load: they follow and run what they say")
        }
        _ => other_tool(&first, second.as_deref()),
    }
}

/// Files other tools (editors, direnv, other agents) read later and run
/// what they name: tasks, launch and run configurations, environment
/// scripts, MCP server lists, dev containers.
fn other_tool(first: &str, second: Option<&str>) -> Option<&'static str> {
    let what = match (first, second) {
        (".vscode", Some("tasks.json" | "settings.json" | "launch.json")) => {
            "your editor's tasks, launch and settings (VS Code and its forks): it runs the \
             commands and programs they name"
        }
        (".envrc", None) => "direnv's script: your shell runs it when you enter the folder",
        (".mcp.json", None) => {
            "the project's MCP servers for other agents: they start the programs it names"
        }
        (".gemini", Some("settings.json")) | (".cursor", Some(_)) => {
            "another agent's project settings (hooks, MCP servers, rules): it runs what they name"
        }
        (".idea", Some("runconfigurations" | "workspace.xml")) => {
            "your IDE's run configurations (JetBrains): it runs the programs they name"
        }
        (".devcontainer", Some(_)) | (".devcontainer.json", None) => {
            "the dev container's definition: your editor builds and runs what it names"
        }
        _ => return None,
    };
    Some(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_files_at_any_depth_and_the_agents_settings_are_control_files() {
        for rel in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".git/commondir",
            ".git/worktrees/w/commondir",
            ".git/modules/sub/config",
            ".git",
            "vendor/lib/.git",
            "sub/.git/config",
            "sub/.GIT/config",
            ".Claude/Settings.json",
            ".cairn/config.toml",
            ".cairn",
            ".claude/settings.json",
            ".claude/hooks/format.py",
            ".claude/commands/deploy.md",
            ".agents/skills/x/SKILL.md",
            ".vscode/tasks.json",
            ".vscode/settings.json",
            ".vscode/launch.json",
            ".envrc",
            ".mcp.json",
            ".gemini/settings.json",
            ".cursor/mcp.json",
            ".idea/runConfigurations/app.xml",
            ".idea/workspace.xml",
            ".devcontainer/devcontainer.json",
            ".devcontainer.json",
        ] {
            assert!(control_file(Path::new(rel)).is_some(), "{rel}");
        }
        for rel in [
            "src/main.rs",
            ".gitignore",
            ".github/workflows/ci.yml",
            ".claude/logs/hook.log",
            ".claude",
            ".agents/notes.md",
            "docs/.git-notes",
            "a/.cairn/x",
            ".vscode/extensions.json",
            "src/.envrc.md",
            ".idea/misc.xml",
            ".gemini/notes.md",
        ] {
            assert!(control_file(Path::new(rel)).is_none(), "{rel}");
        }
    }
}
