//! The workspace's control files: what the person's own git, cairn, other
//! agents and other tools (editors, direnv) read later and run or obey
//! outside the sandbox. Commands
//! may not write them (see `policy::READ_ONLY_IN_WORKSPACE` and `bwrap`),
//! and cairn's own file tools change them only after asking, every time
//! (the gate), and never through a link (`tools::beneath`).

use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Per workspace (by real path): what the git configs name inside it —
/// the hooks folders `core.hooksPath` names and the files they include
/// (`gitstate`), published by the census.
static GIT_NAMED: Mutex<Vec<(PathBuf, Vec<PathBuf>)>> = Mutex::new(Vec::new());

/// Keeps what the git configs name inside `workspace` (relative paths).
pub fn publish_git_named(workspace: &Path, rels: Vec<PathBuf>) {
    let real = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut all = GIT_NAMED.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|(w, _)| *w != real);
    all.push((real, rels));
}

/// Where `path` is inside `workspace`: as written (`.` and `..` taken
/// away), and where it really is (links followed), each `None` when it is
/// not inside. A control file is judged at both: a link inside the
/// workspace may lead into `.git`.
pub fn places_in(workspace: &Path, path: &Path) -> [Option<PathBuf>; 2] {
    let workspace = crate::paths::normalize(workspace);
    let lexical = crate::paths::normalize(path);
    let real = crate::paths::physical_path(&lexical);
    let real_workspace = std::fs::canonicalize(&workspace).ok();
    [
        lexical.strip_prefix(&workspace).ok().map(Path::to_path_buf),
        real.as_deref()
            .zip(real_workspace.as_deref())
            .and_then(|(r, w)| r.strip_prefix(w).ok())
            .map(Path::to_path_buf),
    ]
}

/// [`control_file`], and besides: what the git configs name inside
/// `workspace` (a hooks folder `core.hooksPath` names — `.githooks`,
/// `.husky/_` — or a config they include), which the person's git runs
/// or obeys.
pub fn control_file_in(workspace: &Path, rel: &Path) -> Option<&'static str> {
    if let Some(what) = control_file(rel) {
        return Some(what);
    }
    let all = GIT_NAMED.lock().unwrap_or_else(|e| e.into_inner());
    let named_in = |ws: &Path| {
        (all.iter())
            .filter(|(w, _)| w == ws)
            .any(|(_, rels)| rels.iter().any(|n| rel.starts_with(n)))
    };
    // The census publishes under the real path; the gate usually holds it
    // already, so the disk is asked only when the path as given is not it.
    let named = !all.is_empty()
        && (named_in(workspace)
            || (!all.iter().any(|(w, _)| w == workspace)
                && std::fs::canonicalize(workspace).is_ok_and(|real| named_in(&real))));
    named.then_some(
        "named by your git config (a hooks folder or an included config): your own git runs or \
         reads it",
    )
}

/// Other agents' and tools' files that they obey or run (`.claude/`
/// settings, commands, skills, agents and hook scripts, `.agents/` skills,
/// editors' tasks, direnv, dev containers, the instruction files agents
/// read as orders), relative to any folder of the workspace — its root or
/// a subfolder where cairn or another tool may be started or work
/// (`census::nested`): read-only to commands where they exist, and
/// watched by the census where they do not. The one list for binds, the
/// census and (but the instruction files, which the file tools mark
/// instead) the file tools' question.
pub const AGENT_CONTROL: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/commands",
    ".claude/skills",
    ".claude/agents",
    ".claude/hooks",
    ".agents/skills",
    // Other tools' (see `control::other_tool`).
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".vscode/launch.json",
    ".vscode/mcp.json",
    ".envrc",
    ".mcp.json",
    ".gemini/settings.json",
    ".gemini/commands",
    ".cursor",
    ".codex",
    ".opencode",
    "opencode.json",
    "opencode.jsonc",
    "crush.json",
    ".crush.json",
    ".zed",
    ".windsurf",
    // Read by a git-hook shim the person installed: their next commit
    // runs what they name.
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook-local.yml",
    ".lefthook.yml",
    ".idea/runConfigurations",
    ".idea/workspace.xml",
    ".devcontainer",
    ".devcontainer.json",
    // Instruction files (`agent::instructions`, nested memory).
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "CRUSH.md",
    "GEMINI.md",
    ".goosehints",
    "AGENTS.override.md",
    ".github/copilot-instructions.md",
    ".windsurfrules",
    ".clinerules",
];

/// Below the root, besides [`AGENT_CONTROL`]: another repository (`git
/// init sub`: the person's git, or the shell prompt's, obeys its config
/// once they go in) and cairn's own commands, skills and agents (cairn
/// loads skills from every folder between its start folder and the root).
/// A `HEAD` file makes the folder holding it a repository of its own when
/// `objects/` and `refs/` are beside it (a bare one, found by git with no
/// `.git` name at all: the person's `git status` there obeys the `config`
/// beside it).
pub const NESTED_ONLY: &[&str] = &[
    ".git",
    "HEAD",
    ".cairn/commands",
    ".cairn/skills",
    ".cairn/agents",
];

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
    // Below the root, a `HEAD` makes its folder a bare repository.
    if parts.len() > 1 && parts.last().is_some_and(|p| *p == "HEAD") {
        return Some(
            "a `HEAD` that makes its folder a repository: your own git there obeys the config \
             beside it",
        );
    }
    // At any depth: cairn, another agent or an editor started in (or
    // working in) a subfolder reads that folder's files as its project's.
    let lower: Vec<Option<String>> = parts
        .iter()
        .map(|p| p.to_str().map(str::to_ascii_lowercase))
        .collect();
    (0..lower.len()).find_map(|i| {
        let first = lower[i].as_deref()?;
        let second = lower.get(i + 1).cloned().flatten();
        control_at(first, second.as_deref())
    })
}

/// What obeys a path whose components from one folder on are `first` and
/// (when there is one) `second`.
fn control_at(first: &str, second: Option<&str>) -> Option<&'static str> {
    match (first, second) {
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
        _ => other_tool(first, second),
    }
}

/// Files other tools (editors, direnv, other agents) read later and run
/// what they name: tasks, launch and run configurations, environment
/// scripts, MCP server lists, dev containers.
fn other_tool(first: &str, second: Option<&str>) -> Option<&'static str> {
    let what = match (first, second) {
        (".vscode", Some("tasks.json" | "settings.json" | "launch.json" | "mcp.json")) => {
            "your editor's tasks, launch and settings (VS Code and its forks): it runs the \
             commands and programs they name"
        }
        (".envrc", None) => "direnv's script: your shell runs it when you enter the folder",
        (".mcp.json", None) => {
            "the project's MCP servers for other agents: they start the programs it names"
        }
        (".gemini", Some("settings.json" | "commands"))
        | (".cursor" | ".codex" | ".opencode" | ".zed" | ".windsurf", Some(_))
        | ("opencode.json" | "opencode.jsonc" | "crush.json" | ".crush.json", None) => {
            "another agent's or editor's project settings (hooks, MCP servers, commands, rules, \
             tasks): it runs what they name"
        }
        (
            ".pre-commit-config.yaml" | "lefthook.yml" | "lefthook-local.yml" | ".lefthook.yml",
            None,
        ) => "the hooks a git-hook manager runs: your next commit runs what it names",
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
            // Peers' and editors' files (a review of session 14).
            "opencode.json",
            ".opencode/command/x.md",
            "crush.json",
            ".codex/config.toml",
            ".gemini/commands/x.toml",
            ".vscode/mcp.json",
            ".zed/tasks.json",
            ".pre-commit-config.yaml",
            "sub/lefthook.yml",
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
            // Below the root: what a tool started in the subfolder obeys.
            "a/.cairn/x",
            "sub/.claude/settings.json",
            "sub/deeper/.claude/skills/x/SKILL.md",
            "sub/.agents/skills/x/SKILL.md",
            "sub/.vscode/tasks.json",
            "sub/.envrc",
            "sub/.mcp.json",
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
            "sub/.claude/logs/x",
            ".vscode/extensions.json",
            "src/.envrc.md",
            ".idea/misc.xml",
            ".gemini/notes.md",
        ] {
            assert!(control_file(Path::new(rel)).is_none(), "{rel}");
        }
    }
}
