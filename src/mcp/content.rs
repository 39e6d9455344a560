//! A `tools/call` result as cairn's [`ToolOutput`].

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::conversation::{ImageData, ResultContent};
use crate::tools::ToolOutput;

/// Characters of text a result may put into the conversation; a server that
/// dumps a whole database should not fill the model's context.
const MAX_TEXT: usize = 100_000;

/// Renders what the server answered. Images pass through when the model
/// accepts them and are described otherwise; resources become text.
pub(crate) fn render(result: CallToolResult, supports_images: bool) -> ToolOutput {
    let mut content = Vec::new();
    for block in result.content {
        content.push(match block {
            ContentBlock::Text(t) => ResultContent::text(t.text),
            ContentBlock::Image(img) if supports_images => ResultContent::Image {
                image: ImageData {
                    media_type: img.mime_type,
                    data: img.data,
                },
            },
            ContentBlock::Image(img) => ResultContent::text(format!(
                "[image {}, {} bytes; this model cannot view images]",
                img.mime_type,
                decoded_len(&img.data)
            )),
            ContentBlock::Audio(a) => ResultContent::text(format!(
                "[audio {}, {} bytes]",
                a.mime_type,
                decoded_len(&a.data)
            )),
            ContentBlock::Resource(r) => ResultContent::text(match r.resource {
                ResourceContents::TextResourceContents { text, .. } => text,
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => format!(
                    "[resource {uri} ({}), {} bytes]",
                    mime_type.as_deref().unwrap_or("unknown type"),
                    decoded_len(&blob)
                ),
                #[allow(unreachable_patterns)]
                other => serde_json::to_string(&other).unwrap_or_default(),
            }),
            ContentBlock::ResourceLink(link) => {
                let mut text = format!("[resource link {} <{}>", link.name, link.uri);
                if let Some(mime) = &link.mime_type {
                    text.push_str(&format!(" ({mime})"));
                }
                if let Some(description) = &link.description {
                    text.push_str(&format!(": {description}"));
                }
                text.push(']');
                ResultContent::text(text)
            }
            // A content kind newer than this client: show it as JSON rather
            // than lose it.
            #[allow(unreachable_patterns)]
            other => ResultContent::text(serde_json::to_string(&other).unwrap_or_default()),
        });
    }
    if content.is_empty() {
        content.push(ResultContent::text(match result.structured_content {
            Some(value) => value.to_string(),
            None => "(the tool returned no content)".to_string(),
        }));
    }
    ToolOutput {
        content: cap_text(content, MAX_TEXT),
        is_error: result.is_error.unwrap_or(false),
        display: None,
    }
}

/// Cuts text blocks once `max` characters have been kept, and says so.
fn cap_text(content: Vec<ResultContent>, max: usize) -> Vec<ResultContent> {
    let total: usize = content
        .iter()
        .map(|c| match c {
            ResultContent::Text { text } => text.chars().count(),
            ResultContent::Image { .. } => 0,
        })
        .sum();
    if total <= max {
        return content;
    }
    let mut budget = max;
    let mut out = Vec::with_capacity(content.len() + 1);
    for block in content {
        match block {
            ResultContent::Text { text } => {
                if budget == 0 {
                    continue;
                }
                let len = text.chars().count();
                if len <= budget {
                    budget -= len;
                    out.push(ResultContent::Text { text });
                } else {
                    out.push(ResultContent::text(
                        text.chars().take(budget).collect::<String>(),
                    ));
                    budget = 0;
                }
            }
            image => out.push(image),
        }
    }
    out.push(ResultContent::text(format!(
        "[output truncated: {max} of {total} characters shown]"
    )));
    out
}

/// Size of base64 data once decoded, without decoding it.
pub(crate) fn decoded_len(b64: &str) -> usize {
    let trimmed = b64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("bad fixture: {e}"))
    }

    #[test]
    fn text_and_images_pass_through() {
        let r = result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
        ]}));
        let out = render(r.clone(), true);
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            vec![
                ResultContent::text("hello"),
                ResultContent::Image {
                    image: ImageData {
                        media_type: "image/png".into(),
                        data: "aGVsbG8=".into()
                    }
                }
            ]
        );
        let out = render(r, false);
        assert_eq!(
            out.text_content(),
            "hello\n[image image/png, 5 bytes; this model cannot view images]"
        );
    }

    #[test]
    fn resources_become_text() {
        let r = result(json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/gzip", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c.md", "name": "c.md", "mimeType": "text/markdown", "description": "notes"}
        ]}));
        assert_eq!(
            render(r, true).text_content(),
            "inside\n[resource file:///b.bin (application/gzip), 3 bytes]\n[resource link c.md <file:///c.md> (text/markdown): notes]"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        let content = vec![
            ResultContent::text("abcdef"),
            ResultContent::text("ghij"),
            ResultContent::text("klm"),
        ];
        assert_eq!(cap_text(content.clone(), 13), content);
        assert_eq!(
            cap_text(content, 8),
            vec![
                ResultContent::text("abcdef"),
                ResultContent::text("gh"),
                ResultContent::text("[output truncated: 8 of 13 characters shown]"),
            ]
        );
    }

    #[test]
    fn error_flag_and_empty_results() {
        let out = render(
            result(json!({"content": [{"type": "text", "text": "bad input"}], "isError": true})),
            true,
        );
        assert!(out.is_error);
        assert_eq!(out.text_content(), "bad input");
        let out = render(
            result(json!({"content": [], "structuredContent": {"n": 3}})),
            true,
        );
        assert_eq!(out.text_content(), r#"{"n":3}"#);
        let out = render(result(json!({"content": []})), true);
        assert_eq!(out.text_content(), "(the tool returned no content)");
    }
}
