//! Every key binding in one table, read by the main screen and every
//! dialog: the main screen's (`table`), the dialogs' (`dialogs`), text
//! fields and the permission dialog's answers (`fields`). A config `[keys]`
//! map can override any of them; help lists them by the screen they belong
//! to.

use std::collections::BTreeMap;
use std::fmt;

mod dialogs;
mod fields;
mod table;

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
    PasteImage,
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
    HunkNext,
    HunkPrev,
    HunkToggle,
    Palette,
    Sessions,
    ViewDiff,
    DeleteToStart,
    DeleteToEnd,
    DeleteWordBack,
    Undo,
    Complete,
    MenuPrev,
    MenuNext,
    MenuClose,
    // The dialogs (`dialogs.rs`).
    PanelConfirm,
    PanelReject,
    PanelToggleFork,
    PanelToggle,
    PanelToggleRestore,
    PanelDown,
    PanelUp,
    PanelPageDown,
    PanelPageUp,
    DiffPageDown,
    DiffTop,
    PickerPrev,
    PickerNext,
    PickerPageUp,
    PickerPageDown,
    PickerChoose,
    PickerClear,
    PickerCancel,
    BrowserClose,
    BrowserResume,
    BrowserPrev,
    BrowserNext,
    BrowserPageUp,
    BrowserPageDown,
    BrowserScope,
    BrowserRename,
    BrowserDelete,
    BrowserFork,
    BrowserRewind,
    BrowserExport,
    BrowserConfirmDelete,
    BrowserExportMarkdown,
    BrowserExportJson,
    BrowserOpenFork,
    BrowserOpenReadOnly,
    HelpDown,
    HelpUp,
    HelpPageDown,
    HelpPageUp,
    TrustYes,
    TrustNo,
    TrustChoose,
    TrustSwitch,
    TrustQuit,
    JobPrev,
    JobNext,
    JobOutput,
    JobKill,
    // Text fields, the permission dialog, input forms (`fields.rs`).
    TextSubmit,
    TextCancel,
    TextDeleteBack,
    TextClear,
    TextDeleteWord,
    DialogChoose,
    DialogDismiss,
    DialogPrevChoice,
    DialogNextChoice,
    RulePrev,
    RuleNext,
    DialogScrollDown,
    DialogScrollUp,
    DialogPageDown,
    DialogPageUp,
    FormSubmit,
    FormDecline,
    FormCancel,
    FormNext,
    FormPrev,
    FormChoiceNext,
    FormChoicePrev,
    DialogKeys,
    HelpSearch,
}

/// Where an action applies: the screens the help overlay lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Prompt,
    Transcript,
    /// The permission dialog.
    Dialog,
    /// A line being typed inside a dialog.
    TextField,
    /// A server's request for input.
    Form,
    /// Every dialog over the transcript.
    Panel,
    Picker,
    Confirm,
    TextPanel,
    Diff,
    Browser,
    Help,
    Trust,
    /// The background jobs panel (`/jobs`).
    Jobs,
}

impl Scope {
    /// Every screen, in the order help lists them.
    pub const ALL: [Scope; 15] = [
        Scope::Global,
        Scope::Prompt,
        Scope::Transcript,
        Scope::Dialog,
        Scope::TextField,
        Scope::Form,
        Scope::Panel,
        Scope::Picker,
        Scope::Confirm,
        Scope::TextPanel,
        Scope::Diff,
        Scope::Browser,
        Scope::Jobs,
        Scope::Help,
        Scope::Trust,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Anywhere",
            Scope::Prompt => "Prompt",
            Scope::Transcript => "Transcript (Tab to focus)",
            Scope::Dialog => "Permission dialog",
            Scope::TextField => "Typing in a dialog (deny reason, new title)",
            Scope::Form => "A server's input form",
            Scope::Panel => "Dialogs",
            Scope::Picker => "Pickers (palette, files, model, mode, theme, rewind)",
            Scope::Confirm => "Confirmations (undo, rewind, restoring files)",
            Scope::TextPanel => "Text panels (/mcp, /permissions)",
            Scope::Diff => "Full-screen diff",
            Scope::Browser => "Session browser",
            Scope::Help => "This help",
            Scope::Trust => "Trust screen",
            Scope::Jobs => "Background jobs (/jobs)",
        }
    }
}

/// Name, default keys, where it applies, what it does.
type Row = (Action, &'static str, &'static str, Scope, &'static str);

fn rows() -> impl Iterator<Item = &'static Row> {
    table::TABLE
        .iter()
        .chain(dialogs::DIALOG_TABLE)
        .chain(fields::FIELD_TABLE)
}

impl Action {
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
        rows().map(|r| r.0)
    }

    fn row(self) -> &'static Row {
        // The tables list every variant; the test `table_covers_every_action` guards it.
        rows().find(|r| r.0 == self).unwrap_or(&table::TABLE[0])
    }

    pub fn parse(name: &str) -> Option<Action> {
        rows().find(|r| r.1 == name).map(|r| r.0)
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
        for row in rows() {
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
        assert_eq!(rows().count(), Action::HelpSearch as usize + 1);
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
