//! Pictures for the next prompt: a pasted path to one, Ctrl+V or
//! `/paste-image` from the clipboard; shown as chips over the prompt,
//! sent with it, and Backspace on an empty prompt takes the last back.

use std::path::PathBuf;

use crate::conversation::ImageData;
use crate::protocol::NoticeLevel;
use crate::tui::cmd::{Cmd, ImageSource};
use crate::tui::model::Model;
use crate::tui::msg::ImageRefused;

/// A paste that is the path of a picture (as a file manager or a
/// terminal's drop puts it: maybe quoted, maybe a `file://` URL) is read
/// as that picture; `None` for any other paste.
pub fn pasted_path(text: &str) -> Option<Cmd> {
    let t = text.trim();
    if t.is_empty() || t.contains('\n') {
        return None;
    }
    let t = t
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .unwrap_or(t);
    let t = t.strip_prefix("file://").unwrap_or(t);
    // A dropped path with spaces arrives with them escaped.
    let path = PathBuf::from(t.replace("\\ ", " "));
    crate::images::has_image_extension(&path).then(|| {
        Cmd::ReadImage(ImageSource::File {
            path,
            pasted: text.to_string(),
        })
    })
}

/// The picture arrived, or why not: a paste that was not a picture goes
/// into the prompt as text, so nothing is lost.
pub fn arrived(model: &mut Model, result: Result<ImageData, ImageRefused>) {
    match result {
        Ok(image) => {
            let info = crate::images::describe(&image);
            model.images.push((image, info));
            let n = model.images.len();
            model.flash(format!(
                "Image {n} attached (Backspace on an empty prompt removes it)"
            ));
        }
        Err(ImageRefused { why, pasted }) => {
            if let Some(text) = pasted {
                model.input.paste(&text);
            }
            model.notice(NoticeLevel::Warning, why);
        }
    }
}

/// Backspace on an empty prompt: the last picture is taken back.
pub fn remove_last(model: &mut Model) -> bool {
    if !model.input.is_empty() || model.images.is_empty() {
        return false;
    }
    model.images.pop();
    model.flash(format!("Image {} removed", model.images.len() + 1));
    true
}

/// The chips of the pictures waiting for the prompt.
pub fn chips(model: &Model) -> Vec<String> {
    (model.images.iter().enumerate())
        .map(|(i, (image, info))| match info {
            Some(info) => info.chip(i + 1),
            None => format!("[image {} · {}]", i + 1, image.media_type),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_picture_path_is_read_and_other_pastes_are_text() {
        for pasted in [
            "/tmp/shot.png",
            "'/tmp/my shot.PNG'",
            "file:///tmp/shot.jpeg",
            "/tmp/my\\ shot.webp\n",
        ] {
            assert!(
                matches!(
                    pasted_path(pasted),
                    Some(Cmd::ReadImage(ImageSource::File { .. }))
                ),
                "{pasted}"
            );
        }
        for pasted in ["hello", "/tmp/notes.md", "a.png\nb.png", ""] {
            assert_eq!(pasted_path(pasted), None, "{pasted}");
        }
    }
}
