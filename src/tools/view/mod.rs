//! `view`: reads a file with numbered lines, or an image when the model can
//! see images, and records what it saw for the edit tools.

use std::fs;
use std::hash::Hasher;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use base64::Engine;
use serde_json::{Value, json};

use super::state::FileStamp;
use super::walk::{blocking, cut_line, human_size, walker};
use super::{Tool, ToolContext, ToolOutput, opt_u64_arg, str_arg};
use crate::conversation::ImageData;

const DEFAULT_LIMIT: u64 = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Above this a file is read line by line rather than whole.
const MAX_WHOLE_FILE: u64 = 5 * 1024 * 1024;
/// Above this a view stops reading once its page is out: the lines after it
/// are not counted, so a 2 GB log's first page costs what a small file's does.
/// Every file the edit tools take is still read to its end, so its view is
/// recorded for them.
const COUNT_LIMIT: u64 = super::regular::MAX_EDIT_FILE;
/// While streaming, a line keeps at most this many bytes in memory (the view
/// cuts lines far shorter anyway); the rest is read past, not stored.
const MAX_LINE_BYTES: usize = 64 * 1024;
/// Providers reject larger images.
const MAX_IMAGE: u64 = 5 * 1024 * 1024;
/// How much of a file the binary heuristics look at.
const SNIFF_LEN: usize = 8192;
/// Bounds the workspace walk that looks for a missing file elsewhere.
const SUGGEST_WALK_LIMIT: usize = 50_000;
const MAX_SUGGESTIONS: usize = 5;

pub struct ViewTool;

#[async_trait]
impl Tool for ViewTool {
    fn name(&self) -> &str {
        "view"
    }

    fn description(&self) -> &str {
        include_str!("../../../assets/tools/view.md")
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "Path of the file to read, absolute or relative to the current directory."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "1-based line number to start at. Default 1."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines to show. Default 2000."
                }
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn summary(&self, input: &Value) -> String {
        let path = input.get("file_path").and_then(Value::as_str).unwrap_or("");
        let offset = opt_u64_arg(input, "offset").ok().flatten();
        let limit = opt_u64_arg(input, "limit").ok().flatten();
        match (offset, limit) {
            (None, None) => format!("view {path}"),
            (Some(o), None) => format!("view {path} (from line {o})"),
            (o, Some(l)) => {
                let start = o.unwrap_or(1).max(1);
                format!(
                    "view {path} (lines {start}-{})",
                    start + l.saturating_sub(1)
                )
            }
        }
    }

    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        match str_arg(input, "file_path") {
            Ok(p) => vec![ctx.resolve(p)],
            Err(_) => Vec::new(),
        }
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let args = match Args::parse(&input) {
            Ok(a) => a,
            Err(e) => return ToolOutput::error(e),
        };
        let ctx = ctx.clone();
        let path = ctx.resolve(&args.file_path);
        blocking(move || view_file(&ctx, &path, args.offset, args.limit))
            .await
            .unwrap_or_else(ToolOutput::error)
    }
}

struct Args {
    file_path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

impl Args {
    fn parse(input: &Value) -> Result<Args, String> {
        let file_path = str_arg(input, "file_path")?.to_string();
        if file_path.trim().is_empty() {
            return Err("`file_path` is empty; give the path of a file to read".into());
        }
        let offset = opt_u64_arg(input, "offset")?;
        let limit = opt_u64_arg(input, "limit")?;
        if limit == Some(0) {
            return Err("`limit` must be at least 1".into());
        }
        Ok(Args {
            file_path,
            offset,
            limit,
        })
    }
}

fn view_file(
    ctx: &ToolContext,
    path: &Path,
    offset: Option<u64>,
    limit: Option<u64>,
) -> ToolOutput {
    let shown = ctx.display_path(path);
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolOutput::error(missing_file_message(ctx, path));
        }
        Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
    };
    if meta.is_dir() {
        return ToolOutput::error(format!(
            "{shown} is a directory, not a file; use ls to list its contents"
        ));
    }
    if let Some(refusal) = super::regular::refusal(&shown, &meta) {
        return ToolOutput::error(refusal);
    }
    if let Some(kind) = image_kind(path) {
        return view_image(ctx, path, &meta, kind);
    }
    let range = LineRange::new(offset, limit);
    if meta.len() > MAX_WHOLE_FILE {
        return view_streaming(ctx, path, &meta, range);
    }
    let bytes = match super::files::read_bounded(ctx, path, MAX_WHOLE_FILE) {
        Ok(b) => b,
        Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
    };
    let text = match decode_text(&bytes) {
        Some(t) => t,
        None => return ToolOutput::error(binary_message(&shown, meta.len(), &bytes)),
    };
    let mut render = Render::new(range);
    for line in text.lines() {
        render.push(line);
    }
    let mut out = render.finish(&shown);
    if let std::borrow::Cow::Owned(lossy) = &text
        && !out.is_error
    {
        let bad = lossy.matches(char::REPLACEMENT_CHARACTER).count();
        out.content
            .push(crate::conversation::ResultContent::text(format!(
                "\n(The file is not all UTF-8: {bad} invalid byte sequence{} shown as \
             \u{FFFD}. An edit cannot quote those characters; edit around them.)",
                if bad == 1 { " is" } else { "s are" }
            )));
    }
    if !out.is_error {
        ctx.session
            .record_view(path, FileStamp::of_bytes(&bytes, &meta));
    }
    out
}

/// Reads a big file line by line, so memory stays small however large it
/// is, hashing as it goes so the view can still be recorded.
fn view_streaming(
    ctx: &ToolContext,
    path: &Path,
    meta: &fs::Metadata,
    range: LineRange,
) -> ToolOutput {
    let shown = ctx.display_path(path);
    let file = match super::beneath::open(path) {
        Ok(f) => f,
        Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut sniff = Vec::new();
    if let Err(e) = reader
        .by_ref()
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut sniff)
    {
        return ToolOutput::error(format!("cannot read {shown}: {e}"));
    }
    if is_binary_sample(&sniff) {
        return ToolOutput::error(binary_message(&shown, meta.len(), &sniff));
    }
    // Start again from the top, now that the sample looks like text.
    let file = match super::beneath::open(path) {
        Ok(f) => f,
        Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut hasher = StreamHasher::new(meta.len());
    let mut render = Render::new(range);
    let mut buf = Vec::new();
    let counts_all = meta.len() <= COUNT_LIMIT;
    loop {
        if render.total.is_multiple_of(65_536) && ctx.cancel.is_cancelled() {
            return ToolOutput::error("cancelled");
        }
        if !counts_all && render.page_done() {
            return render.finish_uncounted(&shown, meta.len());
        }
        match read_capped_line(&mut reader, &mut buf, &mut hasher) {
            Ok(0) => break,
            Ok(len) => {
                if render.wants_text() {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim_end_matches(['\n', '\r']);
                    if len > buf.len() {
                        let kept: String = line.chars().take(MAX_LINE_CHARS).collect();
                        render.push_cut(&kept, len as u64);
                    } else {
                        render.push(line);
                    }
                } else {
                    render.total += 1;
                }
            }
            Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
        }
    }
    let out = render.finish(&shown);
    if !out.is_error
        && let Some(stamp) = hasher.finish(meta)
    {
        ctx.session.record_view(path, stamp);
    }
    out
}

/// Reads one line (up to and including its newline) into `buf`, keeping at
/// most [`MAX_LINE_BYTES`] of it; every byte read goes to `hasher`. Returns
/// how many bytes the line had, 0 at the end of the file.
fn read_capped_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    hasher: &mut StreamHasher,
) -> std::io::Result<usize> {
    buf.clear();
    let mut total = 0;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        hasher.write(&chunk[..used]);
        let room = MAX_LINE_BYTES.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..used.min(room)]);
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

/// Hashes a file read in pieces the same way `FileStamp::of_bytes` hashes
/// it whole (a length prefix, then the bytes), so the edit tools can compare
/// the two. The `streamed_hash_matches_of_bytes` test guards the equivalence.
struct StreamHasher {
    hasher: std::collections::hash_map::DefaultHasher,
    expected: u64,
    seen: u64,
}

impl StreamHasher {
    fn new(expected: u64) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        hasher.write_usize(expected as usize);
        StreamHasher {
            hasher,
            expected,
            seen: 0,
        }
    }
    fn write(&mut self, bytes: &[u8]) {
        self.hasher.write(bytes);
        self.seen += bytes.len() as u64;
    }
    /// `None` when the file changed size while it was read: then the hash
    /// describes no real state of the file and must not be recorded.
    fn finish(self, meta: &fs::Metadata) -> Option<FileStamp> {
        (self.seen == self.expected).then(|| FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            hash: self.hasher.finish(),
        })
    }
}

#[derive(Clone, Copy)]
struct LineRange {
    /// 1-based first line.
    start: u64,
    limit: u64,
}

impl LineRange {
    fn new(offset: Option<u64>, limit: Option<u64>) -> Self {
        LineRange {
            start: offset.unwrap_or(1).max(1),
            limit: limit.unwrap_or(DEFAULT_LIMIT),
        }
    }
}

/// Numbers lines like `cat -n` and writes the footer.
struct Render {
    range: LineRange,
    out: String,
    total: u64,
    shown: u64,
}

impl Render {
    fn new(range: LineRange) -> Self {
        Render {
            range,
            out: String::new(),
            total: 0,
            shown: 0,
        }
    }

    fn wants_text(&self) -> bool {
        let next = self.total + 1;
        next >= self.range.start && self.shown < self.range.limit
    }

    /// A line too long to keep whole: its first characters and its size.
    fn push_cut(&mut self, kept: &str, len: u64) {
        let n = self.total + 1;
        self.out.push_str(&format!(
            "{n:>6}\t{kept}… [line cut, {} in all]\n",
            human_size(len)
        ));
        self.shown += 1;
        self.total += 1;
    }

    fn push(&mut self, line: &str) {
        if self.wants_text() {
            let n = self.total + 1;
            self.out
                .push_str(&format!("{n:>6}\t{}\n", cut_line(line, MAX_LINE_CHARS)));
            self.shown += 1;
        }
        self.total += 1;
    }

    /// Whether every line the view asked for is out.
    fn page_done(&self) -> bool {
        self.shown >= self.range.limit
    }

    /// The page of a file too large to count to its end.
    fn finish_uncounted(mut self, shown_path: &str, size: u64) -> ToolOutput {
        let last = self.range.start + self.shown - 1;
        self.out.push_str(&format!(
            "\n… {shown_path} goes on: it is {}, too large to count its lines; \
             use offset={} to continue, or grep to search it\n",
            human_size(size),
            last + 1
        ));
        ToolOutput::text(self.out)
    }

    fn finish(mut self, shown_path: &str) -> ToolOutput {
        if self.total == 0 {
            return ToolOutput::text(format!("{shown_path} is empty (0 lines)."));
        }
        if self.range.start > self.total {
            return ToolOutput::error(format!(
                "offset {} is past the end of {shown_path}, which has {} lines; \
                 use an offset between 1 and {}",
                self.range.start, self.total, self.total
            ));
        }
        let last = self.range.start + self.shown - 1;
        let remaining = self.total - last;
        if remaining > 0 {
            self.out.push_str(&format!(
                "\n… {remaining} more {}; use offset={} to continue\n",
                crate::text::plural(remaining as usize, "line", "lines"),
                last + 1
            ));
        }
        ToolOutput::text(self.out)
    }
}

/// Text as UTF-8, or `None` when the bytes look binary. A few invalid
/// sequences (a Latin-1 accent in a comment) still count as text.
fn decode_text(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if is_binary_sample(&bytes[..bytes.len().min(SNIFF_LEN)]) {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    if let std::borrow::Cow::Owned(ref s) = text {
        let bad = s
            .chars()
            .filter(|&c| c == char::REPLACEMENT_CHARACTER)
            .count();
        if bad * 100 > s.chars().count().max(1) {
            return None;
        }
    }
    Some(text)
}

fn is_binary_sample(sample: &[u8]) -> bool {
    if sample.contains(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(sample);
    let total = text.chars().count().max(1);
    let odd = text
        .chars()
        .filter(|&c| {
            c == char::REPLACEMENT_CHARACTER
                || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c' | '\x1b'))
        })
        .count();
    // A cut at the end of the sample can split one multi-byte character.
    odd > 1 && odd * 10 > total
}

fn binary_message(shown: &str, size: u64, head: &[u8]) -> String {
    format!(
        "{shown} is a binary file ({}, {}); view only shows text. \
         Inspect it with a shell command (e.g. `file` or `xxd | head`) if you need to.",
        describe_binary(head),
        human_size(size)
    )
}

fn describe_binary(head: &[u8]) -> &'static str {
    const KINDS: [(&[u8], &str); 12] = [
        (b"\x7fELF", "ELF executable"),
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "zip archive"),
        (b"\x1f\x8b", "gzip archive"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"\0asm", "WebAssembly module"),
        (b"MZ", "Windows executable"),
        (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
        (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
        (b"\x89PNG", "PNG image"),
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF8", "GIF image"),
    ];
    KINDS
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|(_, kind)| *kind)
        .unwrap_or("binary data")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    fn media_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }
    fn label(self) -> &'static str {
        match self {
            ImageKind::Png => "PNG",
            ImageKind::Jpeg => "JPEG",
            ImageKind::Gif => "GIF",
            ImageKind::Webp => "WebP",
        }
    }
}

/// An image only when the extension and the first bytes agree: a `.png`
/// that is really text is shown as text.
fn image_kind(path: &Path) -> Option<ImageKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let kind = match ext.as_str() {
        "png" => ImageKind::Png,
        "jpg" | "jpeg" => ImageKind::Jpeg,
        "gif" => ImageKind::Gif,
        "webp" => ImageKind::Webp,
        _ => return None,
    };
    let mut head = [0u8; 12];
    let mut file = super::beneath::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    let head = &head[..n];
    let ok = match kind {
        ImageKind::Png => head.starts_with(b"\x89PNG\r\n\x1a\n"),
        ImageKind::Jpeg => head.starts_with(b"\xff\xd8\xff"),
        ImageKind::Gif => head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a"),
        ImageKind::Webp => head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP",
    };
    ok.then_some(kind)
}

fn view_image(ctx: &ToolContext, path: &Path, meta: &fs::Metadata, kind: ImageKind) -> ToolOutput {
    let shown = ctx.display_path(path);
    let about = format!("{} image, {}", kind.label(), human_size(meta.len()));
    if !ctx.supports_images {
        return ToolOutput::error(format!(
            "{shown} is an image ({about}); the current model can't view images. \
             Ask the user to describe it, or inspect its metadata with a shell command."
        ));
    }
    if meta.len() > MAX_IMAGE {
        return ToolOutput::error(format!(
            "{shown} is an image ({about}), over the {} limit for images",
            human_size(MAX_IMAGE)
        ));
    }
    let bytes = match super::regular::read_bounded(path, MAX_IMAGE) {
        Ok(b) => b,
        Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
    };
    ctx.session
        .record_view(path, FileStamp::of_bytes(&bytes, meta));
    let image = ImageData {
        media_type: kind.media_type().to_string(),
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
    };
    ToolOutput::image(image, format!("{shown} ({about})"))
}

/// "Not found" plus paths the model may have meant: the same file name
/// elsewhere in the workspace, and similar names in the same directory.
fn missing_file_message(ctx: &ToolContext, path: &Path) -> String {
    let shown = ctx.display_path(path);
    let mut found: Vec<PathBuf> = Vec::new();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if let Some(dir) = path.parent()
        && let Ok(entries) = fs::read_dir(dir)
    {
        let mut near: Vec<(usize, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let cand = e.file_name().to_string_lossy().to_lowercase();
                name_distance(&name, &cand).map(|d| (d, e.path()))
            })
            .collect();
        near.sort();
        found.extend(near.into_iter().map(|(_, p)| p));
    }
    if !name.is_empty() {
        for entry in walker(&ctx.workspace)
            .build()
            .filter_map(Result::ok)
            .take(SUGGEST_WALK_LIMIT)
        {
            if ctx.cancel.is_cancelled() || found.len() >= MAX_SUGGESTIONS * 2 {
                break;
            }
            if entry.file_name().to_string_lossy().to_lowercase() == name
                && !found.iter().any(|p| p == entry.path())
            {
                found.push(entry.into_path());
            }
        }
    }
    found.truncate(MAX_SUGGESTIONS);
    if found.is_empty() {
        return format!(
            "file not found: {shown}. No similar paths found; use glob or ls to look for it."
        );
    }
    let list: Vec<String> = found
        .iter()
        .map(|p| format!("  {}", ctx.display_path(p)))
        .collect();
    format!(
        "file not found: {shown}. Did you mean:\n{}",
        list.join("\n")
    )
}

/// How far `cand` is from the wanted name, when close enough to suggest:
/// same name in another case, another extension, or a small typo.
fn name_distance(wanted: &str, cand: &str) -> Option<usize> {
    if wanted.is_empty() || wanted == cand {
        return (wanted == cand && !wanted.is_empty()).then_some(0);
    }
    let stem = |s: &str| s.split('.').next().unwrap_or("").to_string();
    if stem(wanted) == stem(cand) && !stem(wanted).is_empty() {
        return Some(1);
    }
    let d = levenshtein(wanted, cand);
    let allowed = (wanted.chars().count() / 3).clamp(1, 3);
    (d <= allowed).then_some(d)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests;
