//! Pictures a person attaches to a prompt (a file, `-i`, the clipboard):
//! recognised by their bytes, scaled down to what every provider accepts,
//! and described in one short chip (`[image 1 · 1280×800 png · 210 KB]`).

use std::io::{Cursor, Read};
use std::path::Path;

use base64::Engine;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

use crate::conversation::ImageData;

/// The longest side sent: larger pictures are scaled down (providers
/// shrink them anyway, and some refuse past 8000 px).
pub const MAX_SIDE: u32 = 2000;
/// The most bytes of one picture sent (Bedrock's limit, under Anthropic's
/// 5 MB): larger ones are re-encoded smaller.
pub const MAX_BYTES: usize = 3_750_000;
/// The largest file read at all.
pub const MAX_FILE: u64 = 40 * 1024 * 1024;
/// The largest picture decoded, per side: a decompression bomb stops here.
const MAX_DECODED_SIDE: u32 = 20_000;

/// Why a picture could not be attached, said to the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("it is not a PNG, JPEG, GIF or WebP image")]
    NotAnImage,
    #[error("it is {0} bytes, over the {MAX_FILE}-byte limit for pictures")]
    TooLarge(u64),
    #[error("the picture cannot be read: {0}")]
    Broken(String),
    #[error("{0}")]
    Io(String),
}

/// What a picture is, for the chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    pub width: u32,
    pub height: u32,
    /// `png`, `jpeg`, `gif`, `webp`.
    pub format: &'static str,
    /// Bytes sent (before base64).
    pub bytes: usize,
}

impl ImageInfo {
    /// `[image 1 · 1280×800 png · 210 KB]`.
    pub fn chip(&self, number: usize) -> String {
        format!(
            "[image {number} · {}×{} {} · {}]",
            self.width,
            self.height,
            self.format,
            human_size(self.bytes)
        )
    }
}

fn human_size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KB", bytes.div_ceil(1024).max(1))
    }
}

/// The formats providers take, by their first bytes.
fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some(ImageFormat::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(ImageFormat::Gif)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(ImageFormat::WebP)
    } else {
        None
    }
}

fn name_of(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "png",
        ImageFormat::Jpeg => "jpeg",
        ImageFormat::Gif => "gif",
        _ => "webp",
    }
}

/// Whether `bytes` begin like a picture cairn can attach.
pub fn looks_like_image(bytes: &[u8]) -> bool {
    sniff(bytes).is_some()
}

/// Whether a path names a picture by its extension (a pasted path, an
/// `@shot.png`).
pub fn has_image_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| {
            matches!(
                e.to_ascii_lowercase().as_str(),
                "png" | "jpg" | "jpeg" | "gif" | "webp"
            )
        })
        .unwrap_or(false)
}

fn reader(bytes: &[u8], format: ImageFormat) -> ImageReader<Cursor<&[u8]>> {
    let mut r = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    r.limits(limits);
    r
}

/// A picture ready to send, from the bytes of a file: kept as it is when
/// it fits the limits, scaled down and re-encoded when not.
pub fn prepare(bytes: &[u8]) -> Result<(ImageData, ImageInfo), ImageError> {
    let format = sniff(bytes).ok_or(ImageError::NotAnImage)?;
    let (width, height) = reader(bytes, format)
        .into_dimensions()
        .map_err(|e| ImageError::Broken(e.to_string()))?;
    if width.max(height) <= MAX_SIDE && bytes.len() <= MAX_BYTES {
        let info = ImageInfo {
            width,
            height,
            format: name_of(format),
            bytes: bytes.len(),
        };
        return Ok((encoded(bytes, format), info));
    }
    let picture = reader(bytes, format)
        .decode()
        .map_err(|e| ImageError::Broken(e.to_string()))?;
    shrink(picture)
}

/// A picture from raw RGBA pixels (what a clipboard holds), as PNG.
pub fn from_rgba(
    width: u32,
    height: u32,
    rgba: Vec<u8>,
) -> Result<(ImageData, ImageInfo), ImageError> {
    let buffer = image::RgbaImage::from_raw(width, height, rgba)
        .ok_or_else(|| ImageError::Broken("the pixels do not fill the picture".into()))?;
    shrink(DynamicImage::ImageRgba8(buffer))
}

/// Scales `picture` to fit [`MAX_SIDE`] and encodes it as PNG, or as JPEG
/// when the PNG is over [`MAX_BYTES`] (photographs), halving the size
/// until it fits.
fn shrink(mut picture: DynamicImage) -> Result<(ImageData, ImageInfo), ImageError> {
    if picture.width().max(picture.height()) > MAX_SIDE {
        picture = picture.resize(MAX_SIDE, MAX_SIDE, image::imageops::FilterType::Triangle);
    }
    loop {
        for format in [ImageFormat::Png, ImageFormat::Jpeg] {
            let mut out = Cursor::new(Vec::new());
            let written = if format == ImageFormat::Jpeg {
                DynamicImage::ImageRgb8(picture.to_rgb8()).write_to(&mut out, format)
            } else {
                picture.write_to(&mut out, format)
            };
            written.map_err(|e| ImageError::Broken(e.to_string()))?;
            let bytes = out.into_inner();
            if bytes.len() <= MAX_BYTES {
                let info = ImageInfo {
                    width: picture.width(),
                    height: picture.height(),
                    format: name_of(format),
                    bytes: bytes.len(),
                };
                return Ok((encoded(&bytes, format), info));
            }
        }
        if picture.width() <= 64 || picture.height() <= 64 {
            return Err(ImageError::Broken(
                "it does not shrink under the size limit".into(),
            ));
        }
        let (w, h) = (picture.width() / 2, picture.height() / 2);
        picture = picture.resize(w, h, image::imageops::FilterType::Triangle);
    }
}

fn encoded(bytes: &[u8], format: ImageFormat) -> ImageData {
    ImageData {
        media_type: format!("image/{}", name_of(format)),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// Reads a picture file, refusing anything that is not a regular file
/// (a pipe would block) or is too large to be a screenshot.
pub fn read_file(path: &Path) -> Result<(ImageData, ImageInfo), ImageError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| ImageError::Io(e.to_string()))?;
    read_open(file)
}

/// [`read_file`] of a file already opened (by a caller that pinned it).
pub fn read_open(file: std::fs::File) -> Result<(ImageData, ImageInfo), ImageError> {
    let meta = file.metadata().map_err(|e| ImageError::Io(e.to_string()))?;
    if !meta.is_file() {
        return Err(ImageError::Io("it is not a regular file".into()));
    }
    if meta.len() > MAX_FILE {
        return Err(ImageError::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ImageError::Io(e.to_string()))?;
    prepare(&bytes)
}

/// What an attached picture is (from its header only), for showing a
/// stored one again.
pub fn describe(image: &ImageData) -> Option<ImageInfo> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .ok()?;
    let format = sniff(&bytes)?;
    let (width, height) = reader(&bytes, format).into_dimensions().ok()?;
    Some(ImageInfo {
        width,
        height,
        format: name_of(format),
        bytes: bytes.len(),
    })
}

/// The bytes of a picture, for writing it out (export).
/// A picture another program sent as base64 (an editor's prompt), made
/// ready as [`prepare`] makes a file's: its kind read from its bytes, not
/// from what the sender called it.
pub fn from_base64(data: &str) -> Result<(ImageData, ImageInfo), ImageError> {
    // Base64 takes 4 characters for 3 bytes.
    let size = data.len() as u64 / 4 * 3;
    if size > MAX_FILE {
        return Err(ImageError::TooLarge(size));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|_| ImageError::Broken("it is not base64".into()))?;
    prepare(&bytes)
}

pub fn decoded(image: &ImageData) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut pixels = image::RgbImage::new(width, height);
        for (x, y, p) in pixels.enumerate_pixels_mut() {
            *p = image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8]);
        }
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(pixels)
            .write_to(&mut out, ImageFormat::Png)
            .unwrap();
        out.into_inner()
    }

    #[test]
    fn a_small_png_is_sent_unchanged_and_described() {
        let bytes = png(64, 40);
        let (data, info) = prepare(&bytes).unwrap();
        assert_eq!(data.media_type, "image/png");
        assert_eq!(decoded(&data).unwrap(), bytes);
        assert_eq!((info.width, info.height, info.format), (64, 40, "png"));
        assert_eq!(describe(&data), Some(info));
        assert!(
            info.chip(1).starts_with("[image 1 · 64×40 png · "),
            "{}",
            info.chip(1)
        );
    }

    #[test]
    fn a_large_picture_is_scaled_to_the_longest_side_allowed() {
        let (data, info) = prepare(&png(3000, 1500)).unwrap();
        assert_eq!((info.width, info.height), (MAX_SIDE, 1000));
        assert!(info.bytes <= MAX_BYTES);
        assert_eq!(describe(&data).unwrap().width, MAX_SIDE);
    }

    #[test]
    fn text_and_broken_headers_are_refused_plainly() {
        assert_eq!(prepare(b"hello world"), Err(ImageError::NotAnImage));
        let mut cut = png(10, 10);
        cut.truncate(12);
        assert!(matches!(prepare(&cut), Err(ImageError::Broken(_))));
    }

    #[test]
    fn clipboard_pixels_become_a_png() {
        let (data, info) = from_rgba(2, 1, vec![255, 0, 0, 255, 0, 255, 0, 255]).unwrap();
        assert_eq!(
            (data.media_type.as_str(), info.width, info.height),
            ("image/png", 2, 1)
        );
        assert!(from_rgba(3, 3, vec![0; 4]).is_err());
    }
}
