//! Reading a picture for the prompt off the interface thread: from the
//! system clipboard, or from a file whose path was pasted.

use std::path::Path;

use tokio::sync::mpsc::UnboundedSender;

use crate::tui::cmd::ImageSource;
use crate::tui::msg::{ImageRefused, Msg};

/// Reads the picture and answers with `Msg::Image` (or, when the clipboard
/// holds text rather than a picture, with that text as a paste).
pub fn read_image(source: ImageSource, root: &Path, tx: UnboundedSender<Msg>) {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let msg = match source {
            ImageSource::Clipboard => from_clipboard(),
            ImageSource::File { path, pasted } => {
                let path = root.join(path);
                match crate::images::read_file(&path) {
                    Ok((image, _)) => Msg::Image(Ok(image)),
                    Err(why) => Msg::Image(Err(ImageRefused {
                        why: format!("{} was not attached: {why}", path.display()),
                        pasted: Some(pasted),
                    })),
                }
            }
        };
        let _ = tx.send(msg);
    });
}

fn from_clipboard() -> Msg {
    let refused = |why: String| {
        Msg::Image(Err(ImageRefused {
            why: format!("no picture pasted: {why}"),
            pasted: None,
        }))
    };
    let mut clipboard = match arboard::Clipboard::new() {
        Ok(c) => c,
        Err(e) => {
            return match from_clipboard_program() {
                Some(Ok(image)) => Msg::Image(Ok(image)),
                Some(Err(why)) => refused(why),
                None => refused(format!(
                    "the clipboard cannot be read ({}); attach the picture by its path instead \
                     (type or paste @path/to/shot.png, or `cairn run -i shot.png`)",
                    crate::text::fit(&e.to_string(), 120)
                )),
            };
        }
    };
    match clipboard.get_image() {
        Ok(img) => {
            let (w, h) = (img.width as u32, img.height as u32);
            match crate::images::from_rgba(w, h, img.bytes.into_owned()) {
                Ok((image, _)) => Msg::Image(Ok(image)),
                Err(why) => refused(why.to_string()),
            }
        }
        // Ctrl+V where the terminal does not paste by itself: text is
        // pasted as text.
        Err(_) => match clipboard.get_text() {
            Ok(text) if !text.is_empty() => Msg::Paste(text),
            _ => refused("the clipboard holds no picture".into()),
        },
    }
}

/// Where the clipboard library cannot reach the clipboard (Wayland without
/// its X11 bridge), the desktop's own clipboard program may: `wl-paste` on
/// Wayland, `xclip` on X11. `None` when neither is there to ask.
fn from_clipboard_program() -> Option<Result<crate::conversation::ImageData, String>> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
    let x11 = std::env::var_os("DISPLAY").is_some();
    let tries: &[(bool, &str, &[&str])] = &[
        (
            wayland,
            "wl-paste",
            &["--no-newline", "--type", "image/png"],
        ),
        (
            x11,
            "xclip",
            &["-selection", "clipboard", "-target", "image/png", "-out"],
        ),
    ];
    for (_, program, args) in tries.iter().filter(|t| t.0) {
        let Ok(out) = std::process::Command::new(program)
            .args(*args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
        else {
            continue;
        };
        if !out.status.success() || out.stdout.is_empty() {
            return Some(Err(format!("{program} found no picture on the clipboard")));
        }
        return Some(
            crate::images::prepare(&out.stdout)
                .map(|(image, _)| image)
                .map_err(|e| e.to_string()),
        );
    }
    None
}
