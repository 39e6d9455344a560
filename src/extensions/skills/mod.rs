//! Agent Skills in the agentskills.io format: a folder holding `SKILL.md`,
//! whose frontmatter gives `name` and `description` (and optionally
//! `allowed-tools`, `disable-model-invocation`, `user-invocable`,
//! `argument-hint`). Found in `.cairn/skills`, `.agents/skills` and
//! `.claude/skills` of the project root and of every directory between it
//! and the cwd, and in the person's `~/.config/cairn/skills`,
//! `~/.agents/skills` and `~/.claude/skills`.
//!
//! Progressive disclosure: the system prompt lists names and descriptions
//! (`prompt_section`); the `skill` tool (`tool`) gives the model a body;
//! files beside `SKILL.md` are read with the ordinary tools. Skills are read
//! again for every request, so an edit applies at once.

pub mod tool;

use std::path::{Path, PathBuf};

use super::commands::{Roots, Scope};
use super::frontmatter;

#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub allowed_tools: Vec<String>,
    /// Only the person may run it (`/name`); the model is not told of it.
    pub model_invocable: bool,
    /// The person may run it as `/name`.
    pub user_invocable: bool,
    pub argument_hint: String,
    pub body: String,
    /// The folder holding `SKILL.md`.
    pub dir: PathBuf,
    pub scope: Scope,
    /// The hash of `SKILL.md`'s text as read (`config::trust::hash_text`).
    pub text_hash: String,
}

/// The skill folders, first wins: nearest the cwd first, then the
/// project root, then the person's.
fn dirs(roots: &Roots, cwd: &Path) -> Vec<(PathBuf, Scope)> {
    let mut names = vec![".cairn/skills", ".agents/skills"];
    if roots.claude {
        names.push(".claude/skills");
    }
    let mut out = Vec::new();
    let mut at = Some(cwd);
    while let Some(dir) = at {
        if !dir.starts_with(&roots.workspace) {
            break;
        }
        out.extend(names.iter().map(|n| (dir.join(n), Scope::Project)));
        if dir == roots.workspace {
            break;
        }
        at = dir.parent();
    }
    if !cwd.starts_with(&roots.workspace) {
        out.extend(
            names
                .iter()
                .map(|n| (roots.workspace.join(n), Scope::Project)),
        );
    }
    if let Some(c) = &roots.config_dir {
        out.push((c.join("skills"), Scope::User));
    }
    if let Some(h) = &roots.home {
        out.push((h.join(".agents/skills"), Scope::User));
        if roots.claude {
            out.push((h.join(".claude/skills"), Scope::User));
        }
    }
    out
}

/// The largest `SKILL.md` read.
const MAX_BYTES: u64 = 512 * 1024;

/// Every skill found, sorted by name, and a sentence per unreadable one.
pub fn discover(roots: &Roots, cwd: &Path) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    for (dir, scope) in dirs(roots, cwd) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("SKILL.md").is_file())
            .collect();
        folders.sort();
        for folder in folders {
            match load(&folder, scope, &roots.workspace) {
                Ok(skill) if skills.iter().any(|s| s.name == skill.name) => {}
                Ok(skill) => skills.push(skill),
                Err(why) => problems.push(format!("{}: {why}", folder.join("SKILL.md").display())),
            }
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, problems)
}

fn load(folder: &Path, scope: Scope, workspace: &Path) -> Result<Skill, String> {
    let path = folder.join("SKILL.md");
    let text = super::read_definition(&path, scope, workspace, MAX_BYTES)?;
    let doc = frontmatter::parse(&text);
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = doc.text("name").unwrap_or(folder_name);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    {
        return Err(format!(
            "`{name}` is not a usable skill name (letters, digits, - and _)"
        ));
    }
    let description = doc.text("description").ok_or(
        "it has no `description` in its frontmatter, so the model could not know when to use it",
    )?;
    Ok(Skill {
        name,
        description,
        allowed_tools: doc
            .get("allowed-tools")
            .map(|v| v.list())
            .unwrap_or_default(),
        model_invocable: !doc
            .get("disable-model-invocation")
            .is_some_and(|v| v.flag()),
        user_invocable: doc.get("user-invocable").is_none_or(|v| v.flag()),
        argument_hint: doc.shown("argument-hint").unwrap_or_default(),
        body: doc.body,
        dir: folder.to_path_buf(),
        scope,
        text_hash: crate::config::trust::hash_text(text.as_bytes()),
    })
}

/// The most of the system prompt the skill list takes.
pub const PROMPT_CAP: usize = 12 * 1024;

/// The system prompt's list of skills the model may load: one line each,
/// name and description, cut at `cap` bytes with a line saying how many
/// were left out. Empty when there is none.
pub fn prompt_section(skills: &[Skill], cap: usize) -> String {
    let listed: Vec<&Skill> = skills.iter().filter(|s| s.model_invocable).collect();
    if listed.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Skills\n\nSkills are instructions for particular tasks. When a task matches a skill's description, call the `skill` tool with its name to read it before you start; files it mentions lie in its folder.\n\n",
    );
    for (i, s) in listed.iter().enumerate() {
        let desc = crate::text::truncate_chars(&crate::text::one_line(&s.description), 300);
        let line = format!("- {}: {desc}\n", s.name);
        if out.len() + line.len() > cap {
            out.push_str(&format!(
                "({} more skills are installed but not listed: the list is capped at {cap} bytes. The `skill` tool loads any skill by name.)\n",
                listed.len() - i
            ));
            break;
        }
        out.push_str(&line);
    }
    out
}

/// `/name args` for a skill the person may run: the body with the
/// arguments, as the prompt.
pub fn invocation(skill: &Skill, args: &str) -> String {
    let mut out = format!(
        "Use the skill `{}` (its folder is {}).\n\n{}",
        skill.name,
        skill.dir.display(),
        skill.body.trim()
    );
    if !args.trim().is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {}", args.trim()));
    }
    out
}

#[cfg(test)]
mod tests;
