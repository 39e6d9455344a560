//! Every key binding in one table; a config `[keys]` map can override it.

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// `[keys]` from the config: action name → key string ("ctrl+g"), or several
/// separated by commas ("ctrl+g, f4").
pub type KeyConfig = BTreeMap<String, String>;

/// Something a key can do. The name (`as_str`) is what `[keys]` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Submit,
    Newline,
    Cancel,
    Interrupt,
    ScrollUp,
    ScrollDown,
    ScrollTop,
    ScrollBottom,
    FocusTranscript,
    CycleMode,
    ToggleMouse,
    Help,
    OpenEditor,
    HistoryPrev,
    HistoryNext,
    SelectPrev,
    SelectNext,
    SelectFirst,
    SelectLast,
    ToggleExpand,
    CopyMessage,
    CopyCode,
    AllowOnce,
    AllowAlways,
    AllowUnsandboxed,
    Deny,
    ToggleDiffLayout,
    Palette,
    Sessions,
    ViewDiff,
}

/// Where an action applies, for the help overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Prompt,
    Transcript,
    Dialog,
}

impl Action {
    /// Name, default keys, where it applies, what it does.
    const TABLE: &'static [(Action, &'static str, &'static str, Scope, &'static str)] = &[
        (
            Action::Submit,
            "submit",
            "enter",
            Scope::Prompt,
            "send the prompt",
        ),
        (
            Action::Newline,
            "newline",
            "shift+enter, ctrl+j",
            Scope::Prompt,
            "insert a newline",
        ),
        (
            Action::Cancel,
            "cancel",
            "esc",
            Scope::Global,
            "cancel the running turn",
        ),
        (
            Action::Interrupt,
            "interrupt",
            "ctrl+c",
            Scope::Global,
            "cancel; twice quits",
        ),
        (
            Action::ScrollUp,
            "scroll_up",
            "pageup",
            Scope::Global,
            "scroll the transcript up",
        ),
        (
            Action::ScrollDown,
            "scroll_down",
            "pagedown",
            Scope::Global,
            "scroll the transcript down",
        ),
        (
            Action::ScrollTop,
            "scroll_top",
            "home",
            Scope::Global,
            "jump to the start",
        ),
        (
            Action::ScrollBottom,
            "scroll_bottom",
            "end",
            Scope::Global,
            "follow new output",
        ),
        (
            Action::FocusTranscript,
            "focus_transcript",
            "tab",
            Scope::Global,
            "switch focus prompt/transcript",
        ),
        (
            Action::CycleMode,
            "cycle_mode",
            "shift+tab",
            Scope::Global,
            "cycle the permission mode",
        ),
        (
            Action::ToggleMouse,
            "toggle_mouse",
            "f2",
            Scope::Global,
            "mouse capture on/off (off: select text)",
        ),
        (
            Action::Help,
            "help",
            "f1",
            Scope::Global,
            "this help (also ? on an empty prompt)",
        ),
        (
            Action::Palette,
            "palette",
            "ctrl+p",
            Scope::Global,
            "command palette (also / on an empty prompt; @ picks a file)",
        ),
        (
            Action::ViewDiff,
            "view_diff",
            "v",
            Scope::Transcript,
            "open the selected edit's diff full-screen (t: layout)",
        ),
        (
            Action::Sessions,
            "sessions",
            "ctrl+s",
            Scope::Global,
            "browse, search and resume sessions (Esc twice rewinds)",
        ),
        (
            Action::OpenEditor,
            "open_editor",
            "ctrl+g",
            Scope::Prompt,
            "edit the prompt in $EDITOR",
        ),
        (
            Action::HistoryPrev,
            "history_prev",
            "up",
            Scope::Prompt,
            "earlier prompt (on the first line)",
        ),
        (
            Action::HistoryNext,
            "history_next",
            "down",
            Scope::Prompt,
            "later prompt (on the last line)",
        ),
        (
            Action::SelectPrev,
            "select_prev",
            "k, up",
            Scope::Transcript,
            "select the previous cell",
        ),
        (
            Action::SelectNext,
            "select_next",
            "j, down",
            Scope::Transcript,
            "select the next cell",
        ),
        (
            Action::SelectFirst,
            "select_first",
            "g",
            Scope::Transcript,
            "select the first cell",
        ),
        (
            Action::SelectLast,
            "select_last",
            "shift+g",
            Scope::Transcript,
            "select the last cell",
        ),
        (
            Action::ToggleExpand,
            "toggle_expand",
            "enter",
            Scope::Transcript,
            "expand / fold the cell",
        ),
        (
            Action::CopyMessage,
            "copy_message",
            "y",
            Scope::Transcript,
            "copy the cell's text",
        ),
        (
            Action::CopyCode,
            "copy_code",
            "c",
            Scope::Transcript,
            "copy the next code block",
        ),
        (
            Action::AllowOnce,
            "allow_once",
            "a",
            Scope::Dialog,
            "allow once",
        ),
        (
            Action::AllowAlways,
            "allow_always",
            "s",
            Scope::Dialog,
            "allow always (stores the rule shown)",
        ),
        (
            Action::AllowUnsandboxed,
            "allow_unsandboxed",
            "u",
            Scope::Dialog,
            "allow once, outside the sandbox (commands only)",
        ),
        (
            Action::Deny,
            "deny",
            "d",
            Scope::Dialog,
            "deny, then type an optional reason",
        ),
        (
            Action::ToggleDiffLayout,
            "toggle_diff_layout",
            "t",
            Scope::Dialog,
            "unified / side-by-side diff",
        ),
    ];

    pub fn as_str(self) -> &'static str {
        Self::row(self).1
    }

    pub fn description(self) -> &'static str {
        Self::row(self).4
    }

    pub fn scope(self) -> Scope {
        Self::row(self).3
    }

    pub fn all() -> impl Iterator<Item = Action> {
        Self::TABLE.iter().map(|r| r.0)
    }

    fn row(self) -> &'static (Action, &'static str, &'static str, Scope, &'static str) {
        // The table lists every variant; the test `table_covers_every_action` guards it.
        Self::TABLE
            .iter()
            .find(|r| r.0 == self)
            .unwrap_or(&Self::TABLE[0])
    }

    pub fn parse(name: &str) -> Option<Action> {
        Self::TABLE.iter().find(|r| r.1 == name).map(|r| r.0)
    }
}

/// One key with its modifiers, comparable with crossterm's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBinding {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl KeyBinding {
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let (code, mods) = normalize(key.code, key.modifiers);
        code == self.code && mods == self.mods
    }

    /// Parses "ctrl+g", "shift+tab", "f2", "pageup", "?".
    pub fn parse(s: &str) -> Result<KeyBinding, String> {
        let s = s.trim();
        let mut mods = KeyModifiers::NONE;
        let mut parts: Vec<&str> = s.split('+').collect();
        // "ctrl++" and "+" name the plus key itself.
        if s.ends_with("++") || s == "+" {
            parts.retain(|p| !p.is_empty());
            parts.push("+");
        }
        let key = parts.pop().unwrap_or_default();
        for m in parts {
            mods |= match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => KeyModifiers::CONTROL,
                "alt" | "meta" => KeyModifiers::ALT,
                "shift" => KeyModifiers::SHIFT,
                other => return Err(format!("unknown modifier `{other}` in key `{s}`")),
            };
        }
        let lower = key.to_ascii_lowercase();
        let code = match lower.as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => {
                mods |= KeyModifiers::SHIFT;
                KeyCode::Tab
            }
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = key.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(format!("unknown key `{key}` in `{s}`")),
                }
            }
        };
        let (code, mods) = normalize(code, mods);
        Ok(KeyBinding { code, mods })
    }
}

/// Terminals disagree on how shifted keys arrive (BackTab vs Shift+Tab,
/// 'G' with or without SHIFT); bring both sides to one form.
fn normalize(code: KeyCode, mods: KeyModifiers) -> (KeyCode, KeyModifiers) {
    let mods = mods & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
    match code {
        KeyCode::BackTab => (KeyCode::Tab, mods | KeyModifiers::SHIFT),
        KeyCode::Char(c) if c.is_ascii_uppercase() => (
            KeyCode::Char(c.to_ascii_lowercase()),
            mods | KeyModifiers::SHIFT,
        ),
        KeyCode::Char(c) if !c.is_ascii_alphabetic() => (code, mods - KeyModifiers::SHIFT),
        _ => (code, mods),
    }
}

impl fmt::Display for KeyBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl+")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("Alt+")?;
        }
        let shifted_letter = matches!(self.code, KeyCode::Char(c) if c.is_ascii_lowercase());
        if self.mods.contains(KeyModifiers::SHIFT) && !shifted_letter {
            f.write_str("Shift+")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c)
                if shifted_letter
                    && self
                        .mods
                        .intersects(KeyModifiers::SHIFT | KeyModifiers::CONTROL) =>
            {
                write!(f, "{}", c.to_ascii_uppercase())
            }
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The effective bindings: defaults with the config's overrides applied.
#[derive(Debug, Clone)]
pub struct KeyMap {
    bindings: BTreeMap<Action, Vec<KeyBinding>>,
}

impl Default for KeyMap {
    fn default() -> Self {
        let mut bindings = BTreeMap::new();
        for row in Action::TABLE {
            let keys = parse_list(row.2).unwrap_or_default();
            bindings.insert(row.0, keys);
        }
        KeyMap { bindings }
    }
}

fn parse_list(s: &str) -> Result<Vec<KeyBinding>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(KeyBinding::parse)
        .collect()
}

impl KeyMap {
    /// Defaults overridden by `config`; returns the problems found (unknown
    /// action, unparsable key) so they can be shown as a notice.
    pub fn with_overrides(config: &KeyConfig) -> (KeyMap, Vec<String>) {
        let mut map = KeyMap::default();
        let mut problems = Vec::new();
        for (name, keys) in config {
            let Some(action) = Action::parse(name) else {
                problems.push(format!("[keys]: unknown action `{name}`"));
                continue;
            };
            match parse_list(keys) {
                Ok(list) => {
                    map.bindings.insert(action, list);
                }
                Err(e) => problems.push(format!("[keys] {name}: {e}")),
            }
        }
        (map, problems)
    }

    pub fn is(&self, action: Action, key: &KeyEvent) -> bool {
        self.bindings
            .get(&action)
            .is_some_and(|keys| keys.iter().any(|k| k.matches(key)))
    }

    pub fn keys_for(&self, action: Action) -> String {
        self.bindings
            .get(&action)
            .map(|keys| {
                keys.iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(" / ")
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn table_covers_every_action() {
        for a in Action::all() {
            assert_eq!(Action::parse(a.as_str()), Some(a));
        }
        assert_eq!(Action::TABLE.len(), Action::ViewDiff as usize + 1);
    }

    #[test]
    fn parses_and_matches_keys() {
        let map = KeyMap::default();
        assert!(map.is(
            Action::CycleMode,
            &key(KeyCode::BackTab, KeyModifiers::SHIFT)
        ));
        assert!(map.is(
            Action::OpenEditor,
            &key(KeyCode::Char('g'), KeyModifiers::CONTROL)
        ));
        assert!(map.is(
            Action::SelectLast,
            &key(KeyCode::Char('G'), KeyModifiers::SHIFT)
        ));
        assert!(map.is(
            Action::SelectLast,
            &key(KeyCode::Char('G'), KeyModifiers::NONE)
        ));
        assert!(!map.is(
            Action::SelectFirst,
            &key(KeyCode::Char('G'), KeyModifiers::NONE)
        ));
        assert!(map.is(
            Action::Newline,
            &key(KeyCode::Char('j'), KeyModifiers::CONTROL)
        ));
        assert_eq!(
            KeyBinding::parse("?")
                .map(|k| k.matches(&key(KeyCode::Char('?'), KeyModifiers::SHIFT))),
            Ok(true)
        );
    }

    #[test]
    fn config_overrides_and_reports_problems() {
        let mut cfg = KeyConfig::new();
        cfg.insert("open_editor".into(), "ctrl+e, f4".into());
        cfg.insert("nope".into(), "x".into());
        cfg.insert("help".into(), "hyper+x".into());
        let (map, problems) = KeyMap::with_overrides(&cfg);
        assert!(map.is(Action::OpenEditor, &key(KeyCode::F(4), KeyModifiers::NONE)));
        assert!(!map.is(
            Action::OpenEditor,
            &key(KeyCode::Char('g'), KeyModifiers::CONTROL)
        ));
        assert_eq!(problems.len(), 2);
        assert_eq!(map.keys_for(Action::OpenEditor), "Ctrl+E / F4");
    }
}
