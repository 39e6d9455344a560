//! What a person's own files add to cairn, in the formats they already use
//! with other agents: custom slash commands (`commands`), Agent Skills (`skills`), sub-agent
//! definitions (`agents`), which files steer later sessions
//! (`instruction_files`), and the shared
//! reading of their markdown frontmatter (`frontmatter`).
//!
//! This room reads files; the agent calls it. The `` !`cmd` `` lines of a
//! command are handed back to the agent, which runs them through the
//! permission gate and the sandbox like a model's call; `hooks` runs the
//! hook commands themselves, a project's through `crate::sandbox`.

pub mod agents;
pub mod claude_permissions;
pub mod commands;
pub mod frontmatter;
pub mod hooks;
pub mod instruction_files;
pub mod skills;

use std::path::Path;

/// What a person can run as `/name args`: their custom commands, and the
/// skills they may invoke (a command wins a name both use).
pub fn invocable(roots: &commands::Roots, cwd: &Path) -> commands::Catalogue {
    let mut catalogue = commands::discover(roots);
    let (skills, problems) = skills::discover(roots, cwd);
    catalogue.problems.extend(problems);
    for s in skills.into_iter().filter(|s| s.user_invocable) {
        if catalogue.get(&s.name).is_some() {
            continue;
        }
        catalogue.commands.push(commands::CustomCommand {
            body: skills::invocation(&s, ""),
            source: s.dir.join("SKILL.md"),
            name: s.name,
            description: s.description,
            argument_hint: s.argument_hint,
            allowed_tools: s.allowed_tools,
            model: None,
            scope: s.scope,
            text_hash: s.text_hash,
        });
    }
    catalogue.commands.sort_by(|a, b| a.name.cmp(&b.name));
    catalogue
}

/// What a project adds that waits for trust beyond its config file (its
/// hooks, agents granting more than `explore`, skills and commands whose
/// `allowed-tools` would run tools unasked), one item each for the trust
/// question, and one fingerprint of them and the files they name.
pub fn project_held(roots: &commands::Roots) -> (Vec<crate::config::project::Held>, String) {
    let claude = claude_permissions::read(roots);
    let grants = granting_entries(roots);
    project_held_with(roots, &claude, &grants)
}

/// [`project_held`] from Claude Code's permissions and the granting
/// skills and commands already read (start-up reads each once and uses the
/// same for the question and for what it then allows).
pub fn project_held_with(
    roots: &commands::Roots,
    claude: &claude_permissions::ClaudeRules,
    grants: &[(GrantEntry, Vec<String>)],
) -> (Vec<crate::config::project::Held>, String) {
    let (mut held, mut fingerprint) = hooks::project_held(&roots.into());
    let (agents, agents_print) = agents::project_held(roots);
    held.extend(agents);
    fingerprint.push_str(&agents_print);
    let (claude, claude_print) = claude_permissions::project_held(claude);
    held.extend(claude);
    fingerprint.push_str(&claude_print);
    let (granting, granting_print) = granting_held(grants);
    held.extend(granting);
    fingerprint.push_str(&granting_print);
    (held, fingerprint)
}

/// A project's skill or command that grants tools, as the trust question
/// covered it: its kind (`skill`, `command`), name, file (relative to the
/// workspace) and the hash of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantEntry {
    pub kind: String,
    pub name: String,
    pub file: std::path::PathBuf,
    pub hash: String,
}

/// The project's skills (at its root) and commands with `allowed-tools`.
pub fn granting_entries(roots: &commands::Roots) -> Vec<(GrantEntry, Vec<String>)> {
    let entry = |kind: &str, name: &str, path: &Path, hash: &str, tools: &[String]| {
        let file = path.strip_prefix(&roots.workspace).unwrap_or(path);
        let e = GrantEntry {
            kind: kind.into(),
            name: name.into(),
            file: file.to_path_buf(),
            hash: hash.into(),
        };
        (e, tools.to_vec())
    };
    let mut out = Vec::new();
    let (skills, _) = skills::discover(roots, &roots.workspace);
    for s in skills
        .iter()
        .filter(|s| s.scope == commands::Scope::Project)
    {
        if !s.allowed_tools.is_empty() {
            let file = s.dir.join("SKILL.md");
            out.push(entry(
                "skill",
                &s.name,
                &file,
                &s.text_hash,
                &s.allowed_tools,
            ));
        }
    }
    for c in commands::discover(roots).commands.iter() {
        if c.scope == commands::Scope::Project && !c.allowed_tools.is_empty() {
            out.push(entry(
                "command",
                &c.name,
                &c.source,
                &c.text_hash,
                &c.allowed_tools,
            ));
        }
    }
    out
}

fn granting_held(
    grants: &[(GrantEntry, Vec<String>)],
) -> (Vec<crate::config::project::Held>, String) {
    let mut held = Vec::new();
    let mut fingerprint = String::new();
    for (e, tools) in grants {
        held.push(crate::config::project::Held {
            key: format!("{} {}", e.kind, e.name),
            what: format!(
                "runs {} without asking while it is in use (from {})",
                tools.join(", "),
                e.file.display()
            ),
        });
        fingerprint.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            e.kind,
            e.name,
            e.file.display(),
            e.hash
        ));
    }
    (held, fingerprint)
}

/// The text of a command, skill or agent file, at most `max` bytes. A
/// project's file is repository content the model can change: it is read
/// only where it really lies inside the workspace, never through a link
/// out of it (a `SKILL.md` linked to a secret would go to the model as a
/// skill), and only when it is a regular file.
pub(crate) fn read_definition(
    path: &Path,
    scope: commands::Scope,
    workspace: &Path,
    max: u64,
) -> Result<String, String> {
    let root = (scope == commands::Scope::Project).then_some(workspace);
    let over = crate::config::project_file::Over::Refuse;
    match crate::config::project_file::read(root, path, max, over) {
        Ok(Some(c)) => Ok(String::from_utf8_lossy(&c.bytes).into_owned()),
        Ok(None) => Err("it is gone".into()),
        Err(e) => Err(e.to_string()),
    }
}
