//! How prompt hooks reach a model: one small request to the session's
//! provider, without tools, with a bounded answer.

use std::sync::Arc;

use futures::StreamExt;

use crate::conversation::Message;
use crate::extensions::hooks::prompt::{Ask, Asker};
use crate::llm::{Provider, Request, StreamEvent};

/// The most a hook's verdict may take, in tokens.
const MAX_TOKENS: u32 = 400;

/// The most of an answer read (a model that runs on is cut here).
const MAX_ANSWER: usize = 16 * 1024;

const SYSTEM: &str = "You judge one step of a coding agent's work for a hook the person \
    configured. Follow the hook's instructions and answer with a single JSON object: \
    {\"ok\": true} or {\"ok\": false, \"reason\": \"a short reason\"}. Nothing else.";

/// An [`Asker`] for `provider`, with `model` unless a hook names another.
pub fn asker(provider: Arc<dyn Provider>, model: String) -> Asker {
    Arc::new(move |ask: Ask| {
        let provider = provider.clone();
        let model = ask.model.clone().unwrap_or_else(|| model.clone());
        Box::pin(async move { ask_model(provider.as_ref(), &model, &ask.text).await })
    })
}

async fn ask_model(provider: &dyn Provider, model: &str, text: &str) -> Result<String, String> {
    let request = Request {
        model: model.to_string(),
        system: SYSTEM.to_string(),
        messages: vec![Message::user_text(text.to_string())],
        tools: Vec::new(),
        max_tokens: MAX_TOKENS,
        temperature: None,
        reasoning: false,
        effort: None,
        web_search: None,
    };
    let mut stream = (provider.stream(&request).await).map_err(|e| format!("{model}: {e}"))?;
    let mut answer = String::new();
    while let Some(item) = stream.next().await {
        match item.map_err(|e| format!("{model}: {e}"))? {
            StreamEvent::TextDelta(t) => answer.push_str(&t),
            StreamEvent::Reset => answer.clear(),
            StreamEvent::Done(_) => break,
            _ => {}
        }
        if answer.len() > MAX_ANSWER {
            break;
        }
    }
    Ok(answer)
}
