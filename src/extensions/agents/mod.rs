//! Sub-agent definitions: the built-in `explore` and `general`, and the
//! person's own agents as markdown files in Claude Code's format
//! (`.cairn/agents/`, `.claude/agents/` of the project, subfolders
//! included, and `~/.config/cairn/agents/`, `~/.claude/agents/`):
//! frontmatter `name`, `description`, `tools`, `model`, `maxTurns`, and the
//! body as the sub-agent's system prompt.
//!
//! A project's agent is project content: one that grants more than
//! `explore` may do is held until the project is trusted.

mod tools;

pub use tools::{EXPLORE_TOOLS, map_tools};

use std::path::{Path, PathBuf};

use super::commands::{Roots, Scope};
use super::frontmatter;

/// Which model a sub-agent answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// The parent's model.
    Inherit,
    /// A model id as written (`claude-haiku-4-5`).
    Id(String),
    /// Claude Code's `sonnet`, `opus`, `haiku`.
    Alias(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// cairn tool names; `None`: the parent's tools.
    pub tools: Option<Vec<String>>,
    /// Only read-only calls run (`explore`); any other is refused.
    pub read_only: bool,
    pub model: ModelChoice,
    pub max_turns: Option<u32>,
    /// The sub-agent's system prompt.
    pub prompt: String,
    /// The file it came from; `None` for a built-in agent.
    pub source: Option<PathBuf>,
    pub scope: Option<Scope>,
}

impl AgentDef {
    /// Whether it may start sub-agents of its own.
    pub fn may_delegate(&self) -> bool {
        self.tools
            .as_ref()
            .is_some_and(|t| t.iter().any(|n| n == "agent"))
    }

    /// Whether it is allowed more than `explore` is.
    pub fn grants_more_than_explore(&self) -> bool {
        match &self.tools {
            None => !self.read_only,
            // `explore`'s shell runs read-only commands alone.
            Some(tools) => tools
                .iter()
                .any(|t| !EXPLORE_TOOLS.contains(&t.as_str()) || (t == "bash" && !self.read_only)),
        }
    }
}

/// The agents found, what could not be read, and the project's agents held
/// until the project is trusted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    pub agents: Vec<AgentDef>,
    /// A sentence for each file that could not be read or each tool name
    /// that means nothing to cairn.
    pub problems: Vec<String>,
    /// Names of project agents waiting for trust.
    pub held: Vec<String>,
}

impl Catalogue {
    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        let name = name.trim().trim_start_matches('@');
        self.agents
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
    }

    /// The names, comma-separated, for a message to the model.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
        names.join(", ")
    }
}

const EXPLORE_PROMPT: &str = include_str!("../../../assets/prompts/agent_explore.md");
const GENERAL_PROMPT: &str = include_str!("../../../assets/prompts/agent_general.md");

/// The agents every project has.
pub fn builtin() -> Vec<AgentDef> {
    vec![
        AgentDef {
            name: "explore".into(),
            description: "Read-only exploration: finds files, reads code, searches, and \
                          reports what it found in one answer. Use it to look through many \
                          files without filling your own context."
                .into(),
            tools: Some(EXPLORE_TOOLS.iter().map(|s| s.to_string()).collect()),
            read_only: true,
            model: ModelChoice::Inherit,
            max_turns: None,
            prompt: EXPLORE_PROMPT.into(),
            source: None,
            scope: None,
        },
        AgentDef {
            name: "general".into(),
            description: "A general-purpose agent with your tools, for a self-contained task \
                          of several steps (research, a change across files)."
                .into(),
            tools: None,
            read_only: false,
            model: ModelChoice::Inherit,
            max_turns: None,
            prompt: GENERAL_PROMPT.into(),
            source: None,
            scope: None,
        },
    ]
}

/// Files deeper than this under an agents folder are not read.
const MAX_DEPTH: usize = 4;
/// An agent file larger than this is refused (it is a prompt, not data).
const MAX_BYTES: u64 = 256 * 1024;

/// The folders agents are read from, first wins: the project's before the
/// person's, cairn's before Claude Code's.
fn dirs(roots: &Roots) -> Vec<(PathBuf, Scope)> {
    let mut dirs = vec![(roots.workspace.join(".cairn/agents"), Scope::Project)];
    if roots.claude {
        dirs.push((roots.workspace.join(".claude/agents"), Scope::Project));
    }
    if let Some(c) = &roots.config_dir {
        dirs.push((c.join("agents"), Scope::User));
    }
    if let (Some(h), true) = (&roots.home, roots.claude) {
        dirs.push((h.join(".claude/agents"), Scope::User));
    }
    dirs
}

/// The built-in agents and every agent file under the roots. A project's
/// agent that grants more than `explore` is held unless `project_trusted`.
/// A file's agent of the same name as a built-in one replaces it.
pub fn discover(roots: &Roots, project_trusted: bool) -> Catalogue {
    let mut out = Catalogue::default();
    let mut found: Vec<AgentDef> = Vec::new();
    for (dir, scope) in dirs(roots) {
        let mut files = Vec::new();
        collect(&dir, 0, &mut files);
        files.sort();
        for path in files {
            let def = match load(&path, scope, &roots.workspace) {
                Ok((def, unknown)) => {
                    if !unknown.is_empty() {
                        out.problems.push(format!(
                            "{}: {} not known to cairn, left out of `{}`'s tools",
                            path.display(),
                            unknown.join(", "),
                            def.name
                        ));
                    }
                    def
                }
                Err(why) => {
                    out.problems.push(format!("{}: {why}", path.display()));
                    continue;
                }
            };
            if found.iter().any(|a| a.name.eq_ignore_ascii_case(&def.name)) {
                continue;
            }
            if scope == Scope::Project && !project_trusted && def.grants_more_than_explore() {
                out.held.push(def.name);
                continue;
            }
            found.push(def);
        }
    }
    for b in builtin() {
        if !found.iter().any(|a| a.name.eq_ignore_ascii_case(&b.name)) {
            found.push(b);
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    out.agents = found;
    out
}

/// The project's agents that wait for trust (those granting more than
/// `explore`), one item each for the trust question, and a fingerprint of
/// their files: trust covers them, and a changed agent file asks again.
pub fn project_held(roots: &Roots) -> (Vec<crate::config::project::Held>, String) {
    let mut held = Vec::new();
    let mut fingerprint = String::new();
    let catalogue = discover(roots, true);
    let project = catalogue
        .agents
        .iter()
        .filter(|a| a.scope == Some(Scope::Project) && a.grants_more_than_explore());
    for agent in project {
        let Some(path) = &agent.source else { continue };
        let file = path
            .strip_prefix(&roots.workspace)
            .unwrap_or(path)
            .display();
        let tools = match &agent.tools {
            None => "every tool the session has".to_string(),
            Some(t) => t.join(", "),
        };
        held.push(crate::config::project::Held {
            key: format!("agent {}", agent.name),
            what: format!("a sub-agent allowed {tools} (from {file})"),
        });
        let text = super::read_definition(path, Scope::Project, &roots.workspace, MAX_BYTES)
            .unwrap_or_default();
        let hash = crate::config::trust::hash_text(text.as_bytes());
        fingerprint.push_str(&format!("agent\t{}\t{file}\t{hash}\n", agent.name));
    }
    (held, fingerprint)
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if depth + 1 < MAX_DEPTH {
                collect(&path, depth + 1, out);
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// Reads one agent file: the definition, and the tool names it gave that
/// cairn does not know.
fn load(path: &Path, scope: Scope, workspace: &Path) -> Result<(AgentDef, Vec<String>), String> {
    let text = super::read_definition(path, scope, workspace, MAX_BYTES)?;
    parse(&text, path, scope)
}

/// An agent from a file's text.
pub fn parse(text: &str, path: &Path, scope: Scope) -> Result<(AgentDef, Vec<String>), String> {
    let doc = frontmatter::parse(text);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = doc.text("name").unwrap_or(stem);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.:".contains(c))
    {
        return Err(format!(
            "`{name}` is not a usable agent name (letters, digits, - _ . : only)"
        ));
    }
    let Some(description) = doc.text("description") else {
        return Err("it has no `description:`, which says when to use it".into());
    };
    if doc.body.trim().is_empty() {
        return Err("it has no system prompt (the text after the frontmatter)".into());
    }
    let (tools, unknown) = match doc.get("tools").map(|v| v.list()) {
        Some(list) if !list.is_empty() => {
            let (tools, unknown) = map_tools(&list);
            (Some(tools), unknown)
        }
        _ => (None, Vec::new()),
    };
    let model = match doc.text("model").map(|m| m.to_ascii_lowercase()) {
        None => ModelChoice::Inherit,
        Some(m) if m == "inherit" => ModelChoice::Inherit,
        Some(m) if matches!(m.as_str(), "sonnet" | "opus" | "haiku") => ModelChoice::Alias(m),
        Some(_) => ModelChoice::Id(doc.text("model").unwrap_or_default()),
    };
    let max_turns = match doc.text("maxturns") {
        None => None,
        Some(t) => Some(
            t.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("`maxTurns: {t}` is not a positive number"))?,
        ),
    };
    Ok((
        AgentDef {
            name,
            description,
            tools,
            read_only: false,
            model,
            max_turns,
            prompt: doc.body.trim().to_string(),
            source: Some(path.to_path_buf()),
            scope: Some(scope),
        },
        unknown,
    ))
}

/// The models Claude Code's aliases stand for with the Anthropic provider.
pub fn alias_model(alias: &str) -> Option<&'static str> {
    match alias {
        "sonnet" => Some("claude-sonnet-4-5"),
        "opus" => Some("claude-opus-4-1"),
        "haiku" => Some("claude-haiku-4-5"),
        _ => None,
    }
}

/// The model a sub-agent of `def` answers with, given the parent's
/// provider and model, and a notice when an alias could not be honoured.
pub fn resolve_model(def: &AgentDef, provider: &str, parent: &str) -> (String, Option<String>) {
    match &def.model {
        ModelChoice::Inherit => (parent.to_string(), None),
        ModelChoice::Id(id) => (id.clone(), None),
        ModelChoice::Alias(a) if provider == "anthropic" => match alias_model(a) {
            Some(m) => (m.to_string(), None),
            None => (parent.to_string(), None),
        },
        ModelChoice::Alias(a) => (
            parent.to_string(),
            Some(format!(
                "agent `{}` asks for `model: {a}`, a Claude model; the provider is `{provider}`, so it uses `{parent}`",
                def.name
            )),
        ),
    }
}

/// The section of the `agent` tool's description that lists the agents.
pub fn listing(catalogue: &Catalogue) -> String {
    let mut text = String::from("Available agents (subagent_type):\n");
    for a in &catalogue.agents {
        let tools = match &a.tools {
            None => "your tools".to_string(),
            Some(t) if t.is_empty() => "no tools".to_string(),
            Some(t) => t.join(", "),
        };
        text.push_str(&format!(
            "- {}: {} (tools: {tools})\n",
            a.name,
            crate::text::truncate_chars(a.description.trim(), 300)
        ));
    }
    text
}

#[cfg(test)]
mod tests;
