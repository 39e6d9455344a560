//! The `permissions` of Claude Code's settings files, as cairn rules:
//! `~/.claude/settings.json` (the person's own: used as they are), and the
//! project's `.claude/settings.json` and `.claude/settings.local.json`.
//! A project's `deny` only makes cairn stricter and holds at once; its
//! `allow` lets tools run unasked, so it waits for trust like the rest of
//! what a repository adds (it is in the trust question and its fingerprint).
//! An entry cairn has no tool for is reported once and left out.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::commands::Roots;
use crate::config::project::Held;
use crate::config::project_file::{self, Over};

/// The rules read, by whose file they come from.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ClaudeRules {
    pub user_allow: Vec<String>,
    pub user_deny: Vec<String>,
    pub project_allow: Vec<String>,
    pub project_deny: Vec<String>,
    /// The project's allow entries with the file each came from, for the
    /// trust question.
    pub project_allow_from: Vec<(String, PathBuf)>,
    /// One sentence per entry or file that could not be used.
    pub problems: Vec<String>,
}

const MAX_BYTES: u64 = 1024 * 1024;

/// The cairn rule for one entry as Claude Code writes it (`Read`,
/// `Bash(git add:*)`, `WebFetch(domain:example.com)`,
/// `mcp__github__get_issue`), or cairn's own (`view`, `bash(cargo *)`);
/// `None` for a tool cairn has no counterpart of.
pub fn cairn_rule(entry: &str) -> Option<String> {
    let entry = entry.trim();
    let (name, pattern) = match entry.find('(') {
        Some(open) => (
            &entry[..open],
            Some(entry[open + 1..].strip_suffix(')')?.trim()),
        ),
        None => (entry, None),
    };
    let tool = match name.trim() {
        "Bash" => "bash",
        "Read" => "view",
        "Edit" => "edit",
        "MultiEdit" => "multiedit",
        "Write" => "write",
        "Glob" => "glob",
        "Grep" => "grep",
        "LS" => "ls",
        "WebFetch" => "fetch",
        "WebSearch" => "web_search",
        "TodoWrite" => "todos",
        other => other,
    };
    let pattern = pattern.map(|p| match tool {
        // `git add:*` is Claude Code's prefix form.
        "bash" => match p.strip_suffix(":*") {
            Some(prefix) => format!("{prefix}*"),
            None => p.to_string(),
        },
        "fetch" => p.strip_prefix("domain:").unwrap_or(p).to_string(),
        _ => p.strip_prefix("./").unwrap_or(p).to_string(),
    });
    let rule = match pattern {
        Some(p) if !p.is_empty() && p != "*" => format!("{tool}({p})"),
        _ => tool.to_string(),
    };
    crate::permission::rules::Rule::parse(&rule).ok()?;
    Some(rule)
}

/// Reads the `permissions` of the settings files under `roots` (none when
/// `roots.claude` is off).
pub fn read(roots: &Roots) -> ClaudeRules {
    let mut out = ClaudeRules::default();
    if !roots.claude {
        return out;
    }
    if let Some(home) = &roots.home {
        let path = home.join(".claude/settings.json");
        if let Some((allow, deny)) = lists(None, &path, &mut out.problems) {
            out.user_allow = allow;
            out.user_deny = deny;
        }
    }
    let ws = &roots.workspace;
    for name in [".claude/settings.json", ".claude/settings.local.json"] {
        let path = ws.join(name);
        if let Some((allow, deny)) = lists(Some(ws), &path, &mut out.problems) {
            let file = PathBuf::from(name);
            out.project_allow_from
                .extend(allow.iter().map(|r| (r.clone(), file.clone())));
            out.project_allow.extend(allow);
            out.project_deny.extend(deny);
        }
    }
    out
}

/// The allow and deny lists of one file, as cairn rules.
fn lists(
    root: Option<&Path>,
    path: &Path,
    problems: &mut Vec<String>,
) -> Option<(Vec<String>, Vec<String>)> {
    let contents = match project_file::read(root, path, MAX_BYTES, Over::Refuse) {
        Ok(Some(c)) => c,
        Ok(None) => return None,
        // The hooks' reading of the same file reports it.
        Err(_) => return None,
    };
    let value: Value = serde_json::from_slice(&contents.bytes).ok()?;
    let perms = value.get("permissions")?;
    let mut list = |key: &str| -> Vec<String> {
        let entries = perms.get(key).and_then(Value::as_array);
        let mut out = Vec::new();
        for e in entries.into_iter().flatten() {
            let Some(text) = e.as_str() else { continue };
            match cairn_rule(text) {
                Some(r) if !out.contains(&r) => out.push(r),
                Some(_) => {}
                None => problems.push(format!(
                    "{}: permissions.{key} entry `{text}` names no tool cairn has; left out",
                    path.display()
                )),
            }
        }
        out
    };
    Some((list("allow"), list("deny")))
}

/// The project's allow entries for the trust question, and their
/// fingerprint.
pub fn project_held(rules: &ClaudeRules) -> (Vec<Held>, String) {
    let mut held = Vec::new();
    let mut print = String::new();
    for (rule, file) in &rules.project_allow_from {
        held.push(Held {
            key: "claude permissions.allow".into(),
            what: format!("lets `{rule}` run without asking (from {})", file.display()),
        });
        print.push_str(&format!("claude-allow\t{rule}\t{}\n", file.display()));
    }
    (held, print)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_entries_become_cairn_rules() {
        let cases = [
            ("Read", Some("view")),
            ("Bash(git add:*)", Some("bash(git add*)")),
            ("Bash(npm run test)", Some("bash(npm run test)")),
            ("Bash", Some("bash")),
            ("Edit(./src/**)", Some("edit(src/**)")),
            ("WebFetch(domain:docs.rs)", Some("fetch(docs.rs)")),
            ("mcp__github__get_issue", Some("mcp__github__get_issue")),
            ("grep", Some("grep")),
            ("Task", None),
            ("Bash(oops", None),
        ];
        for (entry, want) in cases {
            assert_eq!(cairn_rule(entry).as_deref(), want, "{entry}");
        }
    }

    #[test]
    fn settings_files_give_rules_by_whose_file_they_are() {
        let d = tempfile::tempdir().unwrap();
        let (home, ws) = (d.path().join("home"), d.path().join("ws"));
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]}}"#,
        )
        .unwrap();
        std::fs::write(
            ws.join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["Bash(make:*)", "Task"], "deny": ["Bash(curl:*)"]}}"#,
        )
        .unwrap();
        let roots = Roots {
            workspace: ws.clone(),
            home: Some(home),
            config_dir: None,
            claude: true,
        };
        let r = read(&roots);
        assert_eq!(r.user_allow, ["bash(npm run lint)"]);
        assert_eq!(r.user_deny, ["view(.env)"]);
        assert_eq!(r.project_allow, ["bash(make*)"]);
        assert_eq!(r.project_deny, ["bash(curl*)"]);
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        let (held, print) = project_held(&r);
        assert_eq!(held.len(), 1);
        assert!(held[0].what.contains("bash(make*)"), "{:?}", held);
        assert!(print.contains("bash(make*)"));
        let off = Roots {
            claude: false,
            ..roots
        };
        assert_eq!(read(&off), ClaudeRules::default());
    }
}
