//! The models a provider can serve, for the `/model` picker: its own list
//! from its models endpoint (kept in the cache directory for a day), or,
//! where it has none, the catalogue's models of its family.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{LlmError, ModelCatalog, ProviderKind, ProviderSettings};

const CACHE_FOR: Duration = Duration::from_secs(24 * 3600);

/// Asks the provider's models endpoint. Cloud kinds have none here.
pub async fn fetch(settings: &ProviderSettings) -> Result<Vec<String>, LlmError> {
    let client = super::http_client()?;
    let base = settings.base_url.trim_end_matches('/');
    let key = settings.api_key.as_deref();
    let req = match settings.kind {
        ProviderKind::Openai | ProviderKind::OpenaiAuto | ProviderKind::OpenaiResponses => {
            let r = client.get(format!("{base}/models")).query(&settings.query);
            match (key, settings.azure) {
                (Some(k), true) => r.header("api-key", k),
                (Some(k), false) => r.bearer_auth(k),
                (None, _) => r,
            }
        }
        ProviderKind::Anthropic => {
            let url = if base.ends_with("/v1") {
                format!("{base}/models")
            } else {
                format!("{base}/v1/models")
            };
            client
                .get(url)
                .query(&[("limit", "1000")])
                .header("anthropic-version", "2023-06-01")
                .header("x-api-key", key.unwrap_or_default())
        }
        ProviderKind::Gemini => client
            .get(format!(
                "{}/models",
                base.strip_suffix("/openai").unwrap_or(base)
            ))
            .query(&[("pageSize", "1000")])
            .header("x-goog-api-key", key.unwrap_or_default()),
        ProviderKind::Ollama => client.get(format!(
            "{}/api/tags",
            base.strip_suffix("/v1").unwrap_or(base)
        )),
        ProviderKind::Vertex | ProviderKind::Bedrock => return Ok(Vec::new()),
    };
    let resp = super::transport::send(req.timeout(Duration::from_secs(15)), settings).await?;
    let v: Value = resp
        .json()
        .await
        .map_err(|e| LlmError::Malformed(format!("the models list ({e})")))?;
    Ok(ids(&v))
}

/// Model ids in any of the list shapes: `data[].id` (OpenAI, Anthropic),
/// `models[].name` (Gemini, only those that generate content; Ollama).
fn ids(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    for m in v["models"].as_array().into_iter().flatten() {
        let generates = m["supportedGenerationMethods"]
            .as_array()
            .is_none_or(|ms| ms.iter().any(|x| x == "generateContent"));
        if let Some(name) = m["name"].as_str().filter(|_| generates) {
            out.push(name.strip_prefix("models/").unwrap_or(name).to_string());
        }
    }
    out
}

/// What the picker offers: the provider's own list when it gave one, else
/// the catalogue's models of the provider's family.
pub fn served(kind: ProviderKind, listed: &[String]) -> Vec<String> {
    if !listed.is_empty() {
        return listed.to_vec();
    }
    let family: &[&str] = match kind {
        ProviderKind::Anthropic => &["claude"],
        ProviderKind::Vertex => &["claude", "gemini"],
        ProviderKind::Gemini => &["gemini"],
        ProviderKind::OpenaiAuto | ProviderKind::OpenaiResponses => &["gpt", "o3", "o4", "codex"],
        ProviderKind::Ollama => &["qwen", "llama", "deepseek-r1", "gemma", "mistral"],
        // Bedrock's ids (`anthropic.claude-…-v1:0`) are not the catalogue's;
        // a compatible server can be anything.
        ProviderKind::Bedrock | ProviderKind::Openai => return Vec::new(),
    };
    ModelCatalog::global()
        .models()
        .iter()
        .filter(|m| family.iter().any(|f| m.id.starts_with(f)))
        .map(|m| m.id.clone())
        .collect()
}

fn cache_file(settings: &ProviderSettings, dir: &std::path::Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&settings.name, &settings.base_url).hash(&mut h);
    dir.join(format!("models-{:016x}.json", h.finish()))
}

/// The provider's list from the cache when fresh, else fetched (and
/// cached). `None` when the provider gives no list.
pub async fn cached_or_fetch(
    settings: &ProviderSettings,
    cache_dir: Option<&std::path::Path>,
) -> Vec<String> {
    let file = cache_dir.map(|d| cache_file(settings, d));
    if let Some(f) = &file
        && let Ok(meta) = std::fs::metadata(f)
        && meta
            .modified()
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age < CACHE_FOR)
        && let Ok(text) = std::fs::read_to_string(f)
        && let Ok(list) = serde_json::from_str::<Vec<String>>(&text)
    {
        return list;
    }
    match fetch(settings).await {
        Ok(list) => {
            if let (Some(f), false) = (&file, list.is_empty()) {
                let _ = f.parent().map(std::fs::create_dir_all);
                let _ = std::fs::write(f, serde_json::to_string(&list).unwrap_or_default());
            }
            list
        }
        Err(e) => {
            tracing::info!(error = %e, "the provider gave no models list");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_come_from_every_list_shape() {
        assert_eq!(
            ids(&json!({"data": [{"id": "gpt-x"}, {"id": "o9"}]})),
            ["gpt-x", "o9"]
        );
        let gemini = json!({"models": [
            {"name": "models/gemini-2.5-pro", "supportedGenerationMethods": ["generateContent"]},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]}]});
        assert_eq!(ids(&gemini), ["gemini-2.5-pro"]);
        assert_eq!(
            ids(&json!({"models": [{"name": "qwen3:8b"}]})),
            ["qwen3:8b"]
        );
    }

    #[test]
    fn without_a_list_only_the_family_is_offered() {
        let anthropic = served(ProviderKind::Anthropic, &[]);
        assert!(!anthropic.is_empty() && anthropic.iter().all(|m| m.starts_with("claude")));
        assert!(served(ProviderKind::Openai, &[]).is_empty());
        assert_eq!(
            served(ProviderKind::Openai, &["only-one".into()]),
            ["only-one"]
        );
    }
}
