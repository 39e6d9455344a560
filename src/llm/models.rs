//! Placeholder until the catalogue lands.
use super::Usage;
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub context_window: u64,
    pub max_output: u64,
    pub supports_images: bool,
    pub supports_reasoning: bool,
}
impl ModelInfo {
    pub fn cost(&self, _u: &Usage) -> Option<f64> {
        None
    }
}
pub struct ModelCatalog;
impl ModelCatalog {
    pub fn global() -> &'static ModelCatalog {
        &ModelCatalog
    }
    pub fn lookup(&self, _id: &str) -> ModelInfo {
        ModelInfo {
            context_window: 32000,
            max_output: 4096,
            supports_images: false,
            supports_reasoning: false,
        }
    }
}
