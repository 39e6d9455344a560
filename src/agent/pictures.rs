//! Pictures attached to a prompt (`@shot.png`, `cairn run -i`, a paste):
//! each is shown to the person as a chip and sent as an image part, or the
//! turn is refused before any request when the model cannot see them.

use super::Shared;
use crate::conversation::{ImageData, Message, Part};
use crate::llm::ModelInfo;
use crate::protocol::AgentEvent;

/// The image parts of the person's message, each announced to the front
/// end as an attachment: `[image 1 · 1280×800 png · 210 KB]`. `named`
/// come from `@path` mentions, `unnamed` from the front end.
pub(crate) fn parts(
    shared: &Shared,
    named: Vec<(String, ImageData)>,
    unnamed: Vec<ImageData>,
) -> Vec<Part> {
    let all = named
        .into_iter()
        .map(|(m, i)| (Some(m), i))
        .chain(unnamed.into_iter().map(|i| (None, i)));
    let mut out = Vec::new();
    for (n, (mention, image)) in all.enumerate() {
        let summary = match crate::images::describe(&image) {
            Some(info) => info.chip(n + 1),
            None => format!("[image {} · {}]", n + 1, image.media_type),
        };
        shared.emit(AgentEvent::Attached {
            mention: mention.unwrap_or_default(),
            summary,
            text: String::new(),
        });
        out.push(Part::Image { image });
    }
    out
}

/// Why `message` cannot go to `model`: it holds pictures and the catalogue
/// (or `[models.ID] images`) says the model reads text only.
pub(crate) fn refusal(message: &Message, model: &str, info: &ModelInfo) -> Option<String> {
    let count = (message.parts.iter())
        .filter(|p| matches!(p, Part::Image { .. }))
        .count();
    if count == 0 || info.supports_images {
        return None;
    }
    let what = if count == 1 {
        "an image".to_string()
    } else {
        format!("{count} images")
    };
    Some(format!(
        "the prompt has {what}, and {model} takes text only, so nothing was sent. \
         Switch to a model that takes images (/model), or remove the image; \
         if this model does take them, set `images = true` under [models.\"{model}\"] \
         in config.toml"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_only_model_is_refused_a_picture_and_told_how_to_go_on() {
        let image = Part::Image {
            image: ImageData {
                media_type: "image/png".into(),
                data: "AA==".into(),
            },
        };
        let mut m = Message::user_text("what is wrong here?");
        let mut info = crate::llm::ModelCatalog::global().lookup("some-local-model");
        info.supports_images = false;
        assert_eq!(refusal(&m, "some-local-model", &info), None);
        m.parts.push(image);
        let why = refusal(&m, "some-local-model", &info).unwrap();
        assert!(
            why.contains("takes text only") && why.contains("/model"),
            "{why}"
        );
        info.supports_images = true;
        assert_eq!(refusal(&m, "some-local-model", &info), None);
    }
}
