//! The prompt line as a command line: which commands and arguments a typed
//! `/…` can complete to, and what Enter does with it.

use crate::config::Mode;

use super::{ALIAS_COMMANDS, COMMANDS, CustomEntry, SlashCommand};

/// Names `parse` accepts besides the table's.
const ALIASES: [&str; 6] = ["clear", "resume", "exit", "q", "?", "mcp__"];

/// The values an argument can take, where they can be listed.
#[derive(Debug, Clone, Default)]
pub struct ArgValues {
    pub models: Vec<String>,
    pub themes: Vec<String>,
    pub servers: Vec<String>,
    pub sessions: Vec<String>,
    /// The person's own commands.
    pub custom: Vec<CustomEntry>,
}

/// Where the person is in the completion menu.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MenuState {
    pub selected: usize,
    /// Moved with the arrows since the text last changed.
    pub moved: bool,
    /// Closed with Esc until the text changes.
    pub hidden: bool,
}

/// One line of the completion menu.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// What completing puts in place of the word being typed.
    pub insert: String,
    pub label: String,
    pub detail: String,
}

/// What the menu offers for the prompt's text, and where the completed
/// word starts (a byte offset into that text).
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestions {
    pub from: usize,
    pub items: Vec<Suggestion>,
    /// Completing a command name (not one of its arguments).
    pub names: bool,
}

/// What Enter does with the prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum Enter {
    /// Run this command line.
    Run(String),
    /// Replace the prompt with this and wait for the rest.
    Fill(String),
    /// An ordinary prompt for the model.
    Prompt,
    /// Send this as the prompt (a custom command picked from the menu).
    Send(String),
}

/// Whether `name` (after the `/`) is a command `parse` knows.
pub fn is_command(name: &str) -> bool {
    COMMANDS.iter().any(|c| c.name == name)
        || ALIASES[..5].contains(&name)
        || name.starts_with(ALIASES[5])
}

fn command(name: &str) -> Option<&'static SlashCommand> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Commands starting with `typed`: the exact name first, then the others
/// in the table's order.
pub fn rank_names(typed: &str) -> Vec<&'static SlashCommand> {
    // An alias joins the list once typed, so `/` alone lists each command once.
    let aliases = ALIAS_COMMANDS.iter().filter(|_| !typed.is_empty());
    let mut out: Vec<_> = COMMANDS
        .iter()
        .chain(aliases)
        .filter(|c| c.name.starts_with(typed))
        .collect();
    out.sort_by_key(|c| c.name != typed);
    out
}

/// Splits a one-line `/name rest`; `None` for anything else.
fn split(text: &str) -> Option<(&str, Option<&str>)> {
    if text.contains('\n') {
        return None;
    }
    let body = text.strip_prefix('/')?;
    Some(match body.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, Some(rest)),
        None => (body, None),
    })
}

/// The menu for `text`, or `None` when it offers nothing.
pub fn suggest(text: &str, values: &ArgValues) -> Option<Suggestions> {
    let (name, rest) = split(text)?;
    let Some(rest) = rest else {
        if name.contains('/') {
            return None;
        }
        let mut items: Vec<Suggestion> = rank_names(name)
            .into_iter()
            .map(|c| Suggestion {
                insert: c.name.to_string(),
                label: format!("/{} {}", c.name, c.args).trim_end().to_string(),
                detail: c.description.to_string(),
            })
            .collect();
        items.extend(
            values
                .custom
                .iter()
                .filter(|c| c.name.starts_with(name))
                .map(|c| Suggestion {
                    insert: c.name.clone(),
                    label: format!("/{} {}", c.name, c.args).trim_end().to_string(),
                    detail: c.description.clone(),
                }),
        );
        return (!items.is_empty()).then_some(Suggestions {
            from: 1,
            items,
            names: true,
        });
    };
    let (word_start, choices) = arg_choices(name, rest, values)?;
    let word = &rest[word_start..];
    let lower = word.to_lowercase();
    let mut items: Vec<Suggestion> = choices
        .into_iter()
        .filter(|(v, _)| v.to_lowercase().starts_with(&lower))
        .map(|(v, detail)| Suggestion {
            label: v.clone(),
            insert: v,
            detail,
        })
        .collect();
    items.sort_by_key(|s| s.insert != word);
    let from = text.len() - rest.len() + word_start;
    (!items.is_empty()).then_some(Suggestions {
        from,
        items,
        names: false,
    })
}

/// The listable values of `/name`'s argument being typed in `rest`, and
/// where in `rest` that argument starts.
fn arg_choices(
    name: &str,
    rest: &str,
    values: &ArgValues,
) -> Option<(usize, Vec<(String, String)>)> {
    let plain = |v: &[String]| v.iter().map(|s| (s.clone(), String::new())).collect();
    let choices = match name {
        "model" => plain(&values.models),
        "theme" => plain(&values.themes),
        "mode" => Mode::ALL
            .iter()
            .map(|m| (m.as_str().to_string(), String::new()))
            .collect(),
        "export" => plain(&["markdown".into(), "json".into()]),
        "effort" => (crate::config::effort::Effort::ALL.iter())
            .map(|e| e.as_str().to_string())
            .chain(["default".to_string()])
            .map(|e| (e, String::new()))
            .collect(),
        // A title has spaces: the whole rest is the argument.
        "sessions" | "resume" => return Some((0, plain(&values.sessions))),
        "mcp" => {
            if let Some(server) = rest.strip_prefix("restart ") {
                let start = rest.len() - server.len();
                return Some((start, plain(&values.servers)));
            }
            vec![("restart".to_string(), "<server>".to_string())]
        }
        "lsp" if !rest.starts_with("restart ") => {
            vec![("restart".to_string(), "<server>".to_string())]
        }
        _ => return None,
    };
    if rest.contains(char::is_whitespace) {
        return None;
    }
    Some((0, choices))
}

/// The prompt with the word being completed replaced by `pick`; a command
/// name that takes an argument gets the space after it.
pub fn complete(text: &str, menu: &Suggestions, pick: &Suggestion) -> String {
    let mut out = text[..menu.from].to_string();
    out.push_str(&pick.insert);
    let takes_args = match command(&pick.insert) {
        Some(c) => !c.args.is_empty(),
        // A custom command's label has its hint after the name.
        None => pick.label.contains(' '),
    };
    if menu.names && takes_args {
        out.push(' ');
    }
    out
}

/// What Enter does with `text`, `picked` being the highlighted suggestion
/// (`None` when the menu is empty or the person has not moved in it on a
/// bare `/`).
pub fn on_enter(text: &str, menu: Option<&Suggestions>, picked: Option<&Suggestion>) -> Enter {
    let text = text.trim();
    let Some(body) = text.strip_prefix('/') else {
        return Enter::Prompt;
    };
    let name = body.split_whitespace().next().unwrap_or("");
    // An MCP prompt picked from the menu, its name perhaps half typed.
    if let (Some(menu), Some(pick)) = (menu, picked)
        && menu.names
        && pick.insert.starts_with("mcp__")
        && !body.contains(char::is_whitespace)
    {
        return if pick.label.contains(' ') {
            Enter::Fill(complete(text, menu, pick))
        } else {
            Enter::Run(format!("/{}", pick.insert))
        };
    }
    if is_command(name) {
        return Enter::Run(text.to_string());
    }
    match (menu, picked) {
        (Some(menu), Some(pick)) if menu.names && !body.contains(char::is_whitespace) => {
            match command(&pick.insert) {
                Some(c) if c.args.starts_with('<') => Enter::Fill(complete(text, menu, pick)),
                Some(_) => Enter::Run(format!("/{}", pick.insert)),
                // A custom command that wants arguments waits for them.
                None if pick.label.contains(' ') => Enter::Fill(complete(text, menu, pick)),
                None => Enter::Send(format!("/{}", pick.insert)),
            }
        }
        _ if body.is_empty() => Enter::Fill(text.to_string()),
        _ => Enter::Prompt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> ArgValues {
        ArgValues {
            models: vec!["gpt-4.1".into(), "gpt-4.1-mini".into(), "o3".into()],
            themes: vec!["dark".into(), "light".into()],
            servers: vec!["demo".into(), "docs".into()],
            sessions: vec!["Calculator fixes".into(), "Parser work".into()],
            custom: vec![
                CustomEntry {
                    name: "git:status".into(),
                    args: "[focus]".into(),
                    description: "Summarise the tree".into(),
                },
                CustomEntry {
                    name: "ship".into(),
                    args: String::new(),
                    description: "Ship it".into(),
                },
            ],
        }
    }

    #[test]
    fn custom_commands_complete_after_the_built_ins() {
        let menu = suggest("/", &values()).unwrap();
        let last: Vec<_> = menu
            .items
            .iter()
            .rev()
            .take(2)
            .map(|s| s.label.as_str())
            .collect();
        assert_eq!(last, ["/ship", "/git:status [focus]"]);
        let menu = suggest("/gi", &values()).unwrap();
        assert_eq!(menu.items[0].detail, "Summarise the tree");
        // One with a hint waits for its arguments; one without is sent.
        assert_eq!(enter("/gi"), Enter::Fill("/git:status ".into()));
        assert_eq!(enter("/sh"), Enter::Send("/ship".into()));
        // Typed in full with arguments, it goes to the agent as a prompt.
        assert_eq!(enter("/git:status main"), Enter::Prompt);
    }

    fn enter(text: &str) -> Enter {
        let menu = suggest(text, &values());
        let pick = menu.as_ref().and_then(|m| m.items.first()).cloned();
        on_enter(text, menu.as_ref(), pick.as_ref())
    }

    #[test]
    fn the_exact_name_ranks_first() {
        let names: Vec<_> = rank_names("mode").iter().map(|c| c.name).collect();
        assert_eq!(names, ["mode", "model"]);
        let names: Vec<_> = rank_names("cl").iter().map(|c| c.name).collect();
        assert_eq!(names, ["clear"]);
        let names: Vec<_> = rank_names("re").iter().map(|c| c.name).collect();
        assert!(
            names.contains(&"resume") && names.contains(&"rewind"),
            "{names:?}"
        );
        assert!(!rank_names("").iter().any(|c| c.name == "clear"));
        let names: Vec<_> = rank_names("mo").iter().map(|c| c.name).collect();
        assert_eq!(names, ["model", "mode", "mouse"]);
    }

    #[test]
    fn enter_runs_commands_with_their_arguments() {
        assert_eq!(enter("/mode"), Enter::Run("/mode".into()));
        assert_eq!(
            enter("/rename Calculator fixes"),
            Enter::Run("/rename Calculator fixes".into())
        );
        assert_eq!(
            enter("/mcp restart demo"),
            Enter::Run("/mcp restart demo".into())
        );
        assert_eq!(enter("/ren"), Enter::Fill("/rename ".into()));
        assert_eq!(enter("/he"), Enter::Run("/help".into()));
    }

    #[test]
    fn a_slash_naming_no_command_is_a_prompt() {
        assert_eq!(enter("/usr/bin/python3 is missing, why?"), Enter::Prompt);
        assert_eq!(enter("/usr"), Enter::Prompt);
        assert_eq!(enter("/tmp is full"), Enter::Prompt);
        let menu = suggest("/", &values());
        assert_eq!(on_enter("/", menu.as_ref(), None), Enter::Fill("/".into()));
        assert_eq!(enter("hello"), Enter::Prompt);
    }

    #[test]
    fn completes_names_and_listable_arguments() {
        let v = values();
        let menu = suggest("/the", &v).unwrap();
        assert_eq!(complete("/the", &menu, &menu.items[0]), "/theme ");
        let menu = suggest("/model gpt", &v).unwrap();
        assert_eq!(menu.items.len(), 2);
        assert_eq!(
            complete("/model gpt", &menu, &menu.items[1]),
            "/model gpt-4.1-mini"
        );
        let menu = suggest("/mcp restart d", &v).unwrap();
        assert_eq!(
            complete("/mcp restart d", &menu, &menu.items[1]),
            "/mcp restart docs"
        );
        let menu = suggest("/mode a", &v).unwrap();
        assert_eq!(menu.items.len(), 2);
        let menu = suggest("/resume calculator f", &v).unwrap();
        assert_eq!(
            complete("/resume calculator f", &menu, &menu.items[0]),
            "/resume Calculator fixes"
        );
        assert!(suggest("/rename x", &v).is_none());
        assert!(suggest("/usr/bin", &v).is_none());
        assert!(suggest("/model gpt\nmore", &v).is_none());
    }
}
