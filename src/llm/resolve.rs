//! Choosing the provider at start-up: command line, then config, then the
//! environment, then a local server. `config` holds the plain settings;
//! turning them into a provider (presets, keys, kinds) happens here.

use std::time::Duration;

use super::{ProviderKind, ProviderSettings};
use crate::config::{Config, ProviderConfig};

pub use super::error::ResolveError;

/// A provider ready to build, with the model to use.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    pub settings: ProviderSettings,
    pub model: String,
    pub small_model: Option<String>,
}

/// A built-in provider usable by name without any config.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub kind: ProviderKind,
    pub base_url: &'static str,
    pub key_env: Option<&'static str>,
    pub model: &'static str,
    pub small_model: Option<&'static str>,
}

pub const PRESET_NAMES: [&str; 8] = [
    "anthropic",
    "openai",
    "openrouter",
    "groq",
    "deepseek",
    "gemini",
    "ollama",
    "lmstudio",
];

pub fn preset(name: &str) -> Option<Preset> {
    preset_tuple(name).map(|(kind, base_url, key_env, model, small_model)| Preset {
        kind,
        base_url,
        key_env,
        model,
        small_model,
    })
}

type PresetTuple = (
    ProviderKind,
    &'static str,
    Option<&'static str>,
    &'static str,
    Option<&'static str>,
);

fn preset_tuple(name: &str) -> Option<PresetTuple> {
    use ProviderKind::*;
    Some(match name {
        "anthropic" => (
            Anthropic,
            "https://api.anthropic.com",
            Some("ANTHROPIC_API_KEY"),
            "claude-sonnet-4-5",
            Some("claude-haiku-4-5"),
        ),
        "openai" => (
            OpenaiAuto,
            "https://api.openai.com/v1",
            Some("OPENAI_API_KEY"),
            "gpt-4.1",
            Some("gpt-4.1-mini"),
        ),
        "openrouter" => (
            Openai,
            "https://openrouter.ai/api/v1",
            Some("OPENROUTER_API_KEY"),
            "anthropic/claude-sonnet-4.5",
            None,
        ),
        "groq" => (
            Openai,
            "https://api.groq.com/openai/v1",
            Some("GROQ_API_KEY"),
            "llama-3.3-70b-versatile",
            None,
        ),
        "deepseek" => (
            Openai,
            "https://api.deepseek.com/v1",
            Some("DEEPSEEK_API_KEY"),
            "deepseek-chat",
            None,
        ),
        "gemini" => (
            Gemini,
            "https://generativelanguage.googleapis.com/v1beta",
            Some("GEMINI_API_KEY"),
            "gemini-2.5-pro",
            Some("gemini-2.5-flash"),
        ),
        "ollama" => (
            Ollama,
            "http://127.0.0.1:11434",
            None,
            "qwen2.5-coder",
            None,
        ),
        "lmstudio" => (
            Openai,
            "http://127.0.0.1:1234/v1",
            None,
            "local-model",
            None,
        ),
        _ => return None,
    })
}

/// The environment variable provider `name` reads its key from, if any.
pub fn key_env_of(config: &Config, name: &str) -> Option<String> {
    config
        .file
        .providers
        .get(name)
        .and_then(|p| p.api_key_env.clone())
        .or_else(|| preset(name).and_then(|p| p.key_env).map(str::to_string))
}

/// Resolves which provider and model to use. `Ok(None)` means nothing is
/// configured at all: the caller explains how to set one up.
pub async fn resolve_provider(
    config: &Config,
    cli_provider: Option<&str>,
    cli_model: Option<&str>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Option<ResolvedProvider>, ResolveError> {
    let file = &config.file;
    let name = cli_provider
        .map(str::to_string)
        .or_else(|| file.provider.clone());
    let model_override = cli_model.map(str::to_string).or_else(|| file.model.clone());

    let chosen = match name {
        Some(name) => Some(name),
        None if file.providers.len() == 1 => file.providers.keys().next().cloned(),
        None => None,
    };
    if let Some(name) = chosen {
        return named(config, &name, model_override, env).map(Some);
    }

    // Nothing chosen: the environment decides.
    if let Some(key) = non_empty(env("ANTHROPIC_API_KEY")) {
        let mut r = from_preset("anthropic", &ProviderConfig::default(), Some(key), env)?;
        if let Some(url) = non_empty(env("ANTHROPIC_BASE_URL")) {
            r.settings.base_url = url;
        }
        if let Some(m) = model_override {
            r.model = m;
        }
        return Ok(Some(r));
    }
    if let Some(key) = non_empty(env("OPENAI_API_KEY")) {
        let mut r = from_preset("openai", &ProviderConfig::default(), Some(key), env)?;
        if let Some(url) = non_empty(env("OPENAI_BASE_URL")) {
            r.settings.base_url = url;
        }
        if let Some(m) = model_override {
            r.model = m;
        }
        return Ok(Some(r));
    }
    let ollama = non_empty(env("OLLAMA_HOST"))
        .map(|h| {
            if h.starts_with("http") {
                h
            } else {
                format!("http://{h}")
            }
        })
        .unwrap_or_else(|| "http://127.0.0.1:11434".to_string());
    if let Some(first_model) = probe_local(&ollama).await {
        let mut r = from_preset("ollama", &ProviderConfig::default(), None, env)?;
        r.settings.base_url = ollama.trim_end_matches('/').to_string();
        r.model = model_override.unwrap_or(first_model);
        return Ok(Some(r));
    }
    Ok(None)
}

fn named(
    config: &Config,
    name: &str,
    model_override: Option<String>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<ResolvedProvider, ResolveError> {
    let entry = config.file.providers.get(name);
    let mut resolved = match (entry, preset(name)) {
        (Some(p), Some(_)) if p.kind.is_none() && p.base_url.is_none() => {
            from_preset(name, p, None, env)?
        }
        (Some(p), _) => from_entry(name, p, env)?,
        (None, Some(_)) => from_preset(name, &ProviderConfig::default(), None, env)?,
        (None, None) => {
            let mut known: Vec<String> = config.file.providers.keys().cloned().collect();
            known.extend(PRESET_NAMES.iter().map(|s| s.to_string()));
            return Err(ResolveError(format!(
                "no provider named `{name}`. Known: {}. Add it as [providers.{name}] in {}.",
                known.join(", "),
                config.project_path.display()
            )));
        }
    };
    if let Some(m) = model_override {
        resolved.model = m;
    }
    Ok(resolved)
}

fn from_preset(
    name: &str,
    entry: &ProviderConfig,
    key: Option<String>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<ResolvedProvider, ResolveError> {
    let (kind, url, key_env, model, small) =
        preset_tuple(name).ok_or_else(|| ResolveError(format!("no preset named `{name}`")))?;
    let key_env = entry.api_key_env.as_deref().or(key_env);
    let api_key = match key {
        Some(k) => Some(k),
        None => match key_env {
            Some(var) => Some(non_empty(env(var)).ok_or_else(|| {
                ResolveError(format!(
                    "provider `{name}` needs an API key: set the environment variable {var}"
                ))
            })?),
            None => None,
        },
    };
    // The usual environment overrides of the base URL apply to presets.
    let url_env = match name {
        "anthropic" => non_empty(env("ANTHROPIC_BASE_URL")),
        "openai" => non_empty(env("OPENAI_BASE_URL")),
        _ => None,
    };
    let own_server = entry.base_url.is_none() && url_env.is_none();
    let base_url = entry
        .base_url
        .clone()
        .or(url_env)
        .unwrap_or_else(|| url.to_string());
    let (request_timeout, idle_timeout) = timeouts(entry, &base_url);
    let limits = stream_limits(entry, &base_url);
    Ok(ResolvedProvider {
        settings: ProviderSettings {
            name: name.to_string(),
            kind,
            base_url,
            api_key,
            headers: entry.headers.clone().into_iter().collect(),
            query: entry.query.clone().into_iter().collect(),
            azure: entry.azure.unwrap_or(false),
            request_timeout,
            idle_timeout,
            cloud: Default::default(),
            wire: super::WireOptions {
                limits,
                ..Default::default()
            },
        },
        model: entry.model.clone().unwrap_or_else(|| model.to_string()),
        // The preset's small model only where it is known to be served:
        // the preset's own server, not whatever the URL was pointed at.
        small_model: entry
            .small_model
            .clone()
            .or_else(|| small.filter(|_| own_server).map(str::to_string)),
    })
}

fn from_entry(
    name: &str,
    p: &ProviderConfig,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<ResolvedProvider, ResolveError> {
    let preset = preset_tuple(name);
    let kind = kind_of(name, p.kind.as_deref())?
        .or(preset.map(|p| p.0))
        .ok_or_else(|| {
            ResolveError(format!(
                "[providers.{name}] needs `kind` (one of: {})",
                ProviderKind::NAMES.join(", ")
            ))
        })?;
    // Cloud kinds know their endpoint; `base_url` only overrides it.
    let base_url = p
        .base_url
        .clone()
        .or(preset.map(|p| p.1.to_string()))
        .or_else(|| kind.is_cloud().then(String::new))
        .ok_or_else(|| ResolveError(format!("[providers.{name}] needs `base_url`")))?;
    let key_var = p.api_key_env.as_deref().or(preset.and_then(|p| p.2));
    if let Some(url) = &p.key_withheld
        && (key_var.is_some() || kind.is_cloud())
    {
        return Err(ResolveError(format!(
            "provider `{name}` is set to {url} by this project's .cairn/config.toml, not by \
             your own config, and cairn sends no key or credential of yours to an address a \
             repository names. If you mean to use it, set that `base_url` for \
             [providers.{name}] in your own config ({}).",
            crate::config::global_dir()
                .map(|d| d.join("config.toml").display().to_string())
                .unwrap_or_else(|| "~/.config/cairn/config.toml".into())
        )));
    }
    let cloud = super::resolve_cloud::cloud_settings(kind, name, p, env)?;
    let api_key = match key_var {
        Some(var) => Some(non_empty(env(var)).ok_or_else(|| {
            ResolveError(format!(
                "provider `{name}` reads its key from {var}, which is not set"
            ))
        })?),
        None => None,
    };
    let model = p
        .model
        .clone()
        .or(preset.map(|p| p.3.to_string()))
        .ok_or_else(|| {
            ResolveError(format!(
                "[providers.{name}] needs `model` (or pass --model)"
            ))
        })?;
    let (request_timeout, idle_timeout) = timeouts(p, &base_url);
    let limits = stream_limits(p, &base_url);
    Ok(ResolvedProvider {
        settings: ProviderSettings {
            name: name.to_string(),
            kind,
            base_url,
            api_key,
            headers: p.headers.clone().into_iter().collect(),
            query: p.query.clone().into_iter().collect(),
            azure: p.azure.unwrap_or(false),
            request_timeout,
            idle_timeout,
            wire: super::WireOptions {
                no_stream: p.stream == Some(false),
                extra_body: p.extra_body.clone().unwrap_or_default(),
                limits,
            },
            cloud,
        },
        model,
        small_model: p.small_model.clone().or_else(|| {
            preset
                .filter(|pre| p.base_url.as_deref().is_none_or(|u| u == pre.1))
                .and_then(|pre| pre.4.map(str::to_string))
        }),
    })
}

/// The wire format a config names.
fn kind_of(name: &str, kind: Option<&str>) -> Result<Option<ProviderKind>, ResolveError> {
    let Some(kind) = kind else { return Ok(None) };
    ProviderKind::parse(kind).map(Some).ok_or_else(|| {
        ResolveError(format!(
            "[providers.{name}] has `kind = \"{kind}\"`; known kinds: {}",
            ProviderKind::NAMES.join(", ")
        ))
    })
}

/// The request timeout and the idle timeout. A server on this machine
/// gets longer: it reads the prompt on a CPU before it answers.
fn timeouts(p: &ProviderConfig, base_url: &str) -> (Duration, Duration) {
    let idle = if super::server_limits::is_local(base_url) {
        ProviderSettings::LOCAL_IDLE_TIMEOUT
    } else {
        ProviderSettings::DEFAULT_IDLE_TIMEOUT
    };
    (
        p.timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(ProviderSettings::DEFAULT_REQUEST_TIMEOUT),
        p.idle_timeout_secs.map(Duration::from_secs).unwrap_or(idle),
    )
}

/// Bounds on reading an answer, from the provider's settings.
fn stream_limits(p: &ProviderConfig, base_url: &str) -> super::transport::StreamLimits {
    let defaults = super::transport::StreamLimits::default();
    let mb = |v: Option<u64>, default: usize| {
        v.map(|m| usize::try_from(m.saturating_mul(1 << 20)).unwrap_or(usize::MAX))
            .unwrap_or(default)
    };
    let first_byte = p
        .first_byte_timeout_secs
        .map(Duration::from_secs)
        .or_else(|| p.idle_timeout_secs.map(Duration::from_secs))
        .or_else(|| {
            super::server_limits::is_local(base_url).then_some(ProviderSettings::LOCAL_FIRST_BYTE)
        });
    super::transport::StreamLimits {
        idle: timeouts(p, base_url).1,
        first_byte,
        max_event: mb(p.max_event_mb, defaults.max_event),
        max_response: mb(p.max_response_mb, defaults.max_response),
    }
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

/// Asks a local Ollama for its models (`/api/tags`); the first one.
async fn probe_local(base: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(800))
        .build()
        .ok()?;
    let resp = client
        .get(format!("{}/api/tags", base.trim_end_matches('/')))
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let v: serde_json::Value = resp.json().await.ok()?;
    v.pointer("/models/0/name")
        .and_then(|s| s.as_str())
        .map(str::to_string)
        .or(Some("qwen2.5-coder".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + Sync + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn anthropic_key_wins_and_base_url_overrides() {
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "k1"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ("OPENAI_API_KEY", "k2"),
        ]);
        let r = rt()
            .block_on(resolve_provider(&Config::default(), None, None, &env))
            .unwrap()
            .unwrap();
        assert_eq!(r.settings.kind, ProviderKind::Anthropic);
        assert_eq!(r.settings.base_url, "http://127.0.0.1:9");
        assert_eq!(r.settings.api_key.as_deref(), Some("k1"));
        // Pointed elsewhere, the preset's small model is not assumed there.
        assert_eq!(r.small_model, None);
        let env = env_of(&[("ANTHROPIC_API_KEY", "k1")]);
        let r = rt()
            .block_on(resolve_provider(&Config::default(), None, None, &env))
            .unwrap()
            .unwrap();
        assert_eq!(r.small_model.as_deref(), Some("claude-haiku-4-5"));
    }

    #[test]
    fn openai_key_when_no_anthropic() {
        let env = env_of(&[("OPENAI_API_KEY", "k2"), ("OLLAMA_HOST", "127.0.0.1:9")]);
        let r = rt()
            .block_on(resolve_provider(
                &Config::default(),
                None,
                Some("gpt-x"),
                &env,
            ))
            .unwrap()
            .unwrap();
        assert_eq!(r.settings.kind, ProviderKind::OpenaiAuto);
        assert_eq!(r.model, "gpt-x");
    }

    #[test]
    fn nothing_configured_is_none() {
        // Port 9 (discard) is closed here: no local server answers.
        let env = env_of(&[("OLLAMA_HOST", "127.0.0.1:9")]);
        let r = rt()
            .block_on(resolve_provider(&Config::default(), None, None, &env))
            .unwrap();
        assert!(r.is_none());
    }

    #[test]
    fn named_provider_from_config() {
        let c = Config {
            file: crate::config::parse(
            "provider = \"work\"\n[providers.work]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\napi_key_env = \"WORK_KEY\"\nmodel = \"m\"\n[providers.work.query]\napi-version = \"2024-10-21\"\n",
            )
            .unwrap(),
            ..Config::default()
        };
        let env = env_of(&[("WORK_KEY", "secret")]);
        let r = rt()
            .block_on(resolve_provider(&c, None, None, &env))
            .unwrap()
            .unwrap();
        assert_eq!(r.settings.base_url, "http://h/v1");
        assert_eq!(r.settings.api_key.as_deref(), Some("secret"));
        assert_eq!(
            r.settings.query,
            vec![("api-version".to_string(), "2024-10-21".to_string())]
        );
        // A missing key is a clear error, not a half-configured start.
        let err = rt()
            .block_on(resolve_provider(&c, None, None, &env_of(&[])))
            .unwrap_err()
            .to_string();
        assert!(err.contains("WORK_KEY"), "{err}");
        let err = rt()
            .block_on(resolve_provider(&c, Some("nope"), None, &env))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no provider named `nope`"), "{err}");
    }
}
