//! A session as a document a person can read or a program can parse.

use serde_json::json;

use super::{MessageStatus, SessionId, Store, StoreError};
use crate::conversation::{Part, Role, result_text};

/// A fence longer than any run of backticks inside `text`, so embedded code
/// blocks cannot close it early.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

fn push_block(out: &mut String, lang: &str, text: &str) {
    let fence = fence_for(text);
    out.push_str(&format!("{fence}{lang}\n{text}"));
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("{fence}\n\n"));
}

/// A provider's own web search: its queries and the pages it found.
fn push_search(out: &mut String, search: &crate::conversation::WebSearch) {
    out.push_str(&format!(
        "**Web search:** {}\n\n",
        one_line(&search.query_line())
    ));
    if let Some(why) = &search.error {
        out.push_str(&format!("*The search failed: {}*\n\n", one_line(why)));
    }
    push_sources(out, &search.sources);
}

/// Numbered sources, each its title and its address.
fn push_sources(out: &mut String, sources: &[crate::conversation::Source]) {
    for line in crate::conversation::Source::numbered(sources, one_line) {
        out.push_str(&line);
        out.push('\n');
    }
    if !sources.is_empty() {
        out.push('\n');
    }
}

/// Provider text on one line, so it cannot start a heading or a block.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A compaction where it happened: the summary the model continued from.
fn push_compaction(out: &mut String, c: &super::NewCompaction) {
    out.push_str(&format!(
        "## Compaction\n\n*The turns before turn {} were summarised (about {} tokens down to {}); the model continued from this summary:*\n\n",
        c.from_turn, c.before_tokens, c.after_tokens
    ));
    for line in c.summary.trim_end().lines() {
        out.push_str("> ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

/// `cairn-session-ID-image-N.png`: the file a Markdown export names for
/// its Nth picture.
fn image_file_name(id: &SessionId, n: usize, media_type: &str) -> String {
    let ext = ["png", "gif", "webp"]
        .into_iter()
        .find(|e| media_type.strip_prefix("image/") == Some(*e))
        .unwrap_or("jpg");
    format!("cairn-session-{}-image-{n}.{ext}", id.as_str())
}

impl Store {
    /// The session as Markdown: a heading per message, tool calls and their
    /// results as code blocks. Undone turns are left out.
    pub fn export_markdown(&self, id: &SessionId) -> Result<String, StoreError> {
        let session = self.session(id)?;
        let messages = self.load_messages(id)?;
        let mut out = format!("# {}\n\n", session.display_title());
        out.push_str(&format!(
            "- session: `{}`\n- model: {} ({})\n- directory: `{}`\n- tokens: {} in, {} out\n\n",
            session.id,
            session.model,
            session.provider,
            session.cwd.display(),
            session.input_tokens,
            session.output_tokens
        ));
        let compactions = self.compactions(id)?;
        let count = messages.len();
        let mut pictures = 0;
        for (i, (_, message, meta)) in messages.into_iter().enumerate() {
            for c in compactions
                .iter()
                .filter(|c| c.compaction.at_count as usize == i)
            {
                push_compaction(&mut out, &c.compaction);
            }
            if meta.status == MessageStatus::Undone {
                continue;
            }
            let only_results = message
                .parts
                .iter()
                .all(|p| matches!(p, Part::ToolResult { .. }));
            let heading = match (message.role, only_results) {
                (Role::User, true) => "## Tool results",
                (Role::User, false) => "## User",
                (Role::Assistant, _) => "## Assistant",
            };
            out.push_str(heading);
            out.push_str("\n\n");
            for part in &message.parts {
                match part {
                    Part::Text { text } => {
                        out.push_str(text.trim_end());
                        out.push_str("\n\n");
                    }
                    Part::Reasoning { text, .. } => {
                        for line in text.trim_end().lines() {
                            out.push_str("> ");
                            out.push_str(line);
                            out.push('\n');
                        }
                        out.push('\n');
                    }
                    Part::Image { image } => {
                        pictures += 1;
                        let name = image_file_name(id, pictures, &image.media_type);
                        out.push_str(&format!("![image {pictures}]({name})\n\n"));
                    }
                    // Opaque to people; kept only for the provider.
                    Part::ProviderData { .. } => {}
                    Part::WebSearch(search) => push_search(&mut out, search),
                    Part::Citations { sources } => {
                        out.push_str("**Sources cited**\n\n");
                        push_sources(&mut out, sources);
                    }
                    Part::ToolCall { name, input, .. } => {
                        out.push_str(&format!("**Tool call: {name}**\n\n"));
                        let args = serde_json::to_string_pretty(input)
                            .unwrap_or_else(|_| input.to_string());
                        push_block(&mut out, "json", &args);
                    }
                    Part::ToolResult {
                        content, is_error, ..
                    } => {
                        let label = if *is_error {
                            "Tool error"
                        } else {
                            "Tool output"
                        };
                        out.push_str(&format!("**{label}**\n\n"));
                        push_block(&mut out, "", &result_text(content));
                    }
                }
            }
        }
        for c in compactions
            .iter()
            .filter(|c| c.compaction.at_count as usize >= count)
        {
            push_compaction(&mut out, &c.compaction);
        }
        Ok(out)
    }

    /// The pictures of the session's prompts, named as the Markdown export
    /// refers to them, with their bytes: written beside that export.
    pub fn export_images(&self, id: &SessionId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut out = Vec::new();
        for (_, message, meta) in self.load_messages(id)? {
            if meta.status == MessageStatus::Undone {
                continue;
            }
            for part in &message.parts {
                if let Part::Image { image } = part {
                    let name = image_file_name(id, out.len() + 1, &image.media_type);
                    out.push((name, crate::images::decoded(image).unwrap_or_default()));
                }
            }
        }
        Ok(out)
    }

    /// The whole session as JSON: its summary and every message with its
    /// parts and metadata, undone ones included.
    pub fn export_json(&self, id: &SessionId) -> Result<serde_json::Value, StoreError> {
        let session = self.session(id)?;
        let messages: Vec<serde_json::Value> = self
            .load_messages(id)?
            .into_iter()
            .map(|(mid, message, meta)| {
                json!({
                    "id": mid.0,
                    "role": message.role,
                    "parts": message.parts,
                    "model": meta.model,
                    "usage": meta.usage,
                    "cost": meta.cost,
                    "turn": meta.turn,
                    "status": meta.status,
                })
            })
            .collect();
        let compactions: Vec<serde_json::Value> = self
            .compactions(id)?
            .into_iter()
            .map(|c| {
                json!({
                    "from_turn": c.compaction.from_turn,
                    "at_message": c.compaction.at_count,
                    "summary": c.compaction.summary,
                    "before_tokens": c.compaction.before_tokens,
                    "after_tokens": c.compaction.after_tokens,
                    "created_at": c.created_at,
                })
            })
            .collect();
        Ok(json!({
            "format": "cairn-session",
            "version": 1,
            "session": session,
            "messages": messages,
            "compactions": compactions,
        }))
    }
}
