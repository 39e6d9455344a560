//! A short title for a session, written by the model after the first
//! exchange.

use futures::StreamExt;

use crate::conversation::Message;
use crate::llm::{Provider, Request, StreamEvent};

const TITLE_PROMPT: &str = include_str!("../../assets/prompts/title.md");

/// Asks `model` for a title of the exchange; `None` if it fails (titles are
/// a nicety: a failure costs nothing but the title).
pub async fn generate(
    provider: &dyn Provider,
    model: &str,
    prompt: &str,
    answer: &str,
) -> Option<String> {
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
    };
    let mut stream = provider.stream(&request).await.ok()?;
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        match item.ok()? {
            StreamEvent::TextDelta(t) => text.push_str(&t),
            StreamEvent::Reset => text.clear(),
            StreamEvent::Done(_) => break,
            _ => {}
        }
    }
    clean(&text)
}

/// One line, no quotes or trailing stop, at most 80 characters.
pub fn clean(raw: &str) -> Option<String> {
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
    }
}
