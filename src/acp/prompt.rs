//! A `session/prompt`'s content blocks as the prompt cairn's agent takes:
//! text as written; a link to a file inside the workspace as an `@path`
//! mention, so the agent attaches it under its own rules (secrets stay
//! unread, paths outside the workspace are refused); a link elsewhere as
//! the link; an embedded resource (an editor's selection or unsaved
//! buffer) as an attachment in the text; images as images, scaled down
//! as an attached file's are.

use std::path::Path;

use agent_client_protocol::v1::schema as acp;

use crate::conversation::ImageData;

/// The most text one embedded resource adds to a prompt.
pub const RESOURCE_CAP: usize = 256 * 1024;

#[derive(Debug, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<ImageData>,
}

/// The prompt, or why cairn cannot take it (a JSON-RPC error's message).
pub fn read(blocks: &[acp::ContentBlock], workspace: &Path) -> Result<Prompt, String> {
    let mut p = Prompt::default();
    let mut attachments = Vec::new();
    for block in blocks {
        match block {
            acp::ContentBlock::Text(t) => p.text.push_str(&t.text),
            acp::ContentBlock::Image(i) => p.images.push(picture(&i.data, p.images.len())?),
            acp::ContentBlock::ResourceLink(link) => {
                spaced(&mut p.text);
                p.text.push_str(&mention(&link.uri, &link.name, workspace));
            }
            acp::ContentBlock::Resource(r) => match &r.resource {
                acp::EmbeddedResourceResource::TextResourceContents(t) => {
                    attachments.push(attachment(&t.uri, &t.text));
                }
                acp::EmbeddedResourceResource::BlobResourceContents(b) => {
                    match b.mime_type.as_deref() {
                        Some(m) if m.starts_with("image/") => {
                            p.images.push(picture(&b.blob, p.images.len())?)
                        }
                        other => {
                            return Err(format!(
                                "cairn cannot read the binary resource {} ({}); send text or an image",
                                b.uri,
                                other.unwrap_or("no type")
                            ));
                        }
                    }
                }
                _ => return Err("cairn cannot read this kind of embedded resource".into()),
            },
            acp::ContentBlock::Audio(_) => {
                return Err("cairn does not take audio (promptCapabilities.audio is false)".into());
            }
            _ => return Err("cairn cannot read this kind of content block".into()),
        }
    }
    for a in attachments {
        p.text.push_str(&a);
    }
    if p.text.trim().is_empty() && p.images.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(p)
}

/// An attached picture, scaled to what every provider takes.
fn picture(data: &str, before: usize) -> Result<ImageData, String> {
    crate::images::from_base64(data)
        .map(|(image, _)| image)
        .map_err(|e| format!("picture {} cannot be sent: {e}", before + 1))
}

fn spaced(text: &mut String) {
    if !text.is_empty() && !text.ends_with(char::is_whitespace) {
        text.push(' ');
    }
}

/// A linked file inside the workspace as `@relative/path`; anything else
/// as a Markdown link the model can read.
fn mention(uri: &str, name: &str, workspace: &Path) -> String {
    if let Some(path) = uri.strip_prefix("file://").map(Path::new)
        && let Ok(rel) = path.strip_prefix(workspace)
        && !rel.as_os_str().is_empty()
        && !rel.to_string_lossy().contains(char::is_whitespace)
    {
        return format!("@{} ", rel.display());
    }
    format!("[{name}]({uri}) ")
}

fn attachment(uri: &str, text: &str) -> String {
    let shown = crate::text::take_chars(text, RESOURCE_CAP);
    let cut = if shown.len() < text.len() {
        format!("\n(cut to the first {} KB)", RESOURCE_CAP / 1024)
    } else {
        String::new()
    };
    format!("\n\nThe editor attached {uri}:\n````\n{shown}\n````{cut}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(uri: &str) -> acp::ContentBlock {
        acp::ContentBlock::ResourceLink(acp::ResourceLink::new("x", uri))
    }

    #[test]
    fn text_links_and_resources_make_one_prompt() {
        let blocks = vec![
            acp::ContentBlock::Text(acp::TextContent::new("look at")),
            link("file:///w/src/main.rs"),
            link("file:///etc/passwd"),
            acp::ContentBlock::Resource(acp::EmbeddedResource::new(
                acp::EmbeddedResourceResource::TextResourceContents(
                    acp::TextResourceContents::new("unsaved buffer", "file:///w/b.rs"),
                ),
            )),
        ];
        let p = read(&blocks, Path::new("/w")).unwrap();
        assert!(
            p.text
                .starts_with("look at @src/main.rs [x](file:///etc/passwd)"),
            "{}",
            p.text
        );
        assert!(
            p.text
                .contains("The editor attached file:///w/b.rs:\n````\nunsaved buffer\n````")
        );
    }

    #[test]
    fn audio_and_empty_prompts_are_refused_with_a_reason() {
        let audio = acp::ContentBlock::Audio(acp::AudioContent::new("AAAA", "audio/wav"));
        assert!(
            read(&[audio], Path::new("/w"))
                .unwrap_err()
                .contains("audio")
        );
        assert_eq!(
            read(&[], Path::new("/w")).unwrap_err(),
            "the prompt is empty"
        );
    }

    fn png(width: u32, height: u32) -> String {
        use base64::Engine;
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::new_rgb8(width, height)
            .write_to(&mut out, image::ImageFormat::Png)
            .unwrap();
        base64::engine::general_purpose::STANDARD.encode(out.into_inner())
    }

    #[test]
    fn images_are_scaled_and_named_by_their_bytes() {
        // Called a JPEG by the sender; a PNG larger than any provider takes.
        let img = acp::ContentBlock::Image(acp::ImageContent::new(png(4000, 1000), "image/jpeg"));
        let p = read(&[img], Path::new("/w")).unwrap();
        assert_eq!(p.images[0].media_type, "image/png");
        let info = crate::images::describe(&p.images[0]).unwrap();
        assert_eq!((info.width, info.height), (2000, 500));
        let broken = acp::ContentBlock::Image(acp::ImageContent::new("iVBOR", "image/png"));
        let why = read(&[broken], Path::new("/w")).unwrap_err();
        assert!(why.starts_with("picture 1 cannot be sent"), "{why}");
    }
}
