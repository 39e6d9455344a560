//! Custom slash commands: markdown prompt files in `.cairn/commands/` and
//! `.claude/commands/` of the project and in the person's
//! `~/.config/cairn/commands/` and `~/.claude/commands/`, in Claude Code's
//! format. A subfolder is a namespace (`git/status.md` is `/git:status`);
//! frontmatter gives `description`, `argument-hint`, `allowed-tools` and
//! `model`. `expand` fills in the arguments; the `` !`cmd` `` spans it finds
//! are run by the agent (gate and sandbox) and put back with `inline`.

mod expand;

pub use expand::{ShellSpan, fill, join, shell_spans, split_args, substitute};

use std::path::{Path, PathBuf};

use super::frontmatter;

/// Where a command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CustomCommand {
    /// Without the `/`: `review`, `git:status`.
    pub name: String,
    pub description: String,
    /// Shown after the name in the menu, as written (`[message]`).
    pub argument_hint: String,
    pub allowed_tools: Vec<String>,
    /// The model to answer this command with, when it names one.
    pub model: Option<String>,
    /// The prompt, frontmatter removed.
    pub body: String,
    pub source: PathBuf,
    pub scope: Scope,
    /// The hash of the file's text as read (`config::trust::hash_text`).
    pub text_hash: String,
}

/// The commands found, and a sentence for each file that could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    pub commands: Vec<CustomCommand>,
    pub problems: Vec<String>,
}

impl Catalogue {
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|c| c.name == name)
    }
}

/// The folders commands are read from.
#[derive(Debug, Clone)]
pub struct Roots {
    pub workspace: PathBuf,
    /// The person's home (for `~/.claude`), `None` when unknown.
    pub home: Option<PathBuf>,
    /// cairn's user config directory (`~/.config/cairn`).
    pub config_dir: Option<PathBuf>,
    /// Read `.claude/` folders too (`[compat] claude`).
    pub claude: bool,
}

impl Roots {
    /// The command folders, first wins: the project's before the person's,
    /// cairn's before Claude Code's.
    fn dirs(&self) -> Vec<(PathBuf, Scope)> {
        let mut dirs = vec![(self.workspace.join(".cairn/commands"), Scope::Project)];
        if self.claude {
            dirs.push((self.workspace.join(".claude/commands"), Scope::Project));
        }
        if let Some(c) = &self.config_dir {
            dirs.push((c.join("commands"), Scope::User));
        }
        if let (Some(h), true) = (&self.home, self.claude) {
            dirs.push((h.join(".claude/commands"), Scope::User));
        }
        dirs
    }
}

/// Files deeper than this under a commands folder are not read.
const MAX_DEPTH: usize = 4;
/// A command file larger than this is refused (it is a prompt, not data).
const MAX_BYTES: u64 = 256 * 1024;

/// Reads every command file under the roots.
pub fn discover(roots: &Roots) -> Catalogue {
    let mut out = Catalogue::default();
    for (dir, scope) in roots.dirs() {
        let mut files = Vec::new();
        collect(&dir, &dir, 0, &mut files);
        files.sort();
        for (name, path) in files {
            if out.get(&name).is_some() {
                continue;
            }
            match load(&name, &path, scope, &roots.workspace) {
                Ok(cmd) => out.commands.push(cmd),
                Err(why) => out.problems.push(format!("{}: {why}", path.display())),
            }
        }
    }
    out.commands.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn collect(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with('.') {
            continue;
        }
        // Follows links, as a person's dotfiles often are links.
        if path.is_dir() {
            if depth + 1 < MAX_DEPTH {
                collect(root, &path, depth + 1, out);
            }
        } else if let Some(name) = command_name(root, &path) {
            out.push((name, path));
        }
    }
}

/// `root/git/status.md` → `git:status`; `None` for other files and for
/// names a person could not type.
fn command_name(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let stem = rel.to_str()?.strip_suffix(".md")?;
    let name = stem.replace(std::path::MAIN_SEPARATOR, ":");
    let typable = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    typable.then_some(name)
}

fn load(name: &str, path: &Path, scope: Scope, workspace: &Path) -> Result<CustomCommand, String> {
    let text = super::read_definition(path, scope, workspace, MAX_BYTES)?;
    let doc = frontmatter::parse(&text);
    let description = doc
        .text("description")
        .unwrap_or_else(|| first_line(&doc.body));
    Ok(CustomCommand {
        name: name.to_string(),
        description,
        argument_hint: doc.shown("argument-hint").unwrap_or_default(),
        allowed_tools: doc
            .get("allowed-tools")
            .map(|v| v.list())
            .unwrap_or_default(),
        model: doc.text("model"),
        body: doc.body,
        source: path.to_path_buf(),
        scope,
        text_hash: crate::config::trust::hash_text(text.as_bytes()),
    })
}

/// A command without a description is described by its first line.
fn first_line(body: &str) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    crate::text::truncate_chars(line, 80)
}

/// `/name args` → the command's name and the arguments; `None` when the
/// line is not a slash command.
pub fn split_invocation(line: &str) -> Option<(&str, &str)> {
    let body = line.trim_start().strip_prefix('/')?;
    let (name, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    (!name.is_empty()).then(|| (name, rest.trim()))
}

#[cfg(test)]
mod tests;
