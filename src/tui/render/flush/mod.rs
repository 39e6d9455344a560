//! cairn's own frame flush. ratatui draws each frame into its buffers and
//! hands this backend the cells that changed; the backend keeps the frame
//! it wants on screen and its own record of what the terminal shows, and
//! at each flush sends only the difference:
//!
//! - rows that moved (the transcript scrolled by k lines, or back) are
//!   moved by the terminal inside a scroll region (`DECSTBM` + `CSI k S` or
//!   `CSI k T`), and the record is shifted to match (`scroll.rs`);
//! - then only the cells that still differ are written, with the fewest
//!   cursor moves and colour changes (`encode.rs`) — a streamed line costs
//!   its new tail, not the whole line;
//! - the frame is wrapped in synchronized output (DEC mode 2026) when the
//!   terminal said at start that it supports it (`probe.rs`), so it never
//!   shows a half-drawn frame;
//! - a frame with nothing to change writes nothing.
//!
//! No scroll region is left set between frames, and the pen is back to the
//! default, so a panic or a suspend finds the terminal in a plain state.

mod diff;
mod encode;
mod probe;
mod scroll;

#[cfg(test)]
mod replay_tests;

use std::io::{self, Write};

use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};

use encode::Encoder;
pub use probe::{Answers, PROBE_TIMEOUT, ask_terminal};

const SYNC_BEGIN: &str = "\x1b[?2026h";
const SYNC_END: &str = "\x1b[?2026l";
/// What puts the terminal back in a plain state, whatever a frame did:
/// synchronized output ended, no scroll region.
pub const RESET: &str = "\x1b[?2026l\x1b[r";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushOptions {
    /// Let the terminal move rows that scrolled (`[ui] scroll_regions`).
    pub scroll_regions: bool,
    /// Wrap each frame in DEC 2026 begin/end.
    pub synchronized: bool,
}

/// A ratatui backend that writes frames with scroll regions and cell
/// diffs of its own.
pub struct FlushBackend<W: Write> {
    out: W,
    options: FlushOptions,
    /// The frame ratatui drew: the cells it sent, kept.
    want: Buffer,
    /// What the terminal shows.
    shown: Buffer,
    /// A size given instead of asking the terminal (tests).
    fixed_size: Option<Size>,
    cursor: Position,
    cursor_visible: bool,
    /// Whether the terminal shows its cursor, when known.
    shown_cursor_visible: Option<bool>,
    /// Where the terminal's cursor is, when known.
    cursor_at: Option<(u16, u16)>,
    /// The screen must be erased before the next frame.
    clear_pending: bool,
    /// Row hashes of `shown` (valid when `rows_valid`) and of `want`.
    shown_rows: Vec<u64>,
    want_rows: Vec<u64>,
    rows_valid: bool,
    /// Rows in which ratatui found a cell changed since its last frame:
    /// only these need hashing again. Valid when `dirty_known`.
    dirty_rows: Vec<bool>,
    dirty_known: bool,
    scratch: Vec<u8>,
}

impl<W: Write> FlushBackend<W> {
    /// A backend for the real terminal, sized as it is now.
    pub fn new(out: W, options: FlushOptions) -> io::Result<FlushBackend<W>> {
        let (cols, rows) = crossterm::terminal::size()?;
        let mut b = Self::with_size(out, options, Size::new(cols, rows));
        b.fixed_size = None;
        Ok(b)
    }

    /// A backend of a fixed size, for a terminal that is not the real one.
    pub fn with_size(out: W, options: FlushOptions, size: Size) -> FlushBackend<W> {
        let area = Rect::new(0, 0, size.width, size.height);
        FlushBackend {
            out,
            options,
            want: Buffer::empty(area),
            shown: Buffer::empty(area),
            fixed_size: Some(size),
            cursor: Position::ORIGIN,
            cursor_visible: false,
            shown_cursor_visible: None,
            cursor_at: None,
            clear_pending: true,
            shown_rows: Vec::new(),
            want_rows: Vec::new(),
            rows_valid: false,
            dirty_rows: Vec::new(),
            dirty_known: false,
            scratch: Vec::new(),
        }
    }

    /// Changes the size a fixed-size backend reports, as a resize does.
    pub fn set_size(&mut self, size: Size) {
        self.fixed_size = Some(size);
    }

    /// The last frame drawn.
    pub fn frame(&self) -> &Buffer {
        &self.shown
    }

    pub fn writer(&self) -> &W {
        &self.out
    }

    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Sends the difference between what is shown and what is wanted.
    fn present(&mut self) -> io::Result<()> {
        let bytes = std::mem::take(&mut self.scratch);
        let mut e = Encoder::new(bytes, self.want.area.width, self.cursor_at);
        if self.options.synchronized {
            e.raw(SYNC_BEGIN);
        }
        let start = e.bytes.len();
        if self.clear_pending || self.shown.area != self.want.area {
            self.shown.resize(self.want.area);
            self.shown.reset();
            self.rows_valid = false;
            e.raw("\x1b[0m\x1b[H\x1b[2J");
            e.cursor_known_at(0, 0);
            self.clear_pending = false;
        }
        if self.options.scroll_regions {
            self.scroll(&mut e);
        }
        diff::write_changes(&mut e, &self.shown, &self.want);
        e.reset_pen();
        self.place_cursor(&mut e);
        let changed = e.bytes.len() > start;
        if self.options.synchronized {
            e.raw(SYNC_END);
        }
        let result = if changed {
            self.out.write_all(&e.bytes)
        } else {
            Ok(())
        };
        self.cursor_at = e.cursor();
        // What is shown is now the frame; the old record is reused for the
        // next frame's copy.
        std::mem::swap(&mut self.shown, &mut self.want);
        self.scratch = e.bytes;
        self.scratch.clear();
        result?;
        self.out.flush()
    }

    /// Lets the terminal move the rows that moved, and shifts the record
    /// of what it shows to match.
    fn scroll(&mut self, e: &mut Encoder) {
        // `shown_rows` are the last frame's, which ratatui's previous
        // buffer holds: only the rows it saw change are hashed again.
        let known = std::mem::take(&mut self.dirty_known);
        if known
            && self.rows_valid
            && self.shown_rows.len() == usize::from(self.want.area.height)
            && self.dirty_rows.len() <= self.shown_rows.len()
        {
            self.want_rows.clone_from(&self.shown_rows);
            for (y, _) in self.dirty_rows.iter().enumerate().filter(|(_, d)| **d) {
                self.want_rows[y] = scroll::row_hash(&self.want, y);
            }
        } else {
            scroll::row_hashes(&self.want, &mut self.want_rows);
        }
        if !self.rows_valid {
            scroll::row_hashes(&self.shown, &mut self.shown_rows);
        }
        let blank = scroll::blank_row_hash(self.want.area.width);
        if let Some(s) = scroll::find(&self.shown_rows, &self.want_rows, blank) {
            let s = scroll::extend_bottom(s, &self.shown, &self.want);
            e.reset_pen();
            e.raw(&s.sequence());
            e.forget_cursor();
            s.apply(&mut self.shown);
        }
        // After this frame the terminal shows `want`.
        std::mem::swap(&mut self.shown_rows, &mut self.want_rows);
        self.rows_valid = true;
    }

    fn place_cursor(&mut self, e: &mut Encoder) {
        if self.cursor_visible {
            let area = self.want.area;
            let x = self.cursor.x.min(area.width.saturating_sub(1));
            let y = self.cursor.y.min(area.height.saturating_sub(1));
            e.move_to(x, y);
            if self.shown_cursor_visible != Some(true) {
                e.raw("\x1b[?25h");
            }
        } else if self.shown_cursor_visible != Some(false) {
            e.raw("\x1b[?25l");
        }
        self.shown_cursor_visible = Some(self.cursor_visible);
    }
}

/// Draws a frame with ratatui and writes what changed on screen.
pub fn draw<W: Write>(
    term: &mut Terminal<FlushBackend<W>>,
    render: impl FnOnce(&mut ratatui::Frame),
) -> io::Result<()> {
    let mut want = std::mem::take(&mut term.backend_mut().want);
    let done = term.draw(render)?;
    want.area = done.buffer.area;
    want.content.clone_from(&done.buffer.content);
    let backend = term.backend_mut();
    backend.want = want;
    backend.present()
}

impl<W: Write> Backend for FlushBackend<W> {
    type Error = io::Error;

    /// ratatui's changed cells are not enough to know the frame (it does
    /// not send the columns under a wide character): [`draw`] hands the
    /// whole frame over instead.
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        // Which rows changed is still worth knowing for scroll detection:
        // only their hashes are worked out again.
        if !self.options.scroll_regions {
            return Ok(());
        }
        self.dirty_rows.iter_mut().for_each(|d| *d = false);
        for (_, y, _) in content {
            let y = usize::from(y);
            if self.dirty_rows.len() <= y {
                self.dirty_rows.resize(y + 1, false);
            }
            self.dirty_rows[y] = true;
        }
        self.dirty_known = true;
        Ok(())
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.cursor_visible = false;
        Ok(())
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.cursor_visible = true;
        Ok(())
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(self.cursor)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.cursor = position.into();
        Ok(())
    }

    /// Forgets what the terminal shows (it may have been resized, or handed
    /// to another program): the next flush erases it and draws everything.
    fn clear(&mut self) -> io::Result<()> {
        let size = self.size()?;
        let area = Rect::new(0, 0, size.width, size.height);
        self.want.resize(area);
        self.want.reset();
        self.shown.resize(area);
        self.shown.reset();
        self.rows_valid = false;
        self.clear_pending = true;
        self.cursor_at = None;
        self.shown_cursor_visible = None;
        Ok(())
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        match clear_type {
            ClearType::All => self.clear(),
            other => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the frame flush clears whole screens only, not {other:?}"),
            )),
        }
    }

    fn size(&self) -> io::Result<Size> {
        match self.fixed_size {
            Some(size) => Ok(size),
            None => crossterm::terminal::size().map(|(cols, rows)| Size::new(cols, rows)),
        }
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        match self.fixed_size {
            Some(size) => Ok(WindowSize {
                columns_rows: size,
                pixels: Size::default(),
            }),
            None => {
                let ws = crossterm::terminal::window_size()?;
                Ok(WindowSize {
                    columns_rows: Size::new(ws.columns, ws.rows),
                    pixels: Size::new(ws.width, ws.height),
                })
            }
        }
    }

    /// The frame is written by [`draw`] once ratatui is done with it.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
