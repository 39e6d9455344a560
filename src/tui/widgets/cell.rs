//! One transcript cell and its wrapped lines, cached per (width, revision).

use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::protocol::NoticeLevel;
use crate::tui::markdown;
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::tool_cell::ToolCell;
use crate::tui::wrap::wrap_plain;

/// What drawing a cell needs besides the cell.
pub struct RenderCtx<'a> {
    pub theme: &'a Theme,
    pub styles: &'a Styles,
    pub now: Instant,
}

#[derive(Debug, Clone)]
pub enum CellKind {
    User(UserText),
    Assistant(AssistantText),
    Reasoning {
        text: String,
        streaming: bool,
    },
    Tool(Box<ToolCell>),
    Notice {
        level: NoticeLevel,
        text: String,
    },
    /// A short marker line ("cancelled").
    Marker(String),
    /// A retry under way: one line, updated in place, gone once the retry
    /// succeeds.
    Retry(String),
    /// The conversation was compacted; Enter shows the summary.
    Compaction {
        text: String,
        summary: Option<String>,
    },
    /// First-run setup text, shown while the transcript is empty.
    Setup(String),
    /// What an `@path` of the prompt attached.
    Attachment(Box<super::attachment::Attachment>),
    /// A search the provider ran, or the sources an answer cites.
    Sources(Box<super::sources::SourcesCell>),
}

/// What the person sent, and how it shows while folded: a large paste as
/// its `[pasted N lines]` placeholder, as the prompt box showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserText {
    pub text: String,
    pub folded: Option<String>,
}

/// A stored prompt longer than this many lines is shown folded.
const STORED_FOLD_LINES: usize = 10;
/// ... or longer than this many characters.
const STORED_FOLD_CHARS: usize = 1000;

impl UserText {
    /// A prompt of a resumed session. Which part was pasted is not stored,
    /// so one as large as a folded paste is folded whole: its first line
    /// and how much more there is.
    pub fn stored(text: String) -> UserText {
        let lines = text.lines().count();
        let chars = text.chars().count();
        if lines <= STORED_FOLD_LINES && chars <= STORED_FOLD_CHARS {
            return UserText::from(text);
        }
        let first = crate::text::fit(text.lines().next().unwrap_or(""), 80);
        let more = if lines > 1 {
            let n = lines - 1;
            format!("{n} more {}", crate::text::plural(n, "line", "lines"))
        } else {
            format!("{chars} characters")
        };
        UserText {
            folded: Some(format!("{first} … [{more}]")),
            text,
        }
    }

    /// The text as the transcript shows it folded.
    pub fn shown(&self) -> &str {
        self.folded.as_deref().unwrap_or(&self.text)
    }
}

impl From<String> for UserText {
    fn from(text: String) -> UserText {
        UserText { text, folded: None }
    }
}

impl From<&str> for UserText {
    fn from(text: &str) -> UserText {
        UserText::from(text.to_string())
    }
}

/// Markdown that may still be streaming. Finished blocks (up to a blank
/// line outside any fence, followed by an unindented line) are rendered once
/// and kept; on each delta only the current block is rendered again, its
/// unfinished last line with it (a code block's complete lines come from
/// the highlighting cache). A long answer costs the same per delta as a
/// short one.
#[derive(Debug, Clone, Default)]
pub struct AssistantText {
    pub text: String,
    pub streaming: bool,
    committed_len: usize,
    committed_lines: usize,
    committed_width: u16,
}

impl AssistantText {
    pub fn streaming(text: String) -> Self {
        AssistantText {
            text,
            streaming: true,
            ..Default::default()
        }
    }

    fn layout(&mut self, lines: &mut Vec<Line<'static>>, width: u16, ctx: &RenderCtx) {
        if !self.streaming {
            *lines = markdown::render(&self.text, width, ctx.theme);
            self.committed_width = 0;
            return;
        }
        if self.committed_width != width {
            lines.clear();
            self.committed_width = width;
            if self.committed_len > 0 {
                lines.extend(markdown::render(
                    &self.text[..self.committed_len],
                    width,
                    ctx.theme,
                ));
            }
            self.committed_lines = lines.len();
        }
        lines.truncate(self.committed_lines);
        let boundary = self.committed_len + last_block_boundary(&self.text[self.committed_len..]);
        if boundary > self.committed_len {
            let block =
                markdown::render(&self.text[self.committed_len..boundary], width, ctx.theme);
            join_blocks(lines, block);
            self.committed_len = boundary;
            self.committed_lines = lines.len();
        }
        // The current block, with its unfinished last line, drawn as it
        // will look: a line drawn plain and then styled would be sent to the
        // terminal twice (bullets, emphasis and code colours move or restyle
        // every cell of it).
        let rest = &self.text[self.committed_len..];
        if !rest.trim().is_empty() {
            join_blocks(lines, markdown::render(rest, width, ctx.theme));
        }
    }
}

/// The byte offset after the last blank line that ends a block: outside any
/// code fence and followed by a complete line that starts a new block
/// (unindented, so not a list item's continuation). 0 when there is none.
fn last_block_boundary(text: &str) -> usize {
    let mut in_fence = false;
    let mut pos = 0;
    let mut after_blank: Option<usize> = None;
    let mut found = 0;
    // Only complete lines count.
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    for line in complete.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        if let Some(at) = after_blank.take()
            && !t.trim().is_empty()
            && !t.starts_with([' ', '\t'])
        {
            found = at;
        }
        let trimmed = t.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        pos += line.len();
        if !in_fence && t.trim().is_empty() {
            after_blank = Some(pos);
        }
    }
    found
}

/// Appends separately rendered blocks with one blank line between them,
/// as they would have when rendered together.
fn join_blocks(lines: &mut Vec<Line<'static>>, more: Vec<Line<'static>>) {
    let blank = |l: &Line| l.spans.iter().all(|s| s.content.trim().is_empty());
    if lines.last().is_some_and(|l| !blank(l)) && more.first().is_some_and(|l| !blank(l)) {
        lines.push(Line::default());
    }
    lines.extend(more);
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub kind: CellKind,
    pub expanded: bool,
    rev: u64,
    cache_key: Option<(u16, u64)>,
    lines: Vec<Line<'static>>,
    /// Rows already turned into buffer cells, filled as they are drawn:
    /// copying cells is several times cheaper than laying out styled text.
    painted: Vec<Option<Box<[ratatui::buffer::Cell]>>>,
}

impl Cell {
    pub fn new(kind: CellKind) -> Self {
        Cell {
            kind,
            expanded: false,
            rev: 0,
            cache_key: None,
            lines: Vec::new(),
            painted: Vec::new(),
        }
    }

    /// Marks the cell changed so the next layout re-wraps it.
    pub fn touch(&mut self) {
        self.rev = self.rev.wrapping_add(1);
    }

    /// How many times the cell changed (tests).
    #[cfg(test)]
    pub fn revision(&self) -> u64 {
        self.rev
    }

    /// Like [`Cell::touch`], and a streaming answer also renders its
    /// finished blocks again instead of keeping their lines.
    pub fn restyle(&mut self) {
        if let CellKind::Assistant(a) = &mut self.kind {
            a.committed_width = 0;
        }
        self.touch();
    }

    pub fn is_streaming(&self) -> bool {
        matches!(
            &self.kind,
            CellKind::Assistant(AssistantText {
                streaming: true,
                ..
            }) | CellKind::Reasoning {
                streaming: true,
                ..
            }
        )
    }

    /// Running tools and streaming thoughts show a clock; they change with time.
    pub fn is_animated(&self) -> bool {
        matches!(&self.kind, CellKind::Tool(t) if t.is_ticking())
            || matches!(
                &self.kind,
                CellKind::Reasoning {
                    streaming: true,
                    ..
                }
            )
    }

    /// The text `y` copies.
    pub fn copy_text(&self) -> String {
        match &self.kind {
            CellKind::User(u) => u.text.clone(),
            CellKind::Marker(t) | CellKind::Setup(t) | CellKind::Retry(t) => t.clone(),
            CellKind::Compaction { text, summary } => summary.clone().unwrap_or(text.clone()),
            CellKind::Assistant(a) => a.text.clone(),
            CellKind::Reasoning { text, .. } | CellKind::Notice { text, .. } => text.clone(),
            CellKind::Attachment(a) => a.text.clone(),
            CellKind::Sources(c) => c.copy_text(),
            CellKind::Tool(t) => t.copy_text(),
        }
    }

    /// The gutter glyph drawn left of the first line.
    pub fn gutter(&self, ctx: &RenderCtx) -> Span<'static> {
        let s = ctx.styles;
        match &self.kind {
            CellKind::User(_) => Span::styled("›", s.accent),
            CellKind::Assistant(_) => Span::styled("●", s.text),
            CellKind::Reasoning { .. } => Span::styled("∴", s.dim),
            CellKind::Tool(t) => t.glyph(s, ctx.now),
            CellKind::Notice { level, .. } => match level {
                NoticeLevel::Info => Span::styled("·", s.dim),
                NoticeLevel::Warning => Span::styled("!", s.warning),
                NoticeLevel::Error => Span::styled("✗", s.error),
            },
            CellKind::Marker(_) => Span::styled("⊘", s.warning),
            CellKind::Retry(_) => Span::styled("↻", s.warning),
            CellKind::Compaction { .. } => Span::styled("≡", s.accent),
            CellKind::Setup(_) => Span::styled("?", s.accent),
            CellKind::Attachment(_) => Span::styled(" ", s.dim),
            CellKind::Sources(c) if c.query.is_some() => Span::styled("⌕", s.accent),
            CellKind::Sources(_) => Span::styled("§", s.dim),
        }
    }

    /// The wrapped lines for `width`, re-wrapped only when the width or the
    /// cell changed.
    pub fn layout(&mut self, width: u16, ctx: &RenderCtx) -> &[Line<'static>] {
        let key = (width, self.rev);
        if self.cache_key != Some(key) {
            let mut lines = std::mem::take(&mut self.lines);
            match &mut self.kind {
                CellKind::Assistant(a) => a.layout(&mut lines, width, ctx),
                other => lines = render_simple(other, self.expanded, width, ctx),
            }
            if lines.is_empty() {
                lines.push(Line::default());
            }
            self.lines = lines;
            self.painted.clear();
            self.painted.resize(self.lines.len(), None);
            self.cache_key = Some(key);
        }
        &self.lines
    }

    /// Cached lines from the last layout (empty before the first).
    /// Row `row` of the last layout as `width` buffer cells.
    pub fn painted_row(&mut self, row: usize, width: u16) -> Option<&[ratatui::buffer::Cell]> {
        let line = self.lines.get(row)?;
        let slot = self.painted.get_mut(row)?;
        if slot.as_ref().is_none_or(|c| c.len() != usize::from(width)) {
            let mut scratch =
                ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, width, 1));
            scratch.set_line(0, 0, line, width);
            *slot = Some(scratch.content.into_boxed_slice());
        }
        slot.as_deref()
    }

    /// Drops the painted rows (the cell went off screen), keeping memory
    /// proportional to the screen rather than the session.
    pub fn forget_paint(&mut self) {
        for slot in &mut self.painted {
            *slot = None;
        }
    }

    pub fn cached(&self) -> &[Line<'static>] {
        &self.lines
    }
}

fn render_simple(
    kind: &CellKind,
    expanded: bool,
    width: u16,
    ctx: &RenderCtx,
) -> Vec<Line<'static>> {
    let s = ctx.styles;
    match kind {
        CellKind::User(u) => match &u.folded {
            Some(folded) if !expanded => {
                let mut l = wrap_plain(folded, width, s.user);
                l.push(Line::from(Span::styled(
                    "  folded: Tab to the transcript, Enter on it shows it whole",
                    s.dim,
                )));
                l
            }
            _ => wrap_plain(&u.text, width, s.user),
        },
        CellKind::Assistant(a) => markdown::render(&a.text, width, ctx.theme),
        CellKind::Reasoning { text, streaming } => {
            if expanded {
                let mut l = wrap_plain(text.trim(), width, s.reasoning);
                l.insert(0, Line::from(Span::styled("thinking (Enter folds)", s.dim)));
                l
            } else if *streaming {
                vec![Line::from(Span::styled("thinking…", s.dim))]
            } else {
                let n = text.split_whitespace().count();
                vec![Line::from(Span::styled(
                    format!("thought · {n} words (Tab, Enter to expand)"),
                    s.dim,
                ))]
            }
        }
        CellKind::Tool(t) => t.lines(width, expanded, s, ctx.theme, ctx.now),
        CellKind::Notice { level, text } => {
            let style = match level {
                NoticeLevel::Info => s.dim,
                NoticeLevel::Warning => s.warning,
                NoticeLevel::Error => s.error,
            };
            wrap_plain(text, width, style)
        }
        CellKind::Marker(text) | CellKind::Retry(text) => wrap_plain(text, width, s.warning),
        CellKind::Compaction { text, summary } => {
            compaction_lines(text, summary.as_deref(), expanded, width, ctx)
        }
        CellKind::Setup(text) => wrap_plain(text, width, Style::default()),
        CellKind::Attachment(a) => a.lines(width, expanded, s),
        CellKind::Sources(c) => c.lines(width, expanded, s),
    }
}

/// A compaction marker; expanded, the summary that replaced older turns.
fn compaction_lines(
    text: &str,
    summary: Option<&str>,
    expanded: bool,
    width: u16,
    ctx: &RenderCtx,
) -> Vec<Line<'static>> {
    let s = ctx.styles;
    let Some(summary) = summary else {
        return wrap_plain(text, width, s.dim);
    };
    if !expanded {
        return wrap_plain(&format!("{text} · Enter shows the summary"), width, s.dim);
    }
    let mut lines = wrap_plain(&format!("{text} · Enter folds"), width, s.dim);
    lines.extend(markdown::render(summary.trim(), width, ctx.theme));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_stored_prompt_is_folded_and_a_small_one_is_not() {
        let big: String = (0..40).map(|i| format!("row {i}\n")).collect();
        let u = UserText::stored(format!("fix this:\n{big}"));
        assert_eq!(u.shown(), "fix this: … [40 more lines]");
        assert!(u.text.contains("row 39"));
        let small = UserText::stored("two\nlines".into());
        assert_eq!(small.shown(), "two\nlines");
        let long = UserText::stored("x".repeat(1200));
        assert!(
            long.shown().ends_with("… [1200 characters]"),
            "{}",
            long.shown()
        );
    }

    #[test]
    fn block_boundaries_skip_fences_and_continuations() {
        assert_eq!(last_block_boundary("a\n\nb\n"), 3);
        assert_eq!(
            last_block_boundary("a\n\nb"),
            0,
            "the next line is not complete"
        );
        assert_eq!(last_block_boundary("```\nx\n\ny\n```\n"), 0);
        assert_eq!(last_block_boundary("- a\n\n  more\n"), 0);
        assert_eq!(last_block_boundary("p\n\n```\n\ncode\n"), 3);
    }

    /// Streams `text` into an assistant cell `piece` bytes at a time, laid
    /// out 50 wide after each piece; `check` sees the cell and what it holds.
    fn stream_in_pieces(text: &str, piece: usize, mut check: impl FnMut(&Cell, &str)) {
        let theme = Theme::default();
        let styles = Styles::default();
        let ctx = RenderCtx {
            theme: &theme,
            styles: &styles,
            now: Instant::now(),
        };
        let mut cell = Cell::new(CellKind::Assistant(AssistantText::streaming(String::new())));
        let mut shown = 0;
        for bytes in text.as_bytes().chunks(piece) {
            shown += bytes.len();
            if let CellKind::Assistant(a) = &mut cell.kind {
                a.text.push_str(std::str::from_utf8(bytes).unwrap());
            }
            cell.touch();
            cell.layout(50, &ctx);
            check(&cell, &text[..shown]);
        }
    }

    #[test]
    fn streaming_in_pieces_looks_like_rendering_at_once() {
        let text =
            "# Title\n\nSome *text* here.\n\n```rust\nfn main() {}\n```\n\n- one\n- two\n\nEnd.\n";
        let mut streamed = Vec::new();
        stream_in_pieces(text, 7, |cell, _| {
            streamed = cell.cached().iter().map(|l| l.to_string()).collect();
        });
        let whole: Vec<String> = markdown::render(text, 50, &Theme::default())
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(streamed, whole);
    }

    /// The line still being written is drawn as it will look once it is
    /// finished (a bullet, emphasis, a code line's box and colours), at every
    /// step: a line drawn plain first would be sent to the terminal twice.
    #[test]
    fn an_unfinished_line_is_drawn_as_it_will_look() {
        crate::tui::highlight::ensure_loaded();
        let theme = Theme::default();
        let text = "Intro with **bold** words.\n\n- one\n- second item\n\n```rust\nlet value = compute(1);\nlet other = value + 2;\n```\n\nDone.\n";
        let mut seen_item = false;
        stream_in_pieces(text, 3, |cell, prefix| {
            assert_eq!(
                cell.cached(),
                markdown::render(prefix, 50, &theme).as_slice(),
                "after {prefix:?}"
            );
            // The second item, while it is written, has its bullet.
            let last = prefix.rsplit('\n').next().unwrap_or_default();
            if let Some(item) = last.strip_prefix("- s") {
                seen_item = true;
                let rows: Vec<String> = cell.cached().iter().map(|l| l.to_string()).collect();
                let want = format!("• s{item}");
                assert!(rows.iter().any(|r| r.contains(&want)), "{rows:?}");
            }
        });
        assert!(seen_item);
    }
}
