//! The model catalogue (`assets/models.toml`): context window, output limit,
//! prices and capabilities. Unknown models get safe defaults.

use std::sync::OnceLock;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::ModelConfig;

use super::Usage;
use super::server_limits::Limits;

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
    /// `[models.ID] effort`: how hard it thinks unless `/effort` says.
    #[serde(skip)]
    pub effort: Option<crate::config::effort::Effort>,
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
            effort: None,
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

static OVERRIDES: OnceLock<BTreeMap<String, ModelConfig>> = OnceLock::new();
/// What servers said of models the catalogue does not know (`None`: asked,
/// and the server said nothing).
static LEARNED: std::sync::Mutex<BTreeMap<String, Option<Limits>>> =
    std::sync::Mutex::new(BTreeMap::new());

fn learned() -> std::sync::MutexGuard<'static, BTreeMap<String, Option<Limits>>> {
    LEARNED.lock().unwrap_or_else(|p| p.into_inner())
}
static SERVED: OnceLock<Vec<String>> = OnceLock::new();

/// One `[models."ID"]` entry laid over what the catalogue knows.
fn apply(mut m: ModelInfo, o: Option<&ModelConfig>) -> ModelInfo {
    let Some(o) = o else { return m };
    if let Some(v) = o.context_window {
        m.context_window = v;
    }
    if let Some(v) = o.max_output {
        m.max_output = v;
    }
    m.input_price = o.input_price.or(m.input_price);
    m.output_price = o.output_price.or(m.output_price);
    m.cache_read_price = o.cache_read_price.or(m.cache_read_price);
    m.cache_write_price = o.cache_write_price.or(m.cache_write_price);
    m.supports_images = o.images.unwrap_or(m.supports_images);
    m.supports_reasoning = o.reasoning.unwrap_or(m.supports_reasoning);
    m.effort = o.effort.or(m.effort);
    m
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

    /// What the person's `[models."ID"]` entries say, over the catalogue.
    /// Set once at start-up; later calls change nothing.
    pub fn install_overrides(overrides: BTreeMap<String, ModelConfig>) {
        let _ = OVERRIDES.set(overrides);
    }

    /// The entry for `model_id` with the person's overrides applied, or
    /// defaults for an unknown model.
    pub fn lookup(&self, model_id: &str) -> ModelInfo {
        let overrides = OVERRIDES.get_or_init(BTreeMap::new);
        let mut m = self.lookup_builtin(model_id);
        if let Some(Some(l)) = learned().get(model_id)
            && m == ModelInfo::unknown(model_id)
        {
            m.context_window = l.context_window;
            // Room for the prompt: a quarter of a small window at most.
            m.max_output = l
                .max_output
                .unwrap_or(m.max_output)
                .min((l.context_window / 4).max(256));
        }
        apply(m, overrides.get(model_id))
    }

    /// Whether the window of `model_id` must come from its server: neither
    /// the catalogue nor the person's `[models."ID"]` states it, and its
    /// server was not asked yet.
    pub fn wants_server_limits(&self, model_id: &str) -> bool {
        let overrides = OVERRIDES.get_or_init(BTreeMap::new);
        self.lookup_builtin(model_id) == ModelInfo::unknown(model_id)
            && overrides
                .get(model_id)
                .is_none_or(|o| o.context_window.is_none())
            && !learned().contains_key(model_id)
    }

    /// Records what the server said of `model_id` (or that it said nothing).
    pub fn install_learned(model_id: &str, limits: Option<Limits>) {
        learned().insert(model_id.to_string(), limits);
    }

    /// Where the window of `model_id` came from, when its server said.
    pub fn learned_source(model_id: &str) -> Option<String> {
        learned().get(model_id)?.as_ref().map(|l| l.source.clone())
    }

    /// Records the models the provider serves (found at start-up).
    pub fn install_served(ids: Vec<String>) {
        let _ = SERVED.set(ids);
    }

    /// What the `/model` picker offers: the models the provider serves
    /// when known (else the whole catalogue), and those named in config.
    pub fn pickable(&self) -> Vec<ModelInfo> {
        let Some(served) = SERVED.get().filter(|s| !s.is_empty()) else {
            return self.all_models();
        };
        let mut out: Vec<ModelInfo> = served.iter().map(|id| self.lookup(id)).collect();
        for id in OVERRIDES.get_or_init(BTreeMap::new).keys() {
            if !out.iter().any(|m| &m.id == id) {
                out.push(self.lookup(id));
            }
        }
        out
    }

    /// The catalogue and the models named only in the person's config.
    pub fn all_models(&self) -> Vec<ModelInfo> {
        let mut out: Vec<ModelInfo> = self.models.iter().map(|m| self.lookup(&m.id)).collect();
        for id in OVERRIDES.get_or_init(BTreeMap::new).keys() {
            if !out.iter().any(|m| &m.id == id) {
                out.push(self.lookup(id));
            }
        }
        out
    }

    /// The built-in entry for `model_id`, or defaults for an unknown model.
    pub fn lookup_builtin(&self, model_id: &str) -> ModelInfo {
        match self.builtin_entry(model_id) {
            Some((m, true)) => m.clone(),
            Some((m, false)) => {
                let mut m = m.clone();
                m.id = model_id.to_string();
                m
            }
            None => ModelInfo::unknown(model_id),
        }
    }

    /// The catalogue's own id for `model_id` when that is one of the
    /// catalogue's names for the model (its id or an alias, any case, with
    /// or without a provider prefix); `None` for other ids, tagged or dated
    /// ones included (`qwen2.5-coder:7b` and `:32b` are different models).
    pub fn catalogue_id(&self, model_id: &str) -> Option<String> {
        self.builtin_entry(model_id)
            .filter(|(_, exact)| *exact)
            .map(|(m, _)| m.id.clone())
    }

    /// The catalogue entry `model_id` names, and whether by one of its
    /// names exactly (rather than as a dated or tagged form of one).
    fn builtin_entry(&self, model_id: &str) -> Option<(&ModelInfo, bool)> {
        let id = model_id.to_ascii_lowercase();
        let id = id.rsplit('/').next().unwrap_or(&id).to_string();
        let names = |m: &ModelInfo| {
            std::iter::once(m.id.to_ascii_lowercase())
                .chain(m.aliases.iter().map(|a| a.to_ascii_lowercase()))
                .collect::<Vec<_>>()
        };
        if let Some(m) = self.models.iter().find(|m| names(m).contains(&id)) {
            return Some((m, true));
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
        best.map(|(_, m)| (m, false))
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
    fn a_config_entry_overrides_the_catalogue() {
        let base = ModelCatalog::global().lookup_builtin("claude-sonnet-4-5");
        let o = ModelConfig {
            context_window: Some(1_000_000),
            cache_write_price: Some(6.0),
            images: Some(false),
            ..ModelConfig::default()
        };
        let m = apply(base.clone(), Some(&o));
        assert_eq!(m.context_window, 1_000_000);
        assert_eq!(m.max_output, base.max_output);
        assert_eq!(m.cache_write_price, Some(6.0));
        assert_eq!(m.input_price, Some(3.0));
        assert!(!m.supports_images);
        let unknown = apply(
            ModelInfo::unknown("my-model"),
            Some(&ModelConfig {
                input_price: Some(1.0),
                output_price: Some(2.0),
                ..ModelConfig::default()
            }),
        );
        assert!(unknown.cost(&Usage::default()).is_some());
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
