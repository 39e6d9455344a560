//! What laying out a diff works with, shared by the unified and
//! side-by-side layouts and the hunk review marks: the items in display
//! order, the context each line is drawn in, and one line cut to a width.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{DiffOptions, Row, Segments};
use crate::tui::theme::Theme;
use crate::tui::wrap::wrap_code;

/// Which hunks are accepted, and which one the keys act on.
#[derive(Debug, Clone, Copy)]
pub struct Review<'a> {
    pub accepted: &'a [bool],
    pub focus: usize,
}

pub(super) enum Item {
    Row(usize),
    /// This many unchanged lines, folded away.
    Fold(usize),
    Hunk(String),
    /// Where reviewable hunk `n` starts: its accepted / rejected mark.
    Review(usize),
}

pub(super) struct Ctx<'a> {
    pub rows: &'a [Row],
    pub theme: &'a Theme,
    pub opts: DiffOptions,
    pub segs: Option<(Option<&'a Segments>, Option<&'a Segments>)>,
    pub review: Option<Review<'a>>,
    pub hunks: usize,
}

/// `text` on one line, cut to `width`.
pub(super) fn fit_line(text: &str, width: usize, style: Style) -> Line<'static> {
    let mut rows = wrap_code(vec![Span::styled(text.to_string(), style)], width, None);
    Line::from(rows.swap_remove(0))
}
