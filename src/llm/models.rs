//! The model catalogue (`assets/models.toml`): context window, output limit,
//! prices and capabilities. Unknown models get safe defaults.

use std::sync::OnceLock;

use serde::Deserialize;

use super::Usage;

const CATALOGUE: &str = include_str!("../../assets/models.toml");

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub context_window: u64,
    pub max_output: u64,
    /// US dollars per million tokens.
    pub input_price: Option<f64>,
    pub output_price: Option<f64>,
    pub cache_read_price: Option<f64>,
    pub cache_write_price: Option<f64>,
    #[serde(rename = "images", default)]
    pub supports_images: bool,
    #[serde(rename = "reasoning", default)]
    pub supports_reasoning: bool,
    /// Served only (or best) by OpenAI's Responses API.
    #[serde(default)]
    pub responses_api: bool,
}

impl ModelInfo {
    /// What an unknown model is assumed to be: a modest window, no images.
    pub fn unknown(id: &str) -> ModelInfo {
        ModelInfo {
            id: id.to_string(),
            aliases: Vec::new(),
            context_window: 32_000,
            max_output: 4_096,
            input_price: None,
            output_price: None,
            cache_read_price: None,
            cache_write_price: None,
            supports_images: false,
            supports_reasoning: false,
            responses_api: false,
        }
    }

    /// The price of one exchange, when the model's prices are known.
    pub fn cost(&self, u: &Usage) -> Option<f64> {
        let input = self.input_price?;
        let output = self.output_price?;
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        Some(
            per(u.input_tokens, input)
                + per(u.output_tokens, output)
                + per(u.cache_read_tokens, self.cache_read_price.unwrap_or(input))
                + per(
                    u.cache_write_tokens,
                    self.cache_write_price.unwrap_or(input),
                ),
        )
    }
}

#[derive(Debug, Deserialize)]
struct File {
    model: Vec<ModelInfo>,
}

pub struct ModelCatalog {
    models: Vec<ModelInfo>,
}

impl ModelCatalog {
    /// The catalogue built into cairn.
    pub fn global() -> &'static ModelCatalog {
        static CAT: OnceLock<ModelCatalog> = OnceLock::new();
        CAT.get_or_init(|| {
            // The file ships inside the binary and a test parses it, so a
            // failure here cannot come from a user; still, degrade to empty.
            let models = toml::from_str::<File>(CATALOGUE)
                .map(|f| f.model)
                .unwrap_or_default();
            ModelCatalog { models }
        })
    }

    pub fn models(&self) -> &[ModelInfo] {
        &self.models
    }

    /// The entry for `model_id`, or defaults for an unknown model.
    pub fn lookup(&self, model_id: &str) -> ModelInfo {
        let id = model_id.to_ascii_lowercase();
        let id = id.rsplit('/').next().unwrap_or(&id).to_string();
        let names = |m: &ModelInfo| {
            std::iter::once(m.id.to_ascii_lowercase())
                .chain(m.aliases.iter().map(|a| a.to_ascii_lowercase()))
                .collect::<Vec<_>>()
        };
        if let Some(m) = self.models.iter().find(|m| names(m).contains(&id)) {
            return m.clone();
        }
        // Longest name that the id starts with: `gpt-4.1-mini-2025…` is
        // gpt-4.1-mini, not gpt-4.1; tags like `qwen2.5-coder:7b` too.
        let mut best: Option<(usize, &ModelInfo)> = None;
        for m in &self.models {
            for n in names(m) {
                let fits = id.starts_with(&n)
                    && id[n.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| matches!(c, '-' | ':' | '@' | '.' | '_'));
                if fits && best.is_none_or(|(len, _)| n.len() > len) {
                    best = Some((n.len(), m));
                }
            }
        }
        match best {
            Some((_, m)) => {
                let mut m = m.clone();
                m.id = model_id.to_string();
                m
            }
            None => ModelInfo::unknown(model_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_parses_and_matches_dated_prefixed_and_tagged_ids() {
        let c = ModelCatalog::global();
        assert!(c.models().len() > 15);
        assert_eq!(
            c.lookup("claude-sonnet-4-5-20250929").context_window,
            200_000
        );
        assert_eq!(c.lookup("anthropic/claude-sonnet-4.5").max_output, 64_000);
        assert_eq!(c.lookup("gpt-4.1-mini-2025-04-14").input_price, Some(0.4));
        assert_eq!(c.lookup("qwen2.5-coder:7b").context_window, 32_768);
        assert!(c.lookup("gpt-4o").supports_images);
        let unknown = c.lookup("my-local-thing");
        assert_eq!(unknown.context_window, 32_000);
        assert!(!unknown.supports_images);
        assert_eq!(unknown.cost(&Usage::default()), None);
    }

    #[test]
    fn cost_counts_each_kind_of_token() {
        let m = ModelCatalog::global().lookup("claude-sonnet-4-5");
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 0,
        };
        let c = m.cost(&u).unwrap();
        assert!((c - (3.0 + 1.5 + 0.3)).abs() < 1e-9, "{c}");
    }
}
