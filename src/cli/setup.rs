//! The first-start set-up's check and what it saves: the provider the
//! person chose is asked for its models list; once it answers, the choice
//! goes into the user's config and a pasted key into cairn's data
//! directory (0600), and cairn starts with it.

use std::path::PathBuf;

use crate::config::keys;
use crate::llm::{ProviderKind, ProviderSettings};
use crate::tui::setup::{Attempt, Check, KeyInput};

/// The check the set-up screen runs, saving into `config` and `keys_dir`.
pub fn check(config: PathBuf, keys_dir: PathBuf) -> Check {
    Box::new(move |attempt: Attempt| {
        let config = config.clone();
        let keys_dir = keys_dir.clone();
        Box::pin(async move {
            let (settings, var) = settings_of(&attempt)?;
            let listed = crate::llm::model_list::fetch(&settings)
                .await
                .map_err(|e| e.to_string())?;
            save(&attempt, &config, &keys_dir, var.as_deref(), &listed)
        })
    })
}

/// The variable a pasted key stands in for: the preset's own, or one
/// named after the provider.
fn key_var(name: &str) -> String {
    crate::llm::preset(name)
        .and_then(|p| p.key_env)
        .map(str::to_string)
        .unwrap_or_else(|| format!("CAIRN_{}_API_KEY", name.to_ascii_uppercase()))
}

/// What to ask the models endpoint with, and the key's variable.
fn settings_of(a: &Attempt) -> Result<(ProviderSettings, Option<String>), String> {
    let name = a.choice.name;
    let kind = crate::llm::preset(name).map_or(ProviderKind::Openai, |p| p.kind);
    let (api_key, var) = match &a.key {
        KeyInput::None => (None, None),
        KeyInput::Pasted(k) => (Some(k.clone()), Some(key_var(name))),
        KeyInput::Env(var) => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => (Some(v), Some(var.clone())),
            _ => {
                return Err(format!(
                    "{var} is not set in this environment; export it and start cairn again, \
                     or paste the key"
                ));
            }
        },
    };
    let settings = ProviderSettings {
        name: name.to_string(),
        kind,
        base_url: a.base_url.trim_end_matches('/').to_string(),
        api_key,
        headers: Vec::new(),
        query: Vec::new(),
        azure: false,
        request_timeout: ProviderSettings::DEFAULT_REQUEST_TIMEOUT,
        idle_timeout: ProviderSettings::DEFAULT_IDLE_TIMEOUT,
        cloud: Default::default(),
        wire: Default::default(),
    };
    Ok((settings, var))
}

/// Writes the choice: the key (pasted: stored; named: its variable), the
/// provider and, where the preset does not know them, its URL and model.
fn save(
    a: &Attempt,
    config: &std::path::Path,
    keys_dir: &std::path::Path,
    var: Option<&str>,
    listed: &[String],
) -> Result<(), String> {
    let name = a.choice.name;
    let preset = crate::llm::preset(name);
    let mut fields: Vec<(&str, String)> = Vec::new();
    if name == "custom" {
        fields.push(("kind", "openai".into()));
    }
    if preset.is_none_or(|p| p.base_url != a.base_url) {
        fields.push(("base_url", a.base_url.trim_end_matches('/').to_string()));
    }
    if a.choice.local {
        let model = listed.first().ok_or_else(|| {
            format!(
                "{} answered but lists no models: load one, then Enter",
                a.base_url
            )
        })?;
        fields.push(("model", model.clone()));
    }
    if let Some(var) = var
        && preset.and_then(|p| p.key_env) != Some(var)
    {
        fields.push(("api_key_env", var.to_string()));
    }
    if let (KeyInput::Pasted(key), Some(var)) = (&a.key, var) {
        keys::store_key_in(keys_dir, var, key)
            .map_err(|e| format!("cannot store the key in {}: {e}", keys_dir.display()))?;
    }
    crate::config::keys::save_provider(config, name, &fields).map_err(|e| e.to_string())
}

/// Base URLs the environment already sets, offered as the defaults.
pub fn env_urls() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (name, var) in [
        ("anthropic", "ANTHROPIC_BASE_URL"),
        ("openai", "OPENAI_BASE_URL"),
    ] {
        if let Ok(v) = std::env::var(var)
            && !v.trim().is_empty()
        {
            out.push((name, v));
        }
    }
    if let Ok(h) = std::env::var("OLLAMA_HOST")
        && !h.trim().is_empty()
    {
        let url = if h.starts_with("http") {
            h
        } else {
            format!("http://{h}")
        };
        out.push(("ollama", url));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::setup::CHOICES;

    fn attempt(name: &str, url: &str, key: KeyInput) -> Attempt {
        Attempt {
            choice: *CHOICES.iter().find(|c| c.name == name).unwrap(),
            base_url: url.into(),
            key,
        }
    }

    #[test]
    fn a_pasted_key_is_stored_under_its_variable_and_the_provider_saved() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let keys = dir.path().join("keys");
        let a = attempt(
            "anthropic",
            "http://127.0.0.1:9",
            KeyInput::Pasted("sk-1".into()),
        );
        let (s, var) = settings_of(&a).unwrap();
        assert_eq!(s.api_key.as_deref(), Some("sk-1"));
        save(&a, &config, &keys, var.as_deref(), &["m".into()]).unwrap();
        assert_eq!(
            keys::stored_key_in(&keys, "ANTHROPIC_API_KEY").as_deref(),
            Some("sk-1")
        );
        let v: toml::Value = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
        assert_eq!(v["provider"].as_str(), Some("anthropic"));
        assert_eq!(
            v["providers"]["anthropic"]["base_url"].as_str(),
            Some("http://127.0.0.1:9")
        );
        assert!(v["providers"]["anthropic"].get("api_key_env").is_none());
    }

    #[test]
    fn a_local_server_takes_its_first_model_and_a_custom_one_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let a = attempt("custom", "http://box:8000/v1", KeyInput::None);
        save(&a, &config, dir.path(), None, &["qwen".into()]).unwrap();
        let v: toml::Value = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
        let p = &v["providers"]["custom"];
        assert_eq!(
            (p["kind"].as_str(), p["model"].as_str()),
            (Some("openai"), Some("qwen"))
        );
        assert!(
            save(&a, &config, dir.path(), None, &[]).is_err(),
            "no model listed"
        );
    }
}
