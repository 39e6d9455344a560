//! The slash commands as data: the catalogue `/` and the palette offer,
//! how a typed line is read (`parse`), and how the `/` menu completes names
//! and arguments (`complete`). Running them is `super::slash`'s.

pub mod complete;

pub use complete::MenuState;

use crate::config::Mode;

pub use crate::protocol::slash::{ALIAS_COMMANDS, COMMANDS, SlashCommand};

/// A person's own command (`crate::extensions::commands`) as the menu,
/// completion and help show it; the agent expands it when it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomEntry {
    pub name: String,
    /// The argument hint, empty when none.
    pub args: String,
    pub description: String,
}

/// The entries of the person's commands, and one notice for each that a
/// built-in hides (a built-in always wins) or that could not be read.
pub fn custom_entries(
    catalogue: &crate::extensions::commands::Catalogue,
) -> (Vec<CustomEntry>, Vec<String>) {
    let mut notices: Vec<String> = catalogue.problems.clone();
    let mut out = Vec::new();
    for c in &catalogue.commands {
        if complete::is_command(&c.name) {
            notices.push(format!(
                "/{} in {} is not available: the built-in /{} has that name; rename the file",
                c.name,
                c.source.display(),
                c.name
            ));
            continue;
        }
        out.push(CustomEntry {
            name: c.name.clone(),
            args: c.argument_hint.clone(),
            description: c.description.clone(),
        });
    }
    (out, notices)
}

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq)]
pub enum Slash {
    New,
    Sessions,
    /// Resume the session of this project with this title.
    Resume(String),
    Model(Option<String>),
    Mode(Option<Mode>),
    /// Plan mode, and the goal to plan for when given.
    Plan(Option<String>),
    /// `/effort LEVEL` (`Some(None)`: back to the model's default);
    /// `None` shows the choices.
    Effort(Option<Option<crate::config::effort::Effort>>),
    PasteImage,
    Theme(Option<String>),
    Compact(Option<String>),
    Undo,
    Rewind,
    Rename(String),
    /// `/export [markdown|json] [PATH]`.
    Export(ExportFormat, Option<String>),
    Mcp,
    McpRestart(String),
    Lsp,
    LspRestart(String),
    /// A prompt of an MCP server: `mcp__SERVER__PROMPT args`.
    McpPrompt(String),
    /// `/prompts`: the MCP servers' prompts.
    Prompts,
    Permissions,
    Hooks,
    /// `/init [focus]`: the model explores and writes AGENTS.md.
    Init(Option<String>),
    Memory,
    Mouse,
    Sandbox,
    Jobs,
    Help,
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Json,
}

/// `[markdown|json] [PATH]`: a format word first, or a path whose
/// extension (`.json`) chooses the format.
fn export_args(rest: &str) -> Slash {
    let (first, after) = match rest.split_once(char::is_whitespace) {
        Some((f, a)) => (f, a.trim()),
        None => (rest, ""),
    };
    let path = |p: &str| (!p.is_empty()).then(|| p.to_string());
    match first {
        "" | "markdown" | "md" => Slash::Export(ExportFormat::Markdown, path(after)),
        "json" => Slash::Export(ExportFormat::Json, path(after)),
        _ if rest.to_ascii_lowercase().ends_with(".json") => {
            Slash::Export(ExportFormat::Json, path(rest))
        }
        _ => Slash::Export(ExportFormat::Markdown, path(rest)),
    }
}

/// Parses `/name args`. `Err` is a message for the person.
pub fn parse(input: &str) -> Result<Slash, String> {
    let body = input.trim().strip_prefix('/').ok_or("not a command")?;
    let (name, rest) = match body.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (body, ""),
    };
    let arg = (!rest.is_empty()).then(|| rest.to_string());
    Ok(match name {
        "new" | "clear" => Slash::New,
        "sessions" | "resume" => match arg {
            Some(title) => Slash::Resume(title),
            None => Slash::Sessions,
        },
        "model" => Slash::Model(arg),
        "mode" => match arg {
            None => Slash::Mode(None),
            Some(m) => Slash::Mode(Some(Mode::parse(&m).ok_or_else(|| {
                format!("`{m}` is not a mode; use smart, always-ask, auto, chat or plan")
            })?)),
        },
        "plan" => Slash::Plan(arg),
        "effort" => Slash::Effort(match arg.as_deref() {
            None => None,
            Some("default" | "auto" | "off") => Some(None),
            Some(level) => Some(Some(
                crate::config::effort::Effort::parse(level).ok_or_else(|| {
                    format!(
                        "`{level}` is not an effort level; use minimal, low, medium, high, \
                         xhigh or default"
                    )
                })?,
            )),
        }),
        "paste-image" => Slash::PasteImage,
        "theme" => Slash::Theme(arg),
        "compact" => Slash::Compact(arg),
        "undo" => Slash::Undo,
        "rewind" => Slash::Rewind,
        "rename" => Slash::Rename(arg.ok_or("/rename needs a title: /rename fix the parser")?),
        "export" => export_args(rest),
        "mcp" => match rest.split_once(char::is_whitespace) {
            Some(("restart", server)) if !server.trim().is_empty() => {
                Slash::McpRestart(server.trim().to_string())
            }
            _ if rest.is_empty() => Slash::Mcp,
            _ => return Err("usage: /mcp or /mcp restart <server>".into()),
        },
        "lsp" => match rest.split_once(char::is_whitespace) {
            Some(("restart", server)) if !server.trim().is_empty() => {
                Slash::LspRestart(server.trim().to_string())
            }
            _ if rest.is_empty() => Slash::Lsp,
            _ => return Err("usage: /lsp or /lsp restart <server>".into()),
        },
        "permissions" => Slash::Permissions,
        "prompts" => Slash::Prompts,
        "hooks" => Slash::Hooks,
        "memory" => Slash::Memory,
        "init" => Slash::Init(arg),
        "mouse" => Slash::Mouse,
        "sandbox" => Slash::Sandbox,
        "jobs" => Slash::Jobs,
        "help" | "?" => Slash::Help,
        "quit" | "exit" | "q" => Slash::Quit,
        other if other.starts_with("mcp__") => Slash::McpPrompt(body.trim().to_string()),
        other => {
            return Err(format!(
                "unknown command /{other}; type / to see the commands"
            ));
        }
    })
}

/// Commands whose name starts with what was typed after `/`.
pub fn completions(typed: &str) -> Vec<&'static SlashCommand> {
    let t = typed.trim_start_matches('/');
    COMMANDS.iter().filter(|c| c.name.starts_with(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_arguments() {
        assert_eq!(parse("/new"), Ok(Slash::New));
        assert_eq!(parse("  /mode auto "), Ok(Slash::Mode(Some(Mode::Auto))));
        assert_eq!(
            parse("/model gpt-4.1"),
            Ok(Slash::Model(Some("gpt-4.1".into())))
        );
        assert_eq!(
            parse("/compact the parser work"),
            Ok(Slash::Compact(Some("the parser work".into())))
        );
        assert_eq!(
            parse("/export json"),
            Ok(Slash::Export(ExportFormat::Json, None))
        );
        assert_eq!(
            parse("/export notes/today.md"),
            Ok(Slash::Export(
                ExportFormat::Markdown,
                Some("notes/today.md".into())
            ))
        );
        assert_eq!(
            parse("/export ~/s.JSON"),
            Ok(Slash::Export(ExportFormat::Json, Some("~/s.JSON".into())))
        );
        assert_eq!(
            parse("/export json my notes/"),
            Ok(Slash::Export(ExportFormat::Json, Some("my notes/".into())))
        );
        assert_eq!(
            parse("/mcp restart github"),
            Ok(Slash::McpRestart("github".into()))
        );
        assert!(parse("/mode yolo").unwrap_err().contains("not a mode"));
        assert_eq!(
            parse("/effort high"),
            Ok(Slash::Effort(Some(Some(
                crate::config::effort::Effort::High
            ))))
        );
        assert_eq!(parse("/effort default"), Ok(Slash::Effort(Some(None))));
        assert!(
            parse("/effort max")
                .unwrap_err()
                .contains("not an effort level")
        );
        assert!(parse("/rename").is_err());
        assert!(
            parse("/frobnicate")
                .unwrap_err()
                .contains("unknown command")
        );
    }

    #[test]
    fn completes_by_prefix() {
        let names: Vec<_> = completions("/m").iter().map(|c| c.name).collect();
        assert_eq!(names, ["model", "mode", "mcp", "memory", "mouse"]);
        let names: Vec<_> = completions("/i").iter().map(|c| c.name).collect();
        assert_eq!(names, ["init"]);
        assert_eq!(parse("/init"), Ok(Slash::Init(None)));
        assert_eq!(
            parse("/init the parser crate"),
            Ok(Slash::Init(Some("the parser crate".into())))
        );
        let names: Vec<_> = completions("/e").iter().map(|c| c.name).collect();
        assert_eq!(names, ["effort", "export"]);
        assert_eq!(completions("").len(), COMMANDS.len());
    }
}
