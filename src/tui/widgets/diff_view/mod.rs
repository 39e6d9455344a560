//! A file diff as styled lines, unified or side by side.
//!
//! The diff (line level, plus word changes inside paired changed lines) is
//! computed once in [`DiffView::new`]; [`DiffView::lines`] only lays it out
//! for a width, so a dialog can re-render on resize cheaply. Syntax colours
//! are computed on the whole old and new texts (so multi-line strings and
//! comments colour correctly) and cached per theme.

use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::text::width as str_width;
use crate::tui::highlight;
use crate::tui::theme::{ColorDepth, Theme};
use crate::tui::wrap::{pad_to, wrap_code};

mod layout;
mod parts;
mod review;

pub use parts::Review;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLayout {
    Unified,
    SideBySide,
}

impl DiffLayout {
    /// Side by side only where both halves still have room for code.
    pub fn for_width(width: u16) -> DiffLayout {
        if width >= 160 {
            DiffLayout::SideBySide
        } else {
            DiffLayout::Unified
        }
    }
}

/// Whether syntax colours are affordable for this diff now. Highlighting
/// costs about 0.2 ms a line (the whole of both files, not only the rows
/// shown), so for large files the diff keeps its +/- colours only and the
/// dialog opens at once.
pub fn highlight_affordable(old: &str, new: &str) -> bool {
    old.lines().count() + new.lines().count() <= 500
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    /// Unchanged lines kept around each change when folding.
    pub context: usize,
    /// Fold unchanged stretches beyond `context` into one line; when off,
    /// the whole file is shown.
    pub fold: bool,
    pub line_numbers: bool,
    /// Syntax colours by the file's extension under the diff colours.
    pub highlight: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            context: 3,
            fold: true,
            line_numbers: true,
            highlight: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Equal,
    Delete,
    Insert,
}

#[derive(Debug, Clone)]
struct Row {
    kind: Kind,
    /// 1-based line numbers on each side.
    old_no: Option<usize>,
    new_no: Option<usize>,
    text: String,
    /// Byte ranges of `text` that changed within a paired changed line.
    words: Vec<Range<usize>>,
    /// The file ends here without a newline.
    no_newline: bool,
    /// The reviewable hunk (`crate::diff::hunks`) a changed row belongs to.
    hunk: Option<usize>,
}

type Segments = Vec<Vec<(Style, String)>>;

struct HighlightCache {
    key: (String, ColorDepth),
    old: Option<Segments>,
    new: Option<Segments>,
}

pub struct DiffView {
    path: String,
    rows: Vec<Row>,
    added: usize,
    removed: usize,
    old_text: String,
    new_text: String,
    hunks: usize,
    cache: Mutex<Option<HighlightCache>>,
}

impl Clone for DiffView {
    fn clone(&self) -> Self {
        DiffView {
            path: self.path.clone(),
            rows: self.rows.clone(),
            added: self.added,
            removed: self.removed,
            old_text: self.old_text.clone(),
            new_text: self.new_text.clone(),
            hunks: self.hunks,
            cache: Mutex::new(None),
        }
    }
}

impl std::fmt::Debug for DiffView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiffView")
            .field("path", &self.path)
            .field("added", &self.added)
            .field("removed", &self.removed)
            .finish_non_exhaustive()
    }
}

/// CRLF to LF and tabs to 4-column stops, so columns are predictable and
/// a file that only changed line endings still pairs its lines.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        if !line.contains('\t') {
            out.push_str(line);
            continue;
        }
        let mut col = 0;
        for c in line.chars() {
            if c == '\t' {
                let n = 4 - col % 4;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            } else {
                out.push(c);
                col += str_width(c.encode_utf8(&mut [0; 4]));
            }
        }
    }
    out
}

fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').collect()
}

/// Changed byte ranges between two versions of one line, by words. None
/// when the lines share too little for word marks to help.
fn word_changes(old: &str, new: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    if old.len() + new.len() > 8000 {
        return (Vec::new(), Vec::new());
    }
    let diff = similar::TextDiff::configure().diff_unicode_words(old, new);
    if diff.ratio() < 0.4 {
        return (Vec::new(), Vec::new());
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut ia, mut ib) = (0, 0);
    let push = |v: &mut Vec<Range<usize>>, r: Range<usize>| match v.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => v.push(r),
    };
    for change in diff.iter_all_changes() {
        let n = change.value().len();
        match change.tag() {
            similar::ChangeTag::Equal => {
                ia += n;
                ib += n;
            }
            similar::ChangeTag::Delete => {
                push(&mut a, ia..ia + n);
                ia += n;
            }
            similar::ChangeTag::Insert => {
                push(&mut b, ib..ib + n);
                ib += n;
            }
        }
    }
    (a, b)
}

impl DiffView {
    pub fn new(path: &str, old: &str, new: &str) -> DiffView {
        let old_text = normalize(old);
        let new_text = normalize(new);
        let old_lines = split_lines(&old_text);
        let new_lines = split_lines(&new_text);
        let old_no_nl = !old_text.is_empty() && !old_text.ends_with('\n');
        let new_no_nl = !new_text.is_empty() && !new_text.ends_with('\n');
        let diff = similar::TextDiff::configure()
            .algorithm(similar::Algorithm::Patience)
            .diff_lines(&old_text, &new_text);
        let mut rows = Vec::with_capacity(old_lines.len().max(new_lines.len()));
        let line = |lines: &[&str], i: usize| lines.get(i).copied().unwrap_or("").to_string();
        for op in diff.ops() {
            let (tag, o, n) = op.as_tag_tuple();
            let equal = tag == similar::DiffTag::Equal;
            if equal {
                for (i, j) in o.clone().zip(n.clone()) {
                    rows.push(Row {
                        kind: Kind::Equal,
                        old_no: Some(i + 1),
                        new_no: Some(j + 1),
                        text: line(&old_lines, i),
                        words: Vec::new(),
                        no_newline: false,
                        hunk: None,
                    });
                }
                continue;
            }
            let first_del = rows.len();
            for i in o.clone() {
                rows.push(Row {
                    kind: Kind::Delete,
                    old_no: Some(i + 1),
                    new_no: None,
                    text: line(&old_lines, i),
                    words: Vec::new(),
                    no_newline: false,
                    hunk: None,
                });
            }
            let first_ins = rows.len();
            for j in n.clone() {
                rows.push(Row {
                    kind: Kind::Insert,
                    old_no: None,
                    new_no: Some(j + 1),
                    text: line(&new_lines, j),
                    words: Vec::new(),
                    no_newline: false,
                    hunk: None,
                });
            }
            let pairs = o.len().min(n.len());
            for k in 0..pairs {
                let (a, b) = word_changes(&rows[first_del + k].text, &rows[first_ins + k].text);
                rows[first_del + k].words = a;
                rows[first_ins + k].words = b;
            }
        }
        for row in &mut rows {
            let old_last = row.kind != Kind::Insert && row.old_no == Some(old_lines.len());
            let new_last = row.kind != Kind::Delete && row.new_no == Some(new_lines.len());
            row.no_newline = (old_last && old_no_nl) || (new_last && new_no_nl);
        }
        let hunks = crate::diff::hunks(old, new);
        review::assign_hunks(&mut rows, &hunks);
        let added = rows.iter().filter(|r| r.kind == Kind::Insert).count();
        let removed = rows.iter().filter(|r| r.kind == Kind::Delete).count();
        DiffView {
            path: path.to_string(),
            rows,
            added,
            removed,
            old_text,
            new_text,
            hunks: hunks.len(),
            cache: Mutex::new(None),
        }
    }

    /// How many hunks a review can accept or reject one by one.
    pub fn hunk_count(&self) -> usize {
        self.hunks
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn added(&self) -> usize {
        self.added
    }

    pub fn removed(&self) -> usize {
        self.removed
    }

    /// Whether old and new are the same text.
    pub fn is_unchanged(&self) -> bool {
        self.added == 0 && self.removed == 0
    }

    /// The diff laid out for `width` columns; no line is wider.
    pub fn lines(
        &self,
        width: u16,
        layout: DiffLayout,
        theme: &Theme,
        opts: DiffOptions,
    ) -> Vec<Line<'static>> {
        self.lines_reviewed(width, layout, theme, opts, None).0
    }

    /// The diff with each hunk marked accepted or rejected (rejected rows
    /// struck through), and the line where each hunk's mark is.
    pub fn lines_reviewed(
        &self,
        width: u16,
        layout: DiffLayout,
        theme: &Theme,
        opts: DiffOptions,
        review: Option<Review>,
    ) -> (Vec<Line<'static>>, Vec<usize>) {
        let width = usize::from(width.max(1));
        let mut items = self.items(opts);
        if review.is_some() {
            review::mark_items(&self.rows, &mut items);
        }
        let guard = if opts.highlight {
            self.highlighted(theme)
        } else {
            None
        };
        let ctx = parts::Ctx {
            rows: &self.rows,
            theme,
            opts,
            segs: guard
                .as_ref()
                .and_then(|g| g.as_ref())
                .map(|c| (c.old.as_ref(), c.new.as_ref())),
            review,
            hunks: self.hunks,
        };
        let mut marks = vec![0; if review.is_some() { self.hunks } else { 0 }];
        let lines = match layout {
            DiffLayout::SideBySide if width >= 20 => {
                layout::side_by_side(&ctx, &items, width, &mut marks)
            }
            _ => layout::unified(&ctx, &items, width, &mut marks),
        };
        (lines, marks)
    }

    /// The syntax colours of both sides for this theme, computed on first
    /// use and kept while the theme stays the same.
    fn highlighted(&self, theme: &Theme) -> Option<MutexGuard<'_, Option<HighlightCache>>> {
        if !highlight::is_ready() {
            highlight::warm_up();
            return None;
        }
        let key = (theme.syntax_theme.clone(), theme.color_depth);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.as_ref().is_none_or(|c| c.key != key) {
            *cache = Some(HighlightCache {
                key,
                old: highlight::highlight_segments(&self.old_text, &self.path, theme),
                new: highlight::highlight_segments(&self.new_text, &self.path, theme),
            });
        }
        Some(cache)
    }

    /// What to show: rows, folded gaps and hunk headers.
    fn items(&self, opts: DiffOptions) -> Vec<parts::Item> {
        use parts::Item;
        let n = self.rows.len();
        if !opts.fold {
            return (0..n).map(Item::Row).collect();
        }
        let mut visible = vec![false; n];
        let mut last_change: Option<usize> = None;
        for (i, row) in self.rows.iter().enumerate() {
            if row.kind != Kind::Equal {
                last_change = Some(i);
                let from = i.saturating_sub(opts.context);
                visible[from..=i].iter_mut().for_each(|v| *v = true);
            } else if last_change.is_some_and(|c| i - c <= opts.context) {
                visible[i] = true;
            }
        }
        // A gap of one line costs as much as its fold marker: show it.
        for i in 1..n.saturating_sub(1) {
            if !visible[i] && visible[i - 1] && visible[i + 1] {
                visible[i] = true;
            }
        }
        let mut items = Vec::new();
        let mut i = 0;
        while i < n {
            if !visible[i] {
                let start = i;
                while i < n && !visible[i] {
                    i += 1;
                }
                items.push(Item::Fold(i - start));
                continue;
            }
            let start = i;
            while i < n && visible[i] {
                i += 1;
            }
            items.push(Item::Hunk(self.hunk_header(start..i)));
            items.extend((start..i).map(Item::Row));
        }
        items
    }

    fn hunk_header(&self, run: Range<usize>) -> String {
        let side = |f: fn(&Row) -> Option<usize>| {
            let count = self.rows[run.clone()].iter().filter_map(f).count();
            let start = self.rows[run.clone()]
                .iter()
                .find_map(f)
                .or_else(|| self.rows[..run.start].iter().rev().find_map(f))
                .unwrap_or(0);
            if count == 1 {
                format!("{start}")
            } else {
                format!("{start},{count}")
            }
        };
        format!("@@ -{} +{} @@", side(|r| r.old_no), side(|r| r.new_no))
    }
}

/// Spans of one row's text: syntax colours (or the plain diff colour) with
/// the row's background, and the word background over changed ranges.
fn styled_text(
    segs: Option<&Vec<(Style, String)>>,
    text: &str,
    words: &[Range<usize>],
    fg: Style,
    bg: Style,
    word_bg: Style,
) -> Vec<Span<'static>> {
    let plain;
    let segs = match segs {
        Some(s) if s.iter().map(|(_, t)| t.len()).sum::<usize>() == text.len() => s,
        _ => {
            plain = vec![(fg, text.to_string())];
            &plain
        }
    };
    let mut out = Vec::new();
    let mut pos = 0;
    let mut w = 0;
    for (style, seg) in segs {
        let base = bg.patch(*style);
        let end = pos + seg.len();
        let mut at = pos;
        while at < end {
            while w < words.len() && words[w].end <= at {
                w += 1;
            }
            let (upto, in_word) = match words.get(w) {
                Some(r) if r.start <= at => (r.end.min(end), true),
                Some(r) if r.start < end => (r.start, false),
                _ => (end, false),
            };
            let piece = seg.get(at - pos..upto - pos).unwrap_or("");
            let st = if in_word { base.patch(word_bg) } else { base };
            out.push(Span::styled(piece.to_string(), st));
            at = upto.max(at + 1);
        }
        pos = end;
    }
    out
}

/// One side's cell for a row, wrapped to `text_w` columns.
fn row_cells(ctx: &parts::Ctx, row: &Row, text_w: usize) -> (Vec<Vec<Span<'static>>>, Style) {
    let t = ctx.theme;
    let (fg, bg, word_bg) = match row.kind {
        Kind::Equal => (t.base(), t.base(), Style::default()),
        Kind::Delete => (t.diff_del_fg, t.diff_del_bg, t.diff_del_word_bg),
        Kind::Insert => (t.diff_add_fg, t.diff_add_bg, t.diff_add_word_bg),
    };
    // Without a row background (no colour), or on the basic colours of a
    // 16-colour terminal, the diff text colour marks the line: syntax
    // colours give way to it.
    let marked_by_fg =
        row.kind != Kind::Equal && (bg.bg.is_none() || t.color_depth == ColorDepth::Ansi16);
    let segs = if marked_by_fg { None } else { ctx.segs };
    let seg = segs.and_then(|(old, new)| match row.kind {
        Kind::Insert => new.and_then(|n| n.get(row.new_no? - 1)),
        _ => old.and_then(|o| o.get(row.old_no? - 1)),
    });
    let mut spans = styled_text(seg, &row.text, &row.words, fg, bg, word_bg);
    if review::rejected(ctx, row) {
        for s in &mut spans {
            s.style = s.style.add_modifier(Modifier::CROSSED_OUT | Modifier::DIM);
        }
    }
    let mut rows = wrap_code(spans, text_w, None);
    for r in &mut rows {
        pad_to(r, text_w, bg);
    }
    (rows, bg)
}

fn sign(row: &Row, theme: &Theme) -> Span<'static> {
    match row.kind {
        Kind::Equal => Span::styled("  ", theme.base()),
        Kind::Delete => Span::styled(
            "- ",
            theme
                .diff_del_bg
                .patch(theme.diff_del_fg)
                .add_modifier(Modifier::BOLD),
        ),
        Kind::Insert => Span::styled(
            "+ ",
            theme
                .diff_add_bg
                .patch(theme.diff_add_fg)
                .add_modifier(Modifier::BOLD),
        ),
    }
}
