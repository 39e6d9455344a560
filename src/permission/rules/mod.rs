//! Allow and deny rules: `tool` or `tool(pattern)`.
//!
//! - `bash(PATTERN)` — `PATTERN` is a glob over one simple command's text
//!   (its de-quoted words joined by single spaces, after any assignment
//!   that could change what runs: `LD_PRELOAD=x cargo test` is not covered
//!   by `cargo test*`, `LC_ALL=C cargo test` is);
//!   `*` matches any text. A pattern ending in a word directly followed by
//!   `*` keeps that word whole: `cargo test*` matches `cargo test` and
//!   `cargo test --lib`, never `cargo testify`. An allow rule lets a call run
//!   only when every simple command in it (also inside substitutions) is
//!   covered; a deny rule refuses a call when any command matches, looking
//!   through wrappers (`env`, `xargs`, `sudo`, `command`, `exec -a`),
//!   command paths (`/bin/rm` is `rm`), `sh -c '…'`, `eval` and
//!   `find -exec`.
//! - `edit(GLOB)`, `write(GLOB)`, `multiedit(GLOB)`, `view(GLOB)`,
//!   `grep(GLOB)`, `glob(GLOB)`, `ls(GLOB)` — a globset glob over the
//!   workspace-relative path (`*` stays within one directory, `**` crosses
//!   them). `edit` also covers `multiedit`; `view` also covers `grep`,
//!   `glob` and `ls`. Deny rules also test the absolute path, so
//!   `view(/etc/**)` works. Allow rules never apply outside the workspace.
//! - `fetch(HOST)` — the URL's host is `HOST` or a subdomain of it (the
//!   owner of a domain controls its subdomains).
//! - `mcp__server__tool` or `mcp__server__*` — MCP tools, by name.
//! - A bare tool name matches every call of that tool.

use std::fmt;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

use super::CallInfo;
use super::layers::layers;
use super::nested::{self, Script};
use super::paths;
use super::wrappers::basename;
use crate::shell::{self, ShellAnalysis, SimpleCommand};

/// The tools cairn ships; a rule naming another (non-MCP) tool is a typo.
pub const KNOWN_TOOLS: &[&str] = &[
    "view",
    "grep",
    "glob",
    "ls",
    "job_output",
    "todos",
    "edit",
    "multiedit",
    "write",
    "bash",
    "job_kill",
    "fetch",
    "web_search",
];

const PATH_TOOLS: &[&str] = &["edit", "multiedit", "write", "view", "grep", "glob", "ls"];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule `{rule}`: {message}")]
pub struct RuleError {
    pub rule: String,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: String,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
enum Matcher {
    Any,
    ToolPrefix(String),
    Command(String),
    Path(GlobMatcher),
    Host(String),
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for Rule {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Rule, RuleError> {
        Rule::parse(s)
    }
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let text = text.trim();
        let err = |message: String| RuleError {
            rule: text.to_string(),
            message,
        };
        let (tool, pattern) = match text.find('(') {
            None => (text, None),
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(err("it must end with `)`, as in `bash(cargo test*)`".into()));
                };
                (&text[..open], Some(inner.trim()))
            }
        };
        let tool = tool.trim();
        if tool.is_empty() {
            return Err(err("the tool name is missing".into()));
        }
        if !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
        {
            return Err(err(format!("`{tool}` is not a tool name")));
        }
        let mcp = tool.starts_with("mcp__");
        if !mcp && !KNOWN_TOOLS.contains(&tool) {
            return Err(err(format!(
                "unknown tool `{tool}`; known tools are {} and MCP tools (`mcp__server__tool`)",
                KNOWN_TOOLS.join(", ")
            )));
        }
        if tool.contains('*') && !(mcp && tool.ends_with('*') && tool.matches('*').count() == 1) {
            return Err(err(
                "only MCP tool names may end in `*` (`mcp__server__*`)".into()
            ));
        }
        let matcher = match (tool, pattern) {
            (_, Some("")) => return Err(err("the pattern in `()` is empty".into())),
            (t, None) if t.ends_with('*') => Matcher::ToolPrefix(t.trim_end_matches('*').into()),
            (_, None) => Matcher::Any,
            ("bash", Some(p)) => {
                Matcher::Command(p.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            ("fetch", Some(p)) => Matcher::Host(parse_host(p).map_err(err)?),
            (t, Some(p)) if PATH_TOOLS.contains(&t) => {
                let glob = GlobBuilder::new(p.trim_start_matches("./"))
                    .literal_separator(true)
                    .build()
                    .map_err(|e| err(format!("bad path glob: {e}")))?;
                Matcher::Path(glob.compile_matcher())
            }
            (t, Some(_)) => return Err(err(format!("`{t}` takes no pattern; write just `{t}`"))),
        };
        Ok(Rule {
            text: text.to_string(),
            tool: tool.to_string(),
            matcher,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn tool(&self) -> &str {
        &self.tool
    }

    pub fn is_bash(&self) -> bool {
        self.tool == "bash"
    }

    /// Whether the rule is about `tool` at all.
    pub fn names_tool(&self, tool: &str) -> bool {
        match &self.matcher {
            Matcher::ToolPrefix(prefix) => tool.starts_with(prefix.as_str()),
            _ => {
                self.tool == tool
                    || (self.tool == "edit" && tool == "multiedit")
                    || (self.tool == "view" && ["grep", "glob", "ls"].contains(&tool))
            }
        }
    }

    /// Whether this bash rule covers one simple command.
    pub fn covers_command(&self, cmd: &SimpleCommand) -> bool {
        match &self.matcher {
            Matcher::Any => self.tool == "bash",
            Matcher::Command(pattern) => {
                self.is_bash() && command_matches(pattern, &rule_text(cmd))
            }
            _ => false,
        }
    }

    /// Whether this rule covers a path (workspace-relative form first,
    /// absolute form too when `absolute_too`).
    pub fn covers_path(&self, path: &Path, workspace: &Path, absolute_too: bool) -> bool {
        let Matcher::Path(glob) = &self.matcher else {
            return matches!(self.matcher, Matcher::Any);
        };
        let path = paths::normalize(path);
        let workspace = paths::normalize(workspace);
        if let Ok(relative) = path.strip_prefix(&workspace)
            && glob.is_match(relative)
        {
            return true;
        }
        absolute_too && glob.is_match(&path)
    }

    fn covers_host(&self, host: &str) -> bool {
        match &self.matcher {
            Matcher::Host(h) => host == h || host.ends_with(&format!(".{h}")),
            Matcher::Any => true,
            _ => false,
        }
    }
}

fn parse_host(pattern: &str) -> Result<String, String> {
    let host = pattern.trim_start_matches("*.").to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && !host.starts_with('.');
    if valid {
        Ok(host)
    } else {
        Err(format!(
            "`{pattern}` is not a host name; write just the host, as in `fetch(docs.rs)`"
        ))
    }
}

/// The URL host of a fetch call, lowercased.
pub fn fetch_host(input: &serde_json::Value) -> Option<String> {
    let url = input.get("url")?.as_str()?;
    let parsed = reqwest::Url::parse(url).ok()?;
    parsed.host_str().map(|h| h.to_ascii_lowercase())
}

/// Glob `pattern` against a command's text (see the module docs).
pub fn command_matches(pattern: &str, text: &str) -> bool {
    if let Some(stem) = pattern.strip_suffix('*')
        && stem
            .chars()
            .last()
            .is_some_and(|c| !c.is_whitespace() && c != '*')
    {
        return glob_text(stem, text) || glob_text(&format!("{stem} *"), text);
    }
    glob_text(pattern, text)
}

/// `*` matches any run of characters; everything else is literal.
fn glob_text(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The person's standing decisions. Deny beats allow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
}

impl Rules {
    pub fn new() -> Rules {
        Rules::default()
    }

    /// Parse the `allow` and `deny` lists of a config file.
    pub fn parse<A: AsRef<str>, D: AsRef<str>>(
        allow: &[A],
        deny: &[D],
    ) -> Result<Rules, RuleError> {
        let allow = allow
            .iter()
            .map(|r| Rule::parse(r.as_ref()))
            .collect::<Result<_, _>>()?;
        let deny = deny
            .iter()
            .map(|r| Rule::parse(r.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Rules { allow, deny })
    }

    pub fn allow(&self) -> &[Rule] {
        &self.allow
    }

    pub fn deny(&self) -> &[Rule] {
        &self.deny
    }

    pub fn add_allow(&mut self, rule: Rule) {
        if !self.allow.contains(&rule) {
            self.allow.push(rule);
        }
    }

    pub fn add_deny(&mut self, rule: Rule) {
        if !self.deny.contains(&rule) {
            self.deny.push(rule);
        }
    }

    /// The first deny rule that matches the call.
    pub fn denied_by(&self, call: &CallInfo, analysis: Option<&ShellAnalysis>) -> Option<&Rule> {
        self.deny
            .iter()
            .find(|rule| deny_matches(rule, call, analysis))
    }

    /// The hosts the `fetch(HOST)` allow rules name.
    pub fn fetch_hosts(&self) -> Vec<String> {
        self.allow
            .iter()
            .filter(|r| r.tool == "fetch")
            .filter_map(|r| match &r.matcher {
                Matcher::Host(h) => Some(h.clone()),
                _ => None,
            })
            .collect()
    }

    /// The allow rule covering a whole non-bash call inside the workspace.
    pub fn allowed_by(&self, call: &CallInfo) -> Option<&Rule> {
        self.allow.iter().find(|rule| {
            if !rule.names_tool(call.tool) || call.tool == "bash" {
                return false;
            }
            match &rule.matcher {
                Matcher::Any | Matcher::ToolPrefix(_) => true,
                Matcher::Path(_) => {
                    !call.paths.is_empty()
                        && call
                            .paths
                            .iter()
                            .all(|p| rule.covers_path(p, call.workspace, false))
                }
                Matcher::Host(_) => fetch_host(call.input).is_some_and(|h| rule.covers_host(&h)),
                Matcher::Command(_) => false,
            }
        })
    }

    /// Whether every call of `tool` is allowed whatever its input: an allow
    /// rule names just the tool and no deny rule names it at all. What a
    /// provider runs mid-answer (its own web search) can be asked about
    /// no other way.
    pub fn allows_outright(&self, tool: &str) -> bool {
        let names = |r: &Rule| r.tool == tool;
        self.allow
            .iter()
            .any(|r| names(r) && matches!(r.matcher, Matcher::Any))
            && !self.deny.iter().any(names)
    }

    /// Whether an allow rule covers every bash command (`bash`, `bash(*)`).
    pub fn allows_all_bash(&self) -> bool {
        self.allow.iter().any(|rule| {
            rule.is_bash()
                && match &rule.matcher {
                    Matcher::Any => true,
                    Matcher::Command(pattern) => pattern == "*",
                    _ => false,
                }
        })
    }

    /// The allow rule covering one simple command of a bash call.
    pub fn command_allowed_by(&self, cmd: &SimpleCommand) -> Option<&Rule> {
        self.allow.iter().find(|rule| rule.covers_command(cmd))
    }

    /// The `write`/`edit` allow rule covering a file a redirection writes.
    pub fn redirect_allowed_by(&self, path: &Path, workspace: &Path) -> Option<&Rule> {
        self.allow.iter().find(|rule| {
            matches!(rule.matcher, Matcher::Path(_))
                && (rule.tool == "write" || rule.tool == "edit")
                && rule.covers_path(path, workspace, false)
        })
    }
}

fn deny_matches(rule: &Rule, call: &CallInfo, analysis: Option<&ShellAnalysis>) -> bool {
    if !rule.names_tool(call.tool) {
        return false;
    }
    match &rule.matcher {
        Matcher::Any | Matcher::ToolPrefix(_) => true,
        Matcher::Command(pattern) => {
            let command = call
                .input
                .get("command")
                .and_then(|c| c.as_str())
                .unwrap_or("");
            let parsed;
            let analysis = match analysis {
                Some(a) => a,
                None => {
                    parsed = shell::parse(command);
                    &parsed
                }
            };
            let mut texts = Vec::new();
            command_texts(command, analysis, 0, &mut texts);
            texts.iter().any(|t| command_matches(pattern, t))
        }
        Matcher::Path(_) => call
            .paths
            .iter()
            .any(|p| rule.covers_path(p, call.workspace, true)),
        Matcher::Host(_) => fetch_host(call.input).is_some_and(|h| rule.covers_host(&h)),
    }
}

/// Every text a deny rule should see: each simple command, each command
/// under a wrapper (`env`, `command`, `exec -a x`, `sudo`, `busybox`), the
/// same with a command's path reduced to its name (`/bin/rm` is `rm`),
/// each command inside `sh -c '…'`, `bash -ec '…'`, `eval '…'`,
/// `env -S '…'` and `find -exec …`; the raw text when the command cannot be
/// parsed.
fn command_texts(raw: &str, analysis: &ShellAnalysis, depth: usize, out: &mut Vec<String>) {
    if analysis.parse_error.is_some() {
        out.push(raw.split_whitespace().collect::<Vec<_>>().join(" "));
        return;
    }
    let nested = |scripts: Vec<Script>, out: &mut Vec<String>| {
        for script in scripts.iter().filter(|s| s.literal && depth < 3) {
            command_texts(&script.text, &shell::parse(&script.text), depth + 1, out);
        }
    };
    for cmd in &analysis.commands {
        nested(nested::assignment_scripts(&cmd.assignments), out);
        for layer in layers(&cmd.words) {
            let Some((name, args)) = layer.split_first() else {
                continue;
            };
            out.push(layer.join(" "));
            let base = basename(name);
            if base != name {
                let mut renamed = vec![base.to_string()];
                renamed.extend(args.iter().cloned());
                out.push(renamed.join(" "));
            }
            // `git -C . push`, `git -c k=v push`: the subcommand with
            // git's global options taken out.
            if base == "git"
                && let Some(at) = git_subcommand_at(args)
                && at > 0
            {
                let mut plain = vec!["git".to_string()];
                plain.extend(args[at..].iter().cloned());
                out.push(plain.join(" "));
            }
            let offset = cmd.words.len() - layer.len();
            let literal = &cmd.literal[offset + 1..];
            nested(nested::scripts(name, args, literal), out);
        }
    }
}

/// Where git's subcommand is, after its global options (git(1)).
pub(super) fn git_subcommand_at(args: &[String]) -> Option<usize> {
    const WITH_VALUE: &[&str] = &[
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--exec-path",
        "--list-cmds",
        "--attr-source",
    ];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if !arg.starts_with('-') {
            return Some(i);
        }
        if arg == "--" {
            return args.get(i + 1).map(|_| i + 1);
        }
        let takes_next = WITH_VALUE.contains(&arg.as_str()) && arg != "--exec-path";
        i += if takes_next { 2 } else { 1 };
    }
    None
}

/// What bash rules match: the words, preceded by any assignment that
/// could change what runs (`LD_PRELOAD=x.so cargo test` is not
/// `cargo test`).
pub(crate) fn rule_text(cmd: &SimpleCommand) -> String {
    let standalone = cmd.words.is_empty();
    let mut parts: Vec<&str> = cmd
        .assignments
        .iter()
        .filter(|a| !super::readonly::is_safe_assignment(a, standalone))
        .map(String::as_str)
        .collect();
    parts.extend(cmd.words.iter().map(String::as_str));
    parts.join(" ")
}

#[cfg(test)]
mod tests;
