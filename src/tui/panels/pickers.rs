//! The pickers: command palette, files (`@`), model, permission mode, theme,
//! and the prompts to rewind to (this session's or a stored one's).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{Outcome, Panel, PanelAction};
use crate::config::Mode;
use crate::protocol::AgentCommand;
use crate::sessions::SessionId;
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::widgets::picker::{Picker, PickerAction, PickerItem, PickerStyles};

/// Slash commands whose argument is typed after choosing them.
const TAKES_TEXT: [&str; 3] = ["rename", "compact", "export"];

/// The project's files (and servers' resources), `query` already typed.
pub fn files_picker(files: Vec<String>, query: &str) -> Panel {
    let items = files
        .into_iter()
        .map(|f| PickerItem {
            label: f.clone(),
            detail: String::new(),
            value: f,
        })
        .collect();
    Panel::Files(Picker::new("Files (@)", items, true).with_query(query))
}

pub fn models_picker(current: &str) -> Panel {
    let catalog = crate::llm::ModelCatalog::global();
    // Two names of one model (an alias, a dated id and the catalogue's)
    // are one row.
    let same = |id: &str| {
        catalog
            .catalogue_id(undated(id))
            .unwrap_or_else(|| id.to_ascii_lowercase())
    };
    let mut seen = std::collections::HashSet::new();
    let mut items: Vec<PickerItem> = catalog
        .pickable()
        .iter()
        .filter(|m| seen.insert(same(&m.id)))
        .map(|m| PickerItem {
            label: m.id.clone(),
            detail: match crate::llm::ModelCatalog::learned_source(&m.id) {
                Some(from) => format!("{}k context, from {from}", m.context_window / 1000),
                None => format!("{}k context", m.context_window / 1000),
            },
            value: m.id.clone(),
        })
        .collect();
    // The model in use, under whatever name it was chosen by.
    let current = match items
        .iter()
        .find(|i| i.value == current || same(&i.value) == same(current))
    {
        Some(i) => i.value.clone(),
        None => current.to_string(),
    };
    let current = current.as_str();
    if !items.iter().any(|i| i.value == current) {
        items.insert(
            0,
            PickerItem {
                label: current.to_string(),
                detail: "current".into(),
                value: current.to_string(),
            },
        );
    }
    let mut p = Picker::new("Model (type any id, Enter)", items, false);
    p.select_value(current);
    Panel::Models(p)
}

/// `id` without a release date at its end (`-20250929`, `-2025-04-14`).
fn undated(id: &str) -> &str {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, date)) = id.rsplit_once('-')
        && date.len() == 8
        && digits(date)
    {
        return head;
    }
    let parts: Vec<&str> = id.rsplitn(4, '-').collect();
    if let [d, m, y, head] = parts[..]
        && (y.len(), m.len(), d.len()) == (4, 2, 2)
        && digits(y)
        && digits(m)
        && digits(d)
    {
        return head;
    }
    id
}

pub fn modes_picker(current: Mode) -> Panel {
    let items = Mode::ALL
        .iter()
        .map(|m| PickerItem {
            label: m.as_str().to_string(),
            detail: match m {
                Mode::Smart => "read-only tools run; writes and unsafe commands ask",
                Mode::AlwaysAsk => "everything but reading asks",
                Mode::Auto => "nothing asks but paths outside the project; deny rules hold",
                Mode::Chat => "no tools",
                Mode::Plan => "read-only exploration that ends in a plan you approve",
            }
            .into(),
            value: m.as_str().to_string(),
        })
        .collect();
    let mut p = Picker::new("Permission mode", items, false);
    p.select_value(current.as_str());
    Panel::Modes(p)
}

/// The themes by name, `current` selected.
pub fn themes_picker(names: &[String], current: &str) -> Panel {
    let items = names
        .iter()
        .map(|n| PickerItem {
            label: n.to_string(),
            detail: String::new(),
            value: n.to_string(),
        })
        .collect();
    let mut picker = Picker::new("Theme (previews as you move)", items, false);
    picker.select_value(current);
    Panel::Themes {
        picker,
        original: current.to_string(),
    }
}

/// The prompts of a stored session, newest first.
pub fn stored_rewind_panel(session: SessionId, prompts: Vec<(i64, String)>) -> Panel {
    let items = prompts
        .iter()
        .cloned()
        .enumerate()
        .rev()
        .map(|(i, (mid, text))| PickerItem {
            label: crate::text::one_line(&text),
            detail: format!("turn {}", i + 1),
            value: mid.to_string(),
        })
        .collect();
    Panel::StoredRewind {
        session,
        picker: Picker::new("Continue from before which prompt?", items, false),
        prompts,
    }
}

/// The prompts of the transcript, newest first, for rewinding; `None`
/// when there is none yet.
pub fn rewind_picker(prompts: &[String]) -> Option<Panel> {
    if prompts.is_empty() {
        return None;
    }
    let items = prompts
        .iter()
        .enumerate()
        .rev()
        .map(|(i, p)| PickerItem {
            label: crate::text::one_line(p),
            detail: format!("turn {}", i + 1),
            value: (i + 1).to_string(),
        })
        .collect();
    Some(Panel::Rewind(Picker::new(
        "Rewind to before which prompt?",
        items,
        false,
    )))
}

/// Keys for the picker panels; `None` for the other panels.
pub(super) fn handle_key(panel: &mut Panel, key: KeyEvent, keys: &KeyMap) -> Option<Outcome> {
    if matches!(panel, Panel::Rewind(_) | Panel::StoredRewind { .. }) {
        return Some(rewind_key(panel, key, keys));
    }
    let out = match panel {
        // An MCP prompt (`/mcp__SERVER__PROMPT args`) is not in the list.
        Panel::Commands(p)
            if keys.is(Action::PickerChoose, &key)
                && p.query().trim_start().starts_with("mcp__") =>
        {
            Outcome::close_with(PanelAction::Command(p.query().trim().to_string()))
        }
        Panel::Commands(p) => match p.handle_key(key, keys) {
            PickerAction::Cancel => Outcome::close(),
            PickerAction::Choose(name) if TAKES_TEXT.contains(&name.as_str()) => {
                Outcome::close_with(PanelAction::TypeCommand(name))
            }
            PickerAction::Choose(name) => Outcome::close_with(PanelAction::Command(name)),
            _ => Outcome::keep(),
        },
        Panel::Files(p) => match p.handle_key(key, keys) {
            // What was typed after `@` stays in the prompt.
            PickerAction::Cancel => {
                Outcome::close_with(PanelAction::TypedMention(p.query().to_string()))
            }
            PickerAction::Choose(path) => Outcome::close_with(PanelAction::InsertFile(path)),
            _ => Outcome::keep(),
        },
        Panel::Models(p) => {
            let typed = p.query().trim().to_string();
            match p.handle_key(key, keys) {
                PickerAction::Cancel => Outcome::close(),
                PickerAction::Choose(id) => Outcome::close_with(PanelAction::Model(id)),
                PickerAction::None if keys.is(Action::PickerChoose, &key) && !typed.is_empty() => {
                    Outcome::close_with(PanelAction::Model(typed))
                }
                _ => Outcome::keep(),
            }
        }
        Panel::Modes(p) => match p.handle_key(key, keys) {
            PickerAction::Cancel => Outcome::close(),
            PickerAction::Choose(m) => match Mode::parse(&m) {
                Some(mode) => Outcome::close_with(PanelAction::Mode(mode)),
                None => Outcome::close(),
            },
            _ => Outcome::keep(),
        },
        Panel::Themes { picker, original } => match picker.handle_key(key, keys) {
            PickerAction::Cancel => {
                Outcome::close_with(PanelAction::PreviewTheme(original.clone()))
            }
            PickerAction::Moved(name) => Outcome {
                keep: true,
                action: PanelAction::PreviewTheme(name),
            },
            PickerAction::Choose(name) => Outcome::close_with(PanelAction::ChooseTheme(name)),
            PickerAction::None => Outcome::keep(),
        },
        _ => return None,
    };
    Some(out)
}

/// Keys for the prompts to rewind to; choosing a stored session's prompt
/// asks how to continue from it.
fn rewind_key(panel: &mut Panel, key: KeyEvent, keys: &KeyMap) -> Outcome {
    match panel {
        Panel::Rewind(p) => match p.handle_key(key, keys) {
            PickerAction::Cancel => Outcome::close(),
            PickerAction::Choose(turn) => match turn.parse() {
                Ok(turn) => {
                    Outcome::close_with(PanelAction::Agent(AgentCommand::PrepareRewind { turn }))
                }
                Err(_) => Outcome::close(),
            },
            _ => Outcome::keep(),
        },
        Panel::StoredRewind {
            session,
            picker,
            prompts,
        } => match picker.handle_key(key, keys) {
            PickerAction::Cancel => Outcome::close(),
            PickerAction::Choose(message) => match message.parse::<i64>() {
                Ok(message) => {
                    let prompt = prompts
                        .iter()
                        .find(|(m, _)| *m == message)
                        .map(|(_, p)| p.clone())
                        .unwrap_or_default();
                    *panel = Panel::ConfirmStoredRewind {
                        session: session.clone(),
                        message,
                        prompt,
                        fork: true,
                    };
                    Outcome::keep()
                }
                Err(_) => Outcome::close(),
            },
            _ => Outcome::keep(),
        },
        _ => Outcome::keep(),
    }
}

fn picker_styles(s: &Styles) -> PickerStyles {
    PickerStyles {
        border: s.accent,
        text: s.text,
        detail: s.dim,
        selected: s.focused_choice,
        matched: s.accent.add_modifier(ratatui::style::Modifier::BOLD),
    }
}

/// Draws a picker panel; false for the other panels.
pub(super) fn render(panel: &mut Panel, area: Rect, buf: &mut Buffer, s: &Styles) -> bool {
    match panel {
        Panel::Commands(p)
        | Panel::Files(p)
        | Panel::Models(p)
        | Panel::Modes(p)
        | Panel::Rewind(p)
        | Panel::StoredRewind { picker: p, .. }
        | Panel::Themes { picker: p, .. } => {
            p.render(area, buf, &picker_styles(s));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_in_use_under_a_dated_name_is_listed_once() {
        let all = crate::llm::ModelCatalog::global().pickable().len();
        let Panel::Models(p) = models_picker("claude-sonnet-4-5-20250929") else {
            panic!("not the model picker");
        };
        // No extra "current" row: it is the catalogue's own, highlighted.
        assert_eq!(p.visible_count(), all);
        assert_eq!(p.selected_value(), Some("claude-sonnet-4-5"));
        let Panel::Models(p) = models_picker("my-own-model") else {
            panic!("not the model picker");
        };
        assert_eq!(p.visible_count(), all + 1);
        assert_eq!(p.selected_value(), Some("my-own-model"));
        assert_eq!(undated("gpt-4.1-2025-04-14"), "gpt-4.1");
        assert_eq!(undated("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(undated("qwen2.5-coder:7b"), "qwen2.5-coder:7b");
    }
}
