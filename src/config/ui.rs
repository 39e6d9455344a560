//! `[ui]`: how the interface talks to the terminal, and how cairn gets the
//! person's attention when a turn finishes or a dialog starts waiting while
//! the terminal is not focused.

use serde::Deserialize;

/// The notification sent, when focus is elsewhere.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    /// The terminal bell (BEL).
    #[default]
    Bell,
    /// OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, foot…).
    Osc9,
    /// OSC 777 (rxvt-unicode, VTE terminals such as GNOME Terminal, Ghostty).
    Osc777,
    Off,
}

/// How many colours to draw with, when the terminal's own word (terminfo,
/// `COLORTERM`) is wrong: `[ui] colors = "16"`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum Colors {
    #[serde(rename = "truecolor", alias = "24bit")]
    TrueColor,
    #[serde(rename = "256")]
    Ansi256,
    #[serde(rename = "16")]
    Ansi16,
    #[serde(rename = "none")]
    None,
}

/// What stays in the terminal's scrollback after quitting (`[ui] on_exit`).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnExit {
    /// The last prompt and the answer that ended its turn.
    #[default]
    Summary,
    /// Every prompt, answer and notice of the session, as plain text.
    Transcript,
    /// Nothing but what must be said (jobs stopped by quitting).
    None,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// Forces the colour depth; detected from terminfo and `COLORTERM`
    /// when unset.
    pub colors: Option<Colors>,
    pub notify: Option<Notify>,
    pub on_exit: Option<OnExit>,
    /// Where `/export` writes when no path is given (`~/` is the home; a
    /// relative folder is taken from the project root). cairn's data
    /// directory (`exports/`) when unset.
    pub export_dir: Option<String>,
    /// Let the terminal scroll the transcript itself (a scroll region and
    /// `CSI n S`) instead of redrawing every row. On unless set to false,
    /// for terminals or multiplexers where scroll regions misbehave.
    pub scroll_regions: Option<bool>,
}

impl UiConfig {
    pub fn scroll_regions(&self) -> bool {
        self.scroll_regions.unwrap_or(true)
    }
}

impl Notify {
    /// The bytes that notify with `text` (control characters removed).
    pub fn sequence(self, text: &str) -> Option<String> {
        let clean: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
        match self {
            Notify::Bell => Some("\x07".into()),
            Notify::Osc9 => Some(format!("\x1b]9;{clean}\x07")),
            Notify::Osc777 => Some(format!("\x1b]777;notify;cairn;{clean}\x07")),
            Notify::Off => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_and_no_control_characters_inside() {
        assert_eq!(Notify::Bell.sequence("x").as_deref(), Some("\x07"));
        assert_eq!(
            Notify::Osc9.sequence("done\x1b]52;c;AA\x07").as_deref(),
            Some("\x1b]9;done]52;c;AA\x07")
        );
        assert_eq!(
            Notify::Osc777.sequence("waiting").as_deref(),
            Some("\x1b]777;notify;cairn;waiting\x07")
        );
        assert_eq!(Notify::Off.sequence("x"), None);
        let c: UiConfig = toml::from_str("notify = \"osc777\"").unwrap();
        assert_eq!(c.notify, Some(Notify::Osc777));
        let c: UiConfig = toml::from_str("on_exit = \"transcript\"").unwrap();
        assert_eq!(c.on_exit, Some(OnExit::Transcript));
        assert!(toml::from_str::<UiConfig>("on_exit = \"all\"").is_err());
    }

    #[test]
    fn scroll_regions_are_on_unless_turned_off() {
        let unset: UiConfig = toml::from_str("").unwrap();
        assert!(unset.scroll_regions());
        let off: UiConfig = toml::from_str("scroll_regions = false").unwrap();
        assert!(!off.scroll_regions());
        assert!(toml::from_str::<UiConfig>("scroll_region = false").is_err());
    }

    #[test]
    fn colours_are_named_by_their_count() {
        let c: UiConfig = toml::from_str("colors = \"16\"").unwrap();
        assert_eq!(c.colors, Some(Colors::Ansi16));
        let c: UiConfig = toml::from_str("colors = \"24bit\"").unwrap();
        assert_eq!(c.colors, Some(Colors::TrueColor));
        let err = toml::from_str::<UiConfig>("colors = \"88\"").unwrap_err();
        assert!(err.to_string().contains("256"), "{err}");
    }
}
