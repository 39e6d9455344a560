//! `[ui]`: how the interface talks to the terminal.

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_regions_are_on_unless_turned_off() {
        let unset: UiConfig = toml::from_str("").unwrap();
        assert!(unset.scroll_regions());
        let off: UiConfig = toml::from_str("scroll_regions = false").unwrap();
        assert!(!off.scroll_regions());
        assert!(toml::from_str::<UiConfig>("scroll_region = false").is_err());
    }
}
