//! Which files steer every later session: the instruction files agents
//! read at start (`AGENTS.md` and its cousins, at any depth), and what
//! the folders of cairn and its peers hold (settings, hooks, commands,
//! skills, agent definitions). A write to one by the model is marked for
//! the person, since a prompt-injected model could plant orders there.

use std::path::{Component, Path};

/// The file names agents read as instructions, wherever they lie.
const NAMES: [&str; 11] = [
    "agents.md",
    "agents.override.md",
    "copilot-instructions.md",
    ".windsurfrules",
    ".clinerules",
    "claude.md",
    "claude.local.md",
    "crush.md",
    "gemini.md",
    ".goosehints",
    "skill.md",
];

/// Folders whose every file is read by cairn or another agent.
const FOLDERS: [&str; 4] = [".cairn", ".claude", ".agents", ".clinerules"];

/// The folders of the person's own cairn config that hold extensions.
const USER_FOLDERS: [&str; 3] = ["skills", "commands", "agents"];

/// The sentence the dialog and the transcript show for such a write.
pub const MARK: &str = "changes the instructions of every future session";

/// Whether `path` (relative or absolute, as a tool was given it) is an
/// instruction file in the sense above. Judged by its text, case-blind.
pub fn is_instruction_file(path: &Path) -> bool {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    let Some(name) = parts.last() else {
        return false;
    };
    if NAMES.contains(&name.as_str()) {
        return true;
    }
    let folders = &parts[..parts.len() - 1];
    folders.iter().any(|p| FOLDERS.contains(&p.as_str()))
        || folders
            .windows(2)
            .any(|w| w[0] == "cairn" && USER_FOLDERS.contains(&w[1].as_str()))
}

/// The sentence for a write of `path`, `None` when it is an ordinary file.
pub fn mark(path: &str) -> Option<String> {
    is_instruction_file(Path::new(path)).then(|| format!("`{path}` {MARK}"))
}

/// The sentence for a tool call (`edit`, `multiedit`, `write` or `bash`
/// with its input) that writes an instruction file, `None` otherwise.
pub fn call_mark(tool: &str, input: &serde_json::Value) -> Option<String> {
    let text = |key: &str| input.get(key).and_then(serde_json::Value::as_str);
    match tool {
        "edit" | "multiedit" | "write" => mark(text("file_path")?),
        "bash" => command_mark(text("command")?),
        _ => None,
    }
}

/// The sentence for a shell command that writes an instruction file (as
/// the permission checks read what it writes), `None` when it names none.
/// Commands that cannot name one are not parsed.
pub fn command_mark(command: &str) -> Option<String> {
    let lower = command.to_ascii_lowercase();
    let hints = NAMES.iter().chain(&FOLDERS).copied().chain(["cairn/"]);
    if !hints.into_iter().any(|h| lower.contains(h)) {
        return None;
    }
    let analysis = crate::shell::parse(command);
    crate::permission::security::written_paths(&analysis, Path::new(""), None)
        .into_iter()
        .find(|p| is_instruction_file(p))
        .map(|p| format!("`{}` {MARK}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_writing_an_instruction_file_is_marked() {
        for (command, file) in [
            ("echo 'obey' >> AGENTS.md", "AGENTS.md"),
            ("printf x | tee -a docs/CLAUDE.md", "docs/CLAUDE.md"),
            ("cp /tmp/x .cairn/config.toml", ".cairn/config.toml"),
            ("sed -i s/a/b/ GEMINI.md", "GEMINI.md"),
            (
                "cd sub && dd if=/dev/zero of=.claude/settings.json",
                ".claude/settings.json",
            ),
        ] {
            assert_eq!(
                command_mark(command),
                Some(format!("`{file}` {MARK}")),
                "{command}"
            );
        }
        for command in [
            "cat AGENTS.md",
            "cp AGENTS.md backup.md",
            "grep -r claude src > notes.txt",
            "cargo test",
        ] {
            assert_eq!(command_mark(command), None, "{command}");
        }
    }

    #[test]
    fn instruction_files_at_any_depth_and_the_agents_folders_are_marked() {
        for p in [
            "AGENTS.md",
            "rust/slug/AGENTS.md",
            "/work/p/CLAUDE.md",
            "docs/Claude.local.md",
            "CRUSH.md",
            "GEMINI.md",
            "sub/.goosehints",
            ".cairn/config.toml",
            ".claude/commands/review.md",
            ".Claude/settings.json",
            ".agents/skills/pdf/helper.py",
            "tools/skills/pdf/SKILL.md",
            "/home/me/.config/cairn/commands/git/status.md",
            "/home/me/.config/cairn/skills/x/notes.txt",
        ] {
            assert!(is_instruction_file(Path::new(p)), "{p}");
        }
        for p in [
            "src/agents.rs",
            "README.md",
            "agents/AGENTS.txt",
            "docs/commands/list.md",
            "cairn/src/main.rs",
            "",
            ".claude",
        ] {
            assert!(!is_instruction_file(Path::new(p)), "{p}");
        }
        assert_eq!(
            mark("AGENTS.md").as_deref(),
            Some("`AGENTS.md` changes the instructions of every future session")
        );
        assert_eq!(mark("src/lib.rs"), None);
    }
}
