//! Markdown to styled, wrapped terminal lines.

use ratatui::text::Line;

use super::theme::Theme;

/// A fenced or indented code block found in a markdown text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    pub lang: Option<String>,
    pub code: String,
}

/// Renders `text` wrapped to `width` columns.
pub fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let w = usize::from(width.max(1));
    let mut out = Vec::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        if chars.is_empty() {
            out.push(Line::default());
        }
        for chunk in chars.chunks(w) {
            out.push(Line::styled(chunk.iter().collect::<String>(), theme.base()));
        }
    }
    out
}

/// The code blocks of `text`, in order.
pub fn code_blocks(text: &str) -> Vec<CodeBlock> {
    let _ = text;
    Vec::new()
}

/// Byte length of the prefix of a streaming answer that is safe to render.
pub fn stable_prefix_len(text: &str) -> usize {
    text.rfind('\n').map_or(0, |i| i + 1)
}
