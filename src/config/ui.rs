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

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    pub notify: Option<Notify>,
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
    }

    #[test]
    fn scroll_regions_are_on_unless_turned_off() {
        let unset: UiConfig = toml::from_str("").unwrap();
        assert!(unset.scroll_regions());
        let off: UiConfig = toml::from_str("scroll_regions = false").unwrap();
        assert!(!off.scroll_regions());
        assert!(toml::from_str::<UiConfig>("scroll_region = false").is_err());
    }
}
