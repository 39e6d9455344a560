//! What a server says about a model's limits, for models the catalogue
//! does not know: an OpenAI-compatible `/models` list with metadata
//! (llama.cpp's `meta.n_ctx`, vLLM's `max_model_len`, LM Studio's
//! `loaded_context_length`), LiteLLM's `/model/info`, llama.cpp's `/props`
//! and Ollama's `/api/show`. A server on this machine that says nothing
//! gets a conservative window rather than a cloud-sized guess.

use std::time::Duration;

use serde_json::Value;

/// The window assumed for a model on a local server that reports none.
pub const LOCAL_DEFAULT_WINDOW: u64 = 8_192;

/// A model's limits as learned from its server.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub context_window: u64,
    pub max_output: Option<u64>,
    /// Where the figure came from, for `/model` and the notice.
    pub source: String,
    /// What the server says that the person must change (a chat template
    /// that drops tools).
    pub warning: Option<String>,
}

/// Whether `base_url` points at this machine.
pub fn is_local(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host == "localhost" || host.ends_with(".localhost"),
    }
}

/// Asks an OpenAI-compatible server at `base` (…/v1) what it knows of
/// `model`'s window, trying the places servers put it in turn.
pub async fn openai_compatible(
    client: &reqwest::Client,
    base: &str,
    key: Option<&str>,
    model: &str,
) -> Option<Limits> {
    let base = base.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let get = |url: String| {
        let r = client.get(url).timeout(Duration::from_secs(5));
        match key {
            Some(k) => r.bearer_auth(k),
            None => r,
        }
    };
    // llama.cpp's /props also says whether its chat template renders
    // tools; one that does not drops them without a word.
    let props = json(get(format!("{root}/props"))).await;
    let warning = props.as_ref().and_then(tools_dropped);
    let with_warning = |mut l: Limits| {
        l.warning = warning.clone();
        l
    };
    if let Some(list) = json(get(format!("{base}/models"))).await
        && let Some(found) = from_models_list(&list, model)
    {
        return Some(with_warning(found));
    }
    if let Some(info) = json(get(format!("{root}/model/info"))).await
        && let Some(found) = from_litellm_info(&info, model)
    {
        return Some(found);
    }
    if let Some(entry) = json(get(format!("{root}/api/v0/models/{model}"))).await
        && let Some(window) = window_of(&entry)
    {
        return Some(Limits {
            context_window: window,
            max_output: None,
            warning: None,
            source: "the server's /api/v0/models".into(),
        });
    }
    let props = props?;
    let window = props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)?;
    Some(with_warning(Limits {
        context_window: window,
        max_output: None,
        warning: None,
        source: "the server's /props (n_ctx)".into(),
    }))
}

/// A warning when llama.cpp's `/props` says its chat template cannot render
/// tools: the model then never sees them and never calls one.
pub fn tools_dropped(props: &Value) -> Option<String> {
    let caps = props.get("chat_template_caps")?;
    (caps["supports_tools"] == Value::Bool(false)).then(|| {
        "the server's chat template does not render tools, so the model will never call one. Start llama-server with --jinja and a template that supports tools (--chat-template-file), or use plan or chat mode.".to_string()
    })
}

async fn json(req: reqwest::RequestBuilder) -> Option<Value> {
    let resp = req.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    resp.json().await.ok()
}

/// The window an entry of a models list states, in any server's field.
fn window_of(entry: &Value) -> Option<u64> {
    [
        "/meta/n_ctx",
        "/max_model_len",
        "/loaded_context_length",
        "/context_length",
        "/max_context_length",
        "/context_window",
        "/meta/n_ctx_train",
    ]
    .iter()
    .find_map(|p| entry.pointer(p).and_then(Value::as_u64))
    .filter(|n| *n > 0)
}

/// `model`'s entry in a `/models` list (or the only entry, for a server
/// that serves one model under any name) and the window it states.
pub fn from_models_list(list: &Value, model: &str) -> Option<Limits> {
    let entries = list["data"].as_array()?;
    let entry = entries
        .iter()
        .find(|e| e["id"].as_str() == Some(model))
        .or(if entries.len() == 1 {
            entries.first()
        } else {
            None
        })?;
    let window = window_of(entry)?;
    let field = if entry.pointer("/meta/n_ctx").is_some() {
        "meta.n_ctx"
    } else if entry.get("max_model_len").is_some() {
        "max_model_len"
    } else {
        "context length"
    };
    Some(Limits {
        context_window: window,
        max_output: None,
        warning: None,
        source: format!("the server's /v1/models ({field})"),
    })
}

/// LiteLLM's `/model/info`: `data[].model_name` with `model_info`'s
/// `max_input_tokens` and `max_output_tokens`.
pub fn from_litellm_info(info: &Value, model: &str) -> Option<Limits> {
    let entry = info["data"]
        .as_array()?
        .iter()
        .find(|e| e["model_name"].as_str() == Some(model))?;
    let mi = &entry["model_info"];
    let window = mi["max_input_tokens"]
        .as_u64()
        .or_else(|| mi["max_tokens"].as_u64())
        .filter(|n| *n > 0)?;
    Some(Limits {
        context_window: window,
        max_output: mi["max_output_tokens"].as_u64(),
        warning: None,
        source: "LiteLLM's /model/info".into(),
    })
}

/// What a model on a server that said nothing is assumed to have, when
/// the server is on this machine.
pub fn local_default() -> Limits {
    Limits {
        context_window: LOCAL_DEFAULT_WINDOW,
        max_output: None,
        warning: None,
        source: "assumed: the local server reports no window".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llama_cpp_vllm_and_lm_studio_lists() {
        let llama = json!({"object":"list","data":[{"id":"gemma-3-270m","object":"model","created":1764230000,"owned_by":"llamacpp","meta":{"vocab_type":1,"n_vocab":262144,"n_ctx_train":32768,"n_embd":640,"n_params":268098176,"size":241410560,"n_ctx":8192}}]});
        let l = from_models_list(&llama, "anything").unwrap();
        assert_eq!(l.context_window, 8_192, "n_ctx, not n_ctx_train");
        assert!(l.source.contains("meta.n_ctx"));
        let vllm = json!({"object":"list","data":[{"id":"Qwen/Qwen2.5-7B","object":"model","owned_by":"vllm","root":"Qwen/Qwen2.5-7B","max_model_len":16384},{"id":"other","max_model_len":4096}]});
        assert_eq!(
            from_models_list(&vllm, "Qwen/Qwen2.5-7B")
                .unwrap()
                .context_window,
            16_384
        );
        assert!(from_models_list(&vllm, "missing").is_none());
        let lms = json!({"data":[{"id":"qwen2.5-7b-instruct","type":"llm","state":"loaded","max_context_length":32768,"loaded_context_length":4096}]});
        assert_eq!(
            from_models_list(&lms, "qwen2.5-7b-instruct")
                .unwrap()
                .context_window,
            4_096
        );
        let plain = json!({"data":[{"id":"m","object":"model"}]});
        assert!(from_models_list(&plain, "m").is_none());
    }

    #[test]
    fn litellm_model_info() {
        let info = json!({"data":[{"model_name":"local-coder","litellm_params":{"model":"openai/x"},"model_info":{"max_tokens":4096,"max_input_tokens":12000,"max_output_tokens":4096}}]});
        let l = from_litellm_info(&info, "local-coder").unwrap();
        assert_eq!((l.context_window, l.max_output), (12_000, Some(4_096)));
    }

    #[test]
    fn a_template_without_tools_is_named() {
        let props = json!({"default_generation_settings":{"n_ctx":8192},"chat_template_caps":{"supports_tools":false,"supports_tool_calls":false}});
        assert!(tools_dropped(&props).unwrap().contains("--jinja"));
        let ok = json!({"chat_template_caps":{"supports_tools":true}});
        assert!(tools_dropped(&ok).is_none());
    }

    #[test]
    fn local_addresses() {
        assert!(is_local("http://127.0.0.1:8080/v1"));
        assert!(is_local("http://localhost:11434"));
        assert!(is_local("http://[::1]:1234/v1"));
        assert!(!is_local("https://api.openai.com/v1"));
        assert!(!is_local("not a url"));
    }
}
