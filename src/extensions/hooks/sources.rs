//! Where hooks come from, in this order: `[hooks]` of cairn's user config,
//! `~/.claude/settings.json`, then the project's `.cairn/config.toml`,
//! `.claude/settings.json` and `.claude/settings.local.json` (the
//! `.claude` files unless `[compat] claude = false`). Every file has the
//! shape Claude Code documents:
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash",
//!   "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}}
//! ```
//!
//! (in TOML: `[[hooks.PreToolUse]]` with `matcher` and `hooks`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{DEFAULT_TIMEOUT, Event, Hook, Kind, Matcher};
use crate::config::project::Held;
use crate::config::project_file::{self, Over};
use crate::extensions::commands::Scope;

/// The files hooks are read from.
#[derive(Debug, Clone)]
pub struct Files {
    pub workspace: PathBuf,
    /// cairn's user config file (`~/.config/cairn/config.toml`).
    pub user_config: Option<PathBuf>,
    pub home: Option<PathBuf>,
    /// Read Claude Code's `settings.json` files too.
    pub claude: bool,
}

impl From<&crate::extensions::commands::Roots> for Files {
    fn from(r: &crate::extensions::commands::Roots) -> Files {
        Files {
            workspace: r.workspace.clone(),
            user_config: r.config_dir.as_ref().map(|d| d.join("config.toml")),
            home: r.home.clone(),
            claude: r.claude,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Toml,
    Json,
}

/// The largest settings file read.
const MAX_BYTES: u64 = 1024 * 1024;

impl Files {
    fn list(&self) -> Vec<(PathBuf, Scope, Format)> {
        let mut out = Vec::new();
        if let Some(c) = &self.user_config {
            out.push((c.clone(), Scope::User, Format::Toml));
        }
        if let (Some(h), true) = (&self.home, self.claude) {
            out.push((h.join(".claude/settings.json"), Scope::User, Format::Json));
        }
        let ws = &self.workspace;
        out.push((ws.join(".cairn/config.toml"), Scope::Project, Format::Toml));
        if self.claude {
            out.push((
                ws.join(".claude/settings.json"),
                Scope::Project,
                Format::Json,
            ));
            let local = ws.join(".claude/settings.local.json");
            out.push((local, Scope::Project, Format::Json));
        }
        out
    }
}

/// Every hook found, and a sentence for each that could not be read.
pub fn discover(files: &Files) -> (Vec<Hook>, Vec<String>) {
    let mut hooks = Vec::new();
    let mut problems = Vec::new();
    for (path, scope, format) in files.list() {
        let root = (scope == Scope::Project).then_some(files.workspace.as_path());
        match read(root, &path, format) {
            Ok(Some(value)) => parse(&value, &path, scope, &mut hooks, &mut problems),
            Ok(None) => {}
            Err(why) => problems.push(why),
        }
    }
    (hooks, problems)
}

/// The `hooks` value of one file, `None` when there is none.
fn read(root: Option<&Path>, path: &Path, format: Format) -> Result<Option<Value>, String> {
    let contents =
        project_file::read(root, path, MAX_BYTES, Over::Refuse).map_err(|e| e.to_string())?;
    let Some(contents) = contents else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&contents.bytes);
    let whole: Value = match format {
        Format::Json => serde_json::from_str(&text)
            .map_err(|e| format!("{}: not valid JSON ({e})", path.display()))?,
        Format::Toml => {
            let table: toml::Table = toml::from_str(&text)
                .map_err(|e| format!("{}: not valid TOML ({e})", path.display()))?;
            serde_json::to_value(table).map_err(|e| format!("{}: {e}", path.display()))?
        }
    };
    Ok(whole.get("hooks").cloned())
}

/// Reads one file's `hooks` object into `hooks`.
fn parse(
    value: &Value,
    path: &Path,
    scope: Scope,
    hooks: &mut Vec<Hook>,
    problems: &mut Vec<String>,
) {
    let at = path.display();
    let Some(events) = value.as_object() else {
        problems.push(format!("{at}: `hooks` must be an object of events"));
        return;
    };
    for (name, groups) in events {
        let Some(event) = Event::parse(name) else {
            let known: Vec<&str> = Event::ALL.iter().map(|e| e.name()).collect();
            problems.push(format!(
                "{at}: unknown hook event `{name}` (known: {})",
                known.join(", ")
            ));
            continue;
        };
        let Some(groups) = groups.as_array() else {
            problems.push(format!("{at}: hooks.{name} must be a list"));
            continue;
        };
        for group in groups {
            let mut skipped = Vec::new();
            match parse_group(event, group, path, scope, &mut skipped) {
                Ok(found) => hooks.extend(found),
                Err(why) => problems.push(format!("{at}: hooks.{name}: {why}")),
            }
            problems.extend(skipped.iter().map(|s| format!("{at}: hooks.{name}: {s}")));
        }
    }
}

/// One `{matcher, hooks: [...]}` entry. A hook of a kind cairn does not
/// run is left out with a sentence in `skipped`; the others still load.
fn parse_group(
    event: Event,
    group: &Value,
    path: &Path,
    scope: Scope,
    skipped: &mut Vec<String>,
) -> Result<Vec<Hook>, String> {
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => "",
        Some(Value::String(m)) => m.as_str(),
        Some(_) => return Err("`matcher` must be a string".into()),
    };
    let matcher = Matcher::parse(matcher)?;
    let Some(list) = group.get("hooks").and_then(Value::as_array) else {
        return Err("each entry needs a `hooks` list".into());
    };
    let mut out = Vec::new();
    for h in list {
        let (kind, field, default) = match h
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("command")
        {
            "command" => (Kind::Command, "command", DEFAULT_TIMEOUT),
            "prompt" => {
                let model = match h.get("model") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(m)) if !m.trim().is_empty() => Some(m.trim().to_string()),
                    Some(_) => return Err("a prompt hook's `model` must be a model's name".into()),
                };
                (
                    Kind::Prompt { model },
                    "prompt",
                    super::prompt::DEFAULT_TIMEOUT,
                )
            }
            kind => {
                skipped.push(format!(
                    "not supported: hooks of type `{kind}`; this one is skipped, cairn runs \
                     `command` and `prompt` hooks"
                ));
                continue;
            }
        };
        let Some(command) = h.get(field).and_then(Value::as_str) else {
            return Err(format!("a hook of this type needs a `{field}`"));
        };
        let timeout = match h.get("timeout") {
            None | Some(Value::Null) => default,
            Some(t) => match t.as_f64() {
                Some(s) if s > 0.0 && s < 86_400.0 => Duration::from_secs_f64(s),
                _ => return Err(format!("`timeout` must be seconds, got {t}")),
            },
        };
        out.push(Hook {
            event,
            matcher: matcher.clone(),
            kind,
            command: command.to_string(),
            timeout,
            source: path.to_path_buf(),
            scope,
        });
    }
    Ok(out)
}

/// A prompt hook as the trust question shows it: its text (the first 300
/// characters, the rest counted) and the model it asks.
fn prompt_held(text: &str, model: Option<&str>, file: &str) -> String {
    const SHOWN: usize = 300;
    let total = text.chars().count();
    let more = match total.saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!("… (+{n} characters)"),
    };
    let asks = match model {
        Some(m) => format!("asks the model {m}"),
        None => "asks the session's model".to_string(),
    };
    format!(
        "{asks}, whose answer can block: \"{}{more}\" (from {file})",
        crate::text::take_chars(text, SHOWN)
    )
}

/// What the project's hooks would run, one item each for the trust
/// question, and a fingerprint of them and of the scripts they name.
pub fn project_held(files: &Files) -> (Vec<Held>, String) {
    let (hooks, _) = discover(files);
    let mut held = Vec::new();
    let mut fingerprint = String::new();
    for h in hooks.iter().filter(|h| h.scope == Scope::Project) {
        let file = h
            .source
            .strip_prefix(&files.workspace)
            .unwrap_or(&h.source)
            .display()
            .to_string();
        let matcher = match h.matcher.text.as_str() {
            "" => String::new(),
            m => format!(" [{m}]"),
        };
        held.push(Held {
            key: format!("hook {}{matcher}", h.event.name()),
            what: match &h.kind {
                Kind::Command => format!("runs `{}` (from {file})", h.command),
                // What the model is told decides whether a call goes on.
                Kind::Prompt { model } => prompt_held(&h.command, model.as_deref(), &file),
            },
        });
        fingerprint.push_str(&format!(
            "{}\t{}\t{:?}\t{}\t{}\n",
            h.event.name(),
            h.matcher.text,
            h.kind,
            h.command,
            h.timeout.as_millis()
        ));
        for script in scripts(&h.command, &files.workspace) {
            let bytes =
                project_file::read(Some(&files.workspace), &script, MAX_BYTES * 8, Over::Cut)
                    .ok()
                    .flatten()
                    .map(|c| c.bytes)
                    .unwrap_or_default();
            let hash = crate::config::trust::hash_text(&bytes);
            fingerprint.push_str(&format!("{}\t{hash}\n", script.display()));
        }
    }
    fingerprint.push_str(&server_scripts(&files.workspace, &mut held));
    (held, fingerprint)
}

/// The folders outside the project that a server outside the sandbox
/// reaches through the project's links, for the trust question: trusting
/// the server trusts them as they are, and a session that changes one
/// asks again.
fn reached_held(
    outward: &crate::sandbox::workspace_changes::outward::Outward,
    named: &[PathBuf],
) -> Option<Held> {
    const SHOWN: usize = 8;
    if outward.targets.is_empty() && !outward.cut && named.is_empty() && outward.shared.is_empty() {
        return None;
    }
    let mut what = String::from(
        "lets a server outside the sandbox load files from outside the project, named in its \
         command line or reached through the project's links:",
    );
    for path in named.iter().take(SHOWN) {
        what.push_str(&format!(" {} (named);", path.display()));
    }
    for (target, link) in outward.targets.iter().take(SHOWN) {
        what.push_str(&format!(" {} → {};", link.display(), target.display()));
    }
    if let Some(more) = outward.targets.len().checked_sub(SHOWN).filter(|n| *n > 0) {
        what.push_str(&format!(" and {more} more;"));
    }
    if outward.cut {
        what.push_str(
            " (the project is too large to look at every link; those further in are not counted);",
        );
    }
    if !outward.shared.is_empty() {
        what.push_str(&format!(
            " {} file{} here {} hard-linked to names elsewhere (a package manager's cache, \
             another project), and a change to any of them asks again;",
            outward.shared.len(),
            if outward.shared.len() == 1 { "" } else { "s" },
            if outward.shared.len() == 1 {
                "is"
            } else {
                "are"
            },
        ));
    }
    what.push_str(" a cairn session that changes these folders asks again");
    Some(Held {
        key: "links out of the project".to_string(),
        what,
    })
}

/// A fingerprint of the workspace files the project's own MCP and language
/// servers and formatters run (`node tools/mcp.js`, `./bin/lsp`): trusting the project's
/// server trusts that content, and a changed script is asked about again
/// (a model can rewrite an ordinary file without a dialog; the server
/// would start with it next session).
fn server_scripts(workspace: &Path, held: &mut Vec<Held>) -> String {
    let path = crate::config::project_config_path(workspace);
    let Ok(Some(file)) = project_file::read(Some(workspace), &path, MAX_BYTES * 8, Over::Refuse)
    else {
        return String::new();
    };
    let Ok(config) = crate::config::parse(&String::from_utf8_lossy(&file.bytes)) else {
        return String::new();
    };
    let mut commands: Vec<(String, String)> = Vec::new();
    let mut out = String::new();
    // A server outside the sandbox may load any file here, not only the
    // ones its command line names: trust covers whether a session has
    // changed the workspace since (see `sandbox::workspace_changes`).
    let outside: Vec<_> = (config.mcp.values())
        .filter(|m| m.command.is_some() && m.sandbox == Some(false))
        .collect();
    if !outside.is_empty() {
        use crate::sandbox::workspace_changes as changes;
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let words: Vec<String> = outside.iter().flat_map(|m| m.command_words()).collect();
        let named = changes::outward::named(&root, words.iter().map(String::as_str));
        let (token, outward) = changes::survey_once(workspace, &named);
        out.push_str(&format!("workspace-changes\t{token}\n"));
        if let Some(h) = reached_held(&outward, &named) {
            held.push(h);
        }
    }
    for (name, server) in &config.mcp {
        if let Some(command) = &server.command {
            let line = std::iter::once(command.as_str())
                .chain(server.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            commands.push((format!("mcp.{name}"), line));
        }
    }
    for (name, server) in &config.lsp.servers {
        if let Some(command) = &server.command {
            let args = server.args.iter().flatten().map(String::as_str);
            let line = std::iter::once(command.as_str())
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ");
            commands.push((format!("lsp.{name}"), line));
        }
    }
    // A formatter's `{root}` is the workspace: `python3 {root}/tools/fmt.py`.
    let root = workspace.display().to_string();
    for (name, language) in &config.format.languages {
        if let Some(words) = &language.command {
            let line = words.join(" ").replace("{root}", &root);
            commands.push((format!("format.{name}"), line));
        }
    }
    for (key, line) in commands {
        for script in scripts(&line, workspace) {
            let bytes = project_file::read(Some(workspace), &script, MAX_BYTES * 8, Over::Cut)
                .ok()
                .flatten()
                .map(|c| c.bytes)
                .unwrap_or_default();
            let hash = crate::config::trust::hash_text(&bytes);
            out.push_str(&format!("{key}\t{}\t{hash}\n", script.display()));
        }
    }
    out
}

/// The files inside the workspace a command names (`"$CLAUDE_PROJECT_DIR"/
/// .claude/hooks/guard.py`, `./scripts/check.sh`), so trust covers them.
pub(super) fn scripts(command: &str, workspace: &Path) -> Vec<PathBuf> {
    let ws = workspace.display().to_string();
    let expanded = [
        "${CLAUDE_PROJECT_DIR}",
        "$CLAUDE_PROJECT_DIR",
        "${CAIRN_PROJECT_DIR}",
        "$CAIRN_PROJECT_DIR",
    ]
    .iter()
    .fold(command.to_string(), |c, v| c.replace(v, &ws));
    let mut out: Vec<PathBuf> = Vec::new();
    for word in expanded.split_whitespace() {
        let word = word.trim_matches(|c| matches!(c, '"' | '\'' | ';' | '&' | '|' | '(' | ')'));
        let word = word.replace(['"', '\''], "");
        if word.is_empty() || word.starts_with('-') {
            continue;
        }
        let path = workspace.join(&word);
        let path = crate::paths::lexical(&path);
        if path.starts_with(workspace) && path.is_file() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}
