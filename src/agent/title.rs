//! A short title for a session, written by the model after the first
//! exchange.

use futures::StreamExt;

use crate::conversation::Message;
use crate::llm::{Provider, Request, StreamEvent};

const TITLE_PROMPT: &str = include_str!("../../assets/prompts/title.md");

/// Asks each model in turn for a title of the exchange (the small model
/// first, then the main one: a server that serves a single model refuses
/// the small one). The error says why the last one failed.
pub async fn generate_first(
    provider: &dyn Provider,
    models: &[String],
    prompt: &str,
    answer: &str,
) -> Result<String, String> {
    let mut why = "no model to ask".to_string();
    for model in models {
        match generate(provider, model, prompt, answer).await {
            Ok(title) => return Ok(title),
            Err(e) => {
                tracing::warn!(model, error = %e, "no title from this model");
                why = format!("{model}: {e}");
            }
        }
    }
    Err(why)
}

/// Asks `model` for a title of the exchange.
pub async fn generate(
    provider: &dyn Provider,
    model: &str,
    prompt: &str,
    answer: &str,
) -> Result<String, String> {
    let clip = crate::text::take_chars;
    let request = Request {
        model: model.to_string(),
        system: TITLE_PROMPT.trim().to_string(),
        messages: vec![Message::user_text(format!(
            "<request>\n{}\n</request>\n<answer>\n{}\n</answer>",
            clip(prompt, 2_000),
            clip(answer, 2_000)
        ))],
        tools: Vec::new(),
        max_tokens: 60,
        temperature: None,
        reasoning: false,
        effort: None,
        web_search: None,
    };
    let mut request = super::side_model::with_effort(request);
    if let Some(budget) = crate::llm::effort::thinking_budget(&Request {
        max_tokens: u32::MAX,
        ..request.clone()
    }) {
        // Room to think before the few words of a title.
        request.max_tokens += budget + 1024;
    }
    let mut stream = provider.stream(&request).await.map_err(|e| e.to_string())?;
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        match item.map_err(|e| e.to_string())? {
            StreamEvent::TextDelta(t) => text.push_str(&t),
            StreamEvent::Reset => text.clear(),
            StreamEvent::Done(_) => break,
            _ => {}
        }
    }
    clean(&text).ok_or_else(|| "the model answered with no title".to_string())
}

/// Drops what small models leave in a title: tags and special tokens
/// (`<|im_end|>`, `<end_of_turn>`, `</s>`, `<request>`), also when written
/// as entities (`&lt;request&gt;`).
fn strip_markup(raw: &str) -> String {
    let text = raw
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
        .replace("&quot;", "\"");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        match after.find('>') {
            Some(close) if close <= 40 && !after[1..close].contains(char::is_whitespace) => {
                out.push(' ');
                rest = &after[close + 1..];
            }
            _ => {
                out.push('<');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One line, no markup, quotes or trailing stop, at most 80 characters.
pub fn clean(raw: &str) -> Option<String> {
    let raw = strip_markup(raw);
    let line = raw.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line
        .trim_start_matches(['#', '*', ' '])
        .trim_start_matches("Title:")
        .trim()
        .trim_matches(['"', '\'', '`', '*'])
        .trim_end_matches('.')
        .trim();
    if line.is_empty() {
        return None;
    }
    Some(line.chars().take(80).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_model_titles() {
        assert_eq!(
            clean("\"Fix the parser crash.\"\n"),
            Some("Fix the parser crash".into())
        );
        assert_eq!(clean("Title: Add retries"), Some("Add retries".into()));
        assert_eq!(clean("  \n\n"), None);
        assert_eq!(clean(&"x".repeat(200)).map(|s| s.len()), Some(80));
        assert_eq!(
            clean("&lt;request&gt;Fix the build&lt;/request&gt;<|im_end|>"),
            Some("Fix the build".into())
        );
        assert_eq!(clean("<end_of_turn>\n<|im_start|>"), None);
        assert_eq!(
            clean("Use a < b in loops"),
            Some("Use a < b in loops".into())
        );
    }
}

#[cfg(test)]
mod fallback_tests {
    use super::*;
    use crate::agent::side_model::test_support::SingleModel;

    #[tokio::test]
    async fn a_refused_small_model_falls_back_to_the_main_one_and_a_failure_is_said() {
        let p = SingleModel::new("main", "Fixing the parser");
        let models = ["small".to_string(), "main".to_string()];
        let title = generate_first(&p, &models, "fix it", "done").await;
        assert_eq!(title.as_deref(), Ok("Fixing the parser"));
        assert_eq!(p.asked(), ["small", "main"]);
        let err = generate_first(&p, &["other".to_string()], "a", "b")
            .await
            .unwrap_err();
        assert!(err.contains("other") && err.contains("not found"), "{err}");
    }
}
