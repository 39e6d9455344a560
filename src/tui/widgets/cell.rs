//! One transcript cell and its wrapped lines, cached per (width, revision).

use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::agent::NoticeLevel;
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
    User(String),
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
    /// First-run setup text, shown while the transcript is empty.
    Setup(String),
}

/// Markdown that may still be streaming. While it streams, the complete
/// blocks (`stable_prefix_len`) are rendered once and kept; only the
/// unfinished tail is re-wrapped as plain text on each delta, so a long
/// answer costs the same per delta as a short one and nothing flickers.
#[derive(Debug, Clone, Default)]
pub struct AssistantText {
    pub text: String,
    pub streaming: bool,
    stable_len: usize,
    stable_lines: usize,
    stable_width: u16,
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
            self.stable_width = 0;
            return;
        }
        if self.stable_width != width {
            lines.clear();
            self.stable_width = width;
            if self.stable_len > 0 {
                lines.extend(markdown::render(
                    &self.text[..self.stable_len],
                    width,
                    ctx.theme,
                ));
            }
            self.stable_lines = lines.len();
        }
        lines.truncate(self.stable_lines);
        let rest = &self.text[self.stable_len..];
        let more = markdown::stable_prefix_len(rest).min(rest.len());
        if more > 0 && rest.is_char_boundary(more) {
            let chunk = &rest[..more];
            // Blocks rendered separately are separated like blocks rendered together.
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.extend(markdown::render(chunk, width, ctx.theme));
            self.stable_len += more;
            self.stable_lines = lines.len();
        }
        let tail = self.text[self.stable_len..].trim_matches('\n');
        if !tail.is_empty() {
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.extend(wrap_plain(tail, width, ctx.styles.text));
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub kind: CellKind,
    pub expanded: bool,
    rev: u64,
    cache_key: Option<(u16, u64)>,
    lines: Vec<Line<'static>>,
}

impl Cell {
    pub fn new(kind: CellKind) -> Self {
        Cell {
            kind,
            expanded: false,
            rev: 0,
            cache_key: None,
            lines: Vec::new(),
        }
    }

    /// Marks the cell changed so the next layout re-wraps it.
    pub fn touch(&mut self) {
        self.rev = self.rev.wrapping_add(1);
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
        matches!(&self.kind, CellKind::Tool(t) if t.is_running())
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
            CellKind::User(t) | CellKind::Marker(t) | CellKind::Setup(t) => t.clone(),
            CellKind::Assistant(a) => a.text.clone(),
            CellKind::Reasoning { text, .. } | CellKind::Notice { text, .. } => text.clone(),
            CellKind::Tool(t) => {
                if t.output.is_empty() {
                    t.title()
                } else {
                    format!("{}\n{}", t.title(), t.output)
                }
            }
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
            CellKind::Setup(_) => Span::styled("?", s.accent),
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
            self.cache_key = Some(key);
        }
        &self.lines
    }

    /// Cached lines from the last layout (empty before the first).
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
        CellKind::User(text) => wrap_plain(text, width, s.user),
        CellKind::Assistant(a) => markdown::render(&a.text, width, ctx.theme),
        CellKind::Reasoning { text, streaming } => {
            if expanded {
                let mut l = wrap_plain(
                    text.trim(),
                    width,
                    s.dim.add_modifier(ratatui::style::Modifier::ITALIC),
                );
                l.insert(0, Line::from(Span::styled("thinking (Enter folds)", s.dim)));
                l
            } else if *streaming {
                vec![Line::from(Span::styled("thinking…", s.dim))]
            } else {
                let n = text.lines().count();
                vec![Line::from(Span::styled(
                    format!("thought for {n} lines (Tab, Enter to expand)"),
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
        CellKind::Marker(text) => wrap_plain(text, width, s.warning),
        CellKind::Setup(text) => wrap_plain(text, width, Style::default()),
    }
}
