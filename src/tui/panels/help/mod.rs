//! The help overlay: every key of every screen from the one key table, and
//! every slash command with its arguments; searchable, or limited to the
//! keys of the dialog it was opened from.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use unicode_width::UnicodeWidthStr;

use crate::tui::commands::COMMANDS;
use crate::tui::keys::{Action, KeyMap, Scope};
use crate::tui::styles::Styles;

mod keys;

pub use keys::handle_key;

/// Where help is scrolled to, what it is filtered by, and whether it shows
/// one dialog's keys only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelpState {
    pub scroll: u16,
    pub query: String,
    /// Typing goes to the query.
    pub searching: bool,
    /// The screens shown; empty for all of them and the commands.
    pub only: Vec<Scope>,
    /// The person's own commands: `/name hint` and what each does.
    pub custom: Vec<(String, String)>,
    /// The MCP servers' prompts in the `/` menu, the same way.
    pub mcp_prompts: Vec<(String, String)>,
}

/// `/name hint` and what each entry does.
fn usages(entries: &[crate::tui::commands::CustomEntry]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|c| {
            let usage = format!("/{} {}", c.name, c.args).trim_end().to_string();
            (usage, c.description.clone())
        })
        .collect()
}

impl HelpState {
    /// Help for everything, the person's own commands and the MCP
    /// servers' prompts included.
    pub fn with_custom(
        custom: &[crate::tui::commands::CustomEntry],
        mcp_prompts: &[crate::tui::commands::CustomEntry],
    ) -> HelpState {
        HelpState {
            custom: usages(custom),
            mcp_prompts: usages(mcp_prompts),
            ..HelpState::default()
        }
    }

    /// Help for the keys of these screens.
    pub fn for_scopes(only: Vec<Scope>) -> HelpState {
        HelpState {
            only,
            ..HelpState::default()
        }
    }
}

/// One entry: what to press (or type) and what it does.
struct Entry {
    keys: String,
    what: String,
}

/// The sections help shows for `state`, filtered by its query.
fn sections(keys: &KeyMap, state: &HelpState) -> Vec<(String, Vec<Entry>)> {
    let mut out = Vec::new();
    // A dialog's own keys first, in the order it asked for them.
    let scopes = if state.only.is_empty() {
        Scope::ALL.to_vec()
    } else {
        state.only.clone()
    };
    for scope in scopes {
        let entries: Vec<Entry> = Action::all()
            .filter(|a| a.scope() == scope)
            .map(|a| Entry {
                keys: keys.keys_for(a),
                what: a.description().to_string(),
            })
            .collect();
        out.push((scope.title().to_string(), entries));
    }
    if state.only.is_empty() {
        let commands: Vec<Entry> = COMMANDS
            .iter()
            .map(|c| Entry {
                keys: format!("/{} {}", c.name, c.args).trim_end().to_string(),
                what: c.description.to_string(),
            })
            .collect();
        out.push((
            "Commands (type /name and arguments; Tab completes)".into(),
            commands,
        ));
        let listed = |rows: &[(String, String)]| -> Vec<Entry> {
            rows.iter()
                .map(|(keys, what)| Entry {
                    keys: keys.clone(),
                    what: what.clone(),
                })
                .collect()
        };
        out.push((
            "Your commands and skills (commands/ and skills/ folders)".into(),
            listed(&state.custom),
        ));
        out.push((
            "MCP prompts (from connected servers; also in /prompts)".into(),
            listed(&state.mcp_prompts),
        ));
    }
    let q = state.query.trim().to_lowercase();
    for (_, entries) in &mut out {
        entries.retain(|e| {
            q.is_empty() || e.keys.to_lowercase().contains(&q) || e.what.to_lowercase().contains(&q)
        });
    }
    out.retain(|(_, entries)| !entries.is_empty());
    out
}

/// Words of `text` in lines of at most `width` columns.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().map(|l| l.width()).unwrap_or(0);
        if last > 0 && last + 1 + word.width() > width {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(word);
        }
    }
    lines
}

/// The help as lines `width` columns wide: each key in a column as wide
/// as the widest, each description wrapped beside it.
pub fn lines(keys: &KeyMap, styles: &Styles, state: &HelpState, width: u16) -> Vec<Line<'static>> {
    let sections = sections(keys, state);
    let key_col = sections
        .iter()
        .flat_map(|(_, e)| e.iter().map(|e| e.keys.width()))
        .max()
        .unwrap_or(0)
        .min(usize::from(width) / 3)
        + 2;
    let what_col = usize::from(width).saturating_sub(key_col + 2).max(10);
    let mut out = Vec::new();
    for (title, entries) in sections {
        if !out.is_empty() {
            out.push(Line::default());
        }
        for part in wrap(&title, usize::from(width).max(10)) {
            out.push(Line::from(Span::styled(part, styles.accent)));
        }
        for e in entries {
            let mut what = wrap(&e.what, what_col).into_iter();
            let key = if e.keys.width() > key_col - 2 {
                out.push(Line::from(Span::styled(
                    format!("  {}", e.keys),
                    styles.user,
                )));
                String::new()
            } else {
                e.keys
            };
            let pad = key_col - key.width();
            out.push(Line::from(vec![
                Span::styled(format!("  {key}{}", " ".repeat(pad)), styles.user),
                Span::styled(what.next().unwrap_or_default(), styles.text),
            ]));
            for more in what {
                out.push(Line::from(Span::styled(
                    format!("  {}{more}", " ".repeat(key_col)),
                    styles.text,
                )));
            }
        }
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled("Nothing matches.", styles.dim)));
    }
    out.push(Line::default());
    let notes = [
        "Keys can be changed in the config's [keys] table: action = \"ctrl+g\".",
        "Selecting text: cairn takes the mouse for scrolling; hold Shift while dragging \
         (Option in iTerm2) to select as usual, or press F2 to let the terminal \
         have the mouse.",
    ];
    for note in notes {
        for part in wrap(note, usize::from(width).max(10)) {
            out.push(Line::from(Span::styled(part, styles.dim)));
        }
    }
    out
}

/// The title: how to search, scroll and close, from the key table.
fn title(keys: &KeyMap, state: &HelpState) -> String {
    let first = |a| {
        keys.keys_for(a)
            .split(" / ")
            .next()
            .unwrap_or("")
            .to_string()
    };
    let what = if state.only.is_empty() {
        "Keys and commands".to_string()
    } else {
        format!("Keys — {}", state.only[0].title())
    };
    format!(
        " {what} · {} search · {}/{} scroll · Esc closes ",
        first(Action::HelpSearch),
        first(Action::HelpDown),
        first(Action::HelpUp)
    )
}

pub fn render(area: Rect, buf: &mut Buffer, keys: &KeyMap, styles: &Styles, state: &mut HelpState) {
    let w = area.width.saturating_sub(4).max(area.width.min(30));
    let inner_w = w.saturating_sub(2);
    let search = state.searching || !state.query.is_empty();
    let content = lines(keys, styles, state, inner_w);
    let wanted = content.len() as u16 + 2 + u16::from(search);
    let h = wanted.min(area.height);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(rect, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(styles.accent)
        .title(Span::styled(title(keys, state), styles.accent));
    let mut inner = block.inner(rect);
    block.render(rect, buf);
    if search && inner.height > 0 {
        let cursor = if state.searching { "▏" } else { "" };
        let line = Line::from(vec![
            Span::styled("search: ", styles.accent),
            Span::styled(format!("{}{cursor}", state.query), styles.text),
        ]);
        buf.set_line(inner.x, inner.y, &line, inner.width);
        inner.y += 1;
        inner.height -= 1;
    }
    let max = (content.len() as u16).saturating_sub(inner.height);
    state.scroll = state.scroll.min(max);
    for (i, l) in content
        .iter()
        .skip(state.scroll as usize)
        .take(inner.height as usize)
        .enumerate()
    {
        buf.set_line(inner.x, inner.y + i as u16, l, inner.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(state: &HelpState, width: u16) -> String {
        lines(&KeyMap::default(), &Styles::default(), state, width)
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn lists_every_action_and_every_command() {
        let all = text(&HelpState::default(), 100);
        let all = all.split_whitespace().collect::<Vec<_>>().join(" ");
        for a in Action::all() {
            assert!(all.contains(a.description()), "{a:?} missing:\n{all}");
        }
        for c in COMMANDS {
            assert!(all.contains(&format!("/{}", c.name)), "/{} missing", c.name);
        }
        assert!(all.contains("/rename <title>"));
        assert!(all.contains("Session browser") && all.contains("Ctrl+R"));
    }

    #[test]
    fn lists_the_persons_own_commands_in_their_section() {
        let state = HelpState::with_custom(
            &[crate::tui::commands::CustomEntry {
                name: "git:status".into(),
                args: "[focus]".into(),
                description: "Summarise the working tree".into(),
            }],
            &[],
        );
        let all = text(&state, 100);
        assert!(all.contains("Your commands"), "{all}");
        assert!(all.contains("/git:status [focus]"), "{all}");
        assert!(all.contains("Summarise the working tree"), "{all}");
        assert!(!all.contains("MCP prompts"), "{all}");
        assert!(!text(&HelpState::default(), 100).contains("Your commands"));
    }

    #[test]
    fn lists_the_mcp_prompts_of_the_slash_menu() {
        let prompt = crate::tui::commands::CustomEntry {
            name: "mcp__everything__complex_prompt".into(),
            args: "<temperature> [style]".into(),
            description: "A prompt with arguments".into(),
        };
        let state = HelpState::with_custom(&[], std::slice::from_ref(&prompt));
        let all = text(&state, 120);
        assert!(all.contains("MCP prompts"), "{all}");
        assert!(
            all.contains("/mcp__everything__complex_prompt <temperature> [style]"),
            "{all}"
        );
        assert!(all.contains("A prompt with arguments"), "{all}");
        assert!(!all.contains("Your commands"), "{all}");
        let searched = HelpState {
            query: "complex".into(),
            ..state
        };
        let found = text(&searched, 120);
        assert!(found.contains("MCP prompts") && found.contains("complex_prompt"));
        assert!(!found.contains("Session browser"), "{found}");
    }

    #[test]
    fn search_keeps_matching_rows_and_their_sections() {
        let state = HelpState {
            query: "rename".into(),
            ..HelpState::default()
        };
        let found = text(&state, 100);
        assert!(found.contains("/rename <title>"), "{found}");
        assert!(found.contains("Session browser"), "{found}");
        assert!(!found.contains("Permission dialog"), "{found}");
    }

    #[test]
    fn wraps_instead_of_cutting_at_narrow_widths() {
        let narrow = text(&HelpState::default(), 40);
        assert!(narrow.lines().all(|l| l.width() <= 40), "{narrow}");
        let joined = narrow.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains("on an empty prompt, twice quits"),
            "{narrow}"
        );
    }

    #[test]
    fn a_dialog_shows_its_own_keys_only() {
        let only = text(&HelpState::for_scopes(vec![Scope::Dialog]), 80);
        assert!(only.contains("allow once") && only.contains("deny without a reason"));
        assert!(!only.contains("Commands") && !only.contains("Session browser"));
    }
}
