//! How hard a reasoning model thinks: `effort = "high"`, `[models.ID]
//! effort`, `--effort`, `/effort`. Each wire format carries it in its own
//! field (see `crate::llm`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl Effort {
    pub const ALL: [Effort; 5] = [
        Effort::Minimal,
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::Xhigh,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Minimal => "minimal",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
        }
    }

    pub fn parse(s: &str) -> Option<Effort> {
        let s = s.trim().to_ascii_lowercase();
        let s = if s == "x-high" || s == "extra-high" {
            "xhigh".to_string()
        } else {
            s
        };
        Effort::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// The thinking budget in tokens, for formats that count thinking
    /// (Anthropic, Gemini 2.5, Bedrock's Claude).
    pub fn budget_tokens(self) -> u32 {
        match self {
            Effort::Minimal => 1024,
            Effort::Low => 4096,
            Effort::Medium => 10_000,
            Effort::High => 24_000,
            Effort::Xhigh => 32_000,
        }
    }

    /// The nearest of low / medium / high, for formats with only those.
    pub fn three_level(self) -> &'static str {
        match self {
            Effort::Minimal | Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High | Effort::Xhigh => "high",
        }
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name_and_budgets_grow() {
        assert_eq!(Effort::parse("HIGH"), Some(Effort::High));
        assert_eq!(Effort::parse("x-high"), Some(Effort::Xhigh));
        assert_eq!(Effort::parse("max"), None);
        let budgets: Vec<u32> = Effort::ALL.iter().map(|e| e.budget_tokens()).collect();
        assert!(budgets.windows(2).all(|w| w[0] < w[1]), "{budgets:?}");
        assert_eq!(Effort::Minimal.three_level(), "low");
    }
}
