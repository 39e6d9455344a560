//! The virtual transcript: cells laid out lazily, only the visible slice
//! drawn. The scroll position is an anchor (cell, line within it) rather
//! than an absolute row, so scrolling, streaming and even a resize touch
//! only the cells on screen: frame cost does not grow with the session.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::cell::{Cell, CellKind, RenderCtx};

/// Columns left of each cell for its glyph and the selection bar.
const GUTTER: u16 = 2;

#[derive(Debug, Clone, Default)]
pub struct Transcript {
    cells: Vec<Cell>,
    /// Stick to the bottom as output arrives.
    follow: bool,
    /// Top row when not following: (cell index, row within the cell).
    anchor: (usize, usize),
    /// Rows to scroll at the next layout (negative: up).
    pending_scroll: i64,
    pub selected: Option<usize>,
    reveal_selected: bool,
    /// Output arrived while scrolled up.
    unseen: bool,
    /// Rows of the transcript area at the last frame (for page sizes).
    pub last_height: u16,
    /// Cells drawn in the last frame, whose painted rows are kept.
    painted: std::ops::Range<usize>,
}

impl Transcript {
    pub fn new() -> Self {
        Transcript {
            follow: true,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    pub fn push(&mut self, kind: CellKind) -> usize {
        self.cells.push(Cell::new(kind));
        self.changed();
        self.cells.len() - 1
    }

    /// A cell to change; marks it for re-wrapping.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Cell> {
        let c = self.cells.get_mut(i)?;
        c.touch();
        self.unseen |= !self.follow;
        Some(c)
    }

    /// Re-wraps a cell whose looks change with time (a spinner), without
    /// counting as new output.
    pub fn refresh(&mut self, i: usize) {
        if let Some(c) = self.cells.get_mut(i) {
            c.touch();
        }
    }

    /// Re-renders every cell, streaming ones included (the theme changed,
    /// or highlighting became ready). Costs one pass, once.
    pub fn invalidate(&mut self) {
        for c in &mut self.cells {
            c.restyle();
        }
    }

    pub fn last_mut(&mut self) -> Option<&mut Cell> {
        let i = self.cells.len().checked_sub(1)?;
        self.get_mut(i)
    }

    /// Drops cells from `i` on (a response the stream restarted).
    pub fn truncate(&mut self, i: usize) {
        self.cells.truncate(i);
        if self.anchor.0 >= self.cells.len() {
            self.follow = true;
        }
        if self.selected.is_some_and(|s| s >= self.cells.len()) {
            self.selected = self.cells.len().checked_sub(1);
        }
    }

    pub fn remove(&mut self, i: usize) {
        if i < self.cells.len() {
            self.cells.remove(i);
            self.truncate(self.cells.len());
            if self.anchor.0 > i {
                self.anchor.0 -= 1;
            }
        }
    }

    fn changed(&mut self) {
        self.unseen |= !self.follow;
    }

    pub fn is_following(&self) -> bool {
        self.follow
    }

    pub fn has_unseen(&self) -> bool {
        self.unseen && !self.follow
    }

    pub fn scroll(&mut self, rows: i64) {
        self.pending_scroll += rows;
    }

    pub fn scroll_page(&mut self, pages: i64) {
        let page = i64::from(self.last_height.saturating_sub(2).max(1));
        self.scroll(pages * page);
    }

    pub fn to_top(&mut self) {
        self.follow = false;
        self.anchor = (0, 0);
        self.pending_scroll = 0;
    }

    pub fn to_bottom(&mut self) {
        self.follow = true;
        self.unseen = false;
        self.pending_scroll = 0;
    }

    pub fn select(&mut self, i: Option<usize>) {
        self.selected = i.map(|i| i.min(self.cells.len().saturating_sub(1)));
        self.reveal_selected = self.selected.is_some();
    }

    fn height(&mut self, i: usize, width: u16, ctx: &RenderCtx) -> usize {
        let gap = usize::from(i > 0);
        self.cells[i].layout(width, ctx).len() + gap
    }

    /// The top row that shows the end of the transcript at the bottom.
    fn bottom_anchor(&mut self, width: u16, rows: usize, ctx: &RenderCtx) -> (usize, usize) {
        let mut need = rows;
        let mut i = self.cells.len();
        while i > 0 {
            i -= 1;
            let h = self.height(i, width, ctx);
            if h >= need {
                return (i, h - need);
            }
            need -= h;
        }
        (0, 0)
    }

    /// Moves `anchor` by `delta` rows, stopping at the start.
    fn move_anchor(
        &mut self,
        mut anchor: (usize, usize),
        delta: i64,
        width: u16,
        ctx: &RenderCtx,
    ) -> (usize, usize) {
        if delta < 0 {
            let mut up = delta.unsigned_abs() as usize;
            loop {
                if anchor.1 >= up {
                    anchor.1 -= up;
                    return anchor;
                }
                up -= anchor.1;
                if anchor.0 == 0 {
                    return (0, 0);
                }
                anchor.0 -= 1;
                anchor.1 = self.height(anchor.0, width, ctx);
            }
        }
        let mut down = delta as usize;
        while anchor.0 < self.cells.len() {
            let h = self.height(anchor.0, width, ctx);
            if anchor.1 + down < h {
                anchor.1 += down;
                return anchor;
            }
            down -= h - anchor.1;
            anchor = (anchor.0 + 1, 0);
        }
        anchor
    }

    /// Rows from `anchor` to the end, counting at most `limit`.
    fn rows_below(
        &mut self,
        anchor: (usize, usize),
        limit: usize,
        width: u16,
        ctx: &RenderCtx,
    ) -> usize {
        let mut total = 0;
        for i in anchor.0..self.cells.len() {
            let h = self.height(i, width, ctx);
            total += if i == anchor.0 {
                h.saturating_sub(anchor.1)
            } else {
                h
            };
            if total > limit {
                break;
            }
        }
        total
    }

    /// Settles the top row for this frame: follow, pending scroll, reveal.
    fn resolve_top(&mut self, width: u16, rows: usize, ctx: &RenderCtx) -> (usize, usize) {
        if self.cells.is_empty() {
            return (0, 0);
        }
        let mut top = if self.follow {
            self.bottom_anchor(width, rows, ctx)
        } else {
            let a = (self.anchor.0.min(self.cells.len() - 1), self.anchor.1);
            let h = self.height(a.0, width, ctx);
            (a.0, a.1.min(h.saturating_sub(1)))
        };
        if self.pending_scroll != 0 {
            top = self.move_anchor(top, self.pending_scroll, width, ctx);
            self.pending_scroll = 0;
            self.follow = false;
        }
        if self.reveal_selected {
            self.reveal_selected = false;
            if let Some(sel) = self.selected.filter(|&s| s < self.cells.len()) {
                if sel < top.0 || (sel == top.0 && top.1 > 0) {
                    top = (sel, 0);
                    self.follow = false;
                } else {
                    let end = (sel + 1, 0);
                    let below_top = self.rows_between(top, end, rows + 1, width, ctx);
                    if below_top > rows {
                        top = self.move_anchor((sel + 1, 0), -(rows as i64), width, ctx);
                        // A cell taller than the screen shows from its start.
                        if top > (sel, 0) {
                            top = (sel, 0);
                        }
                        self.follow = false;
                    }
                }
            }
        }
        if !self.follow && self.rows_below(top, rows, width, ctx) <= rows {
            self.follow = true;
            self.unseen = false;
            top = self.bottom_anchor(width, rows, ctx);
        }
        self.anchor = top;
        top
    }

    fn rows_between(
        &mut self,
        from: (usize, usize),
        to: (usize, usize),
        limit: usize,
        width: u16,
        ctx: &RenderCtx,
    ) -> usize {
        let mut total = 0;
        for i in from.0..to.0.min(self.cells.len()) {
            let h = self.height(i, width, ctx);
            total += if i == from.0 {
                h.saturating_sub(from.1)
            } else {
                h
            };
            if total > limit {
                break;
            }
        }
        total
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &RenderCtx) {
        self.last_height = area.height;
        if area.width <= GUTTER || area.height == 0 {
            return;
        }
        let width = area.width - GUTTER;
        let rows = area.height as usize;
        let (mut ci, mut off) = self.resolve_top(width, rows, ctx);
        let first = ci;
        let mut y = area.y;
        // The "new output" marker takes the last row of its own, so it
        // never covers a line of text.
        let marker = self.has_unseen() && area.height >= 2;
        let bottom = area.y + area.height - u16::from(marker);
        while y < bottom && ci < self.cells.len() {
            let gap = usize::from(ci > 0);
            let h = self.height(ci, width, ctx);
            let selected = self.selected == Some(ci);
            let gutter = self.cells[ci].gutter(ctx);
            while off < h && y < bottom {
                if off >= gap {
                    let row = off - gap;
                    if selected {
                        buf.set_span(area.x, y, &Span::styled("▌", ctx.styles.selection), 1);
                    } else if row == 0 {
                        buf.set_span(area.x, y, &gutter, 1);
                    }
                    if self.cells[ci].is_streaming() {
                        // It changes every frame: caching its rows would
                        // cost more than drawing them.
                        if let Some(line) = self.cells[ci].cached().get(row) {
                            buf.set_line(area.x + GUTTER, y, line, width);
                        }
                    } else if let Some(cells) = self.cells[ci].painted_row(row, width) {
                        let start = buf.index_of(area.x + GUTTER, y);
                        let row = &mut buf.content[start..start + cells.len()];
                        row.clone_from_slice(cells);
                        if !crate::tui::styles::is_terminal_default(ctx.styles.text) {
                            row.iter_mut()
                                .for_each(|c| crate::tui::styles::fill_reset(c, ctx.styles.text));
                        }
                    }
                }
                off += 1;
                y += 1;
            }
            ci += 1;
            off = 0;
        }
        let shown = first..ci.min(self.cells.len());
        for i in self.painted.clone() {
            if !shown.contains(&i)
                && let Some(c) = self.cells.get_mut(i)
            {
                c.forget_paint();
            }
        }
        self.painted = shown;
        if marker {
            let label = " ↓ new output (End) ";
            let w = label.chars().count() as u16;
            let row = Rect::new(area.x, bottom, area.width, 1);
            buf.set_style(row, ctx.styles.text);
            for x in row.left()..row.right() {
                buf[(x, bottom)].set_symbol(" ");
            }
            if area.width > w {
                let line = Line::from(Span::styled(label, ctx.styles.focused_choice));
                buf.set_line(area.right() - w - 1, bottom, &line, w);
            }
        }
    }
}
