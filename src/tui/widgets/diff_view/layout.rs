//! Laying a computed diff out as lines: unified or side by side.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::parts::{Ctx, Item, fit_line};
use super::{Kind, Row, row_cells, sign};
use crate::tui::wrap::pad_to;

fn digits(n: usize) -> usize {
    n.max(1).to_string().len()
}

fn fold_text(n: usize) -> String {
    format!("⋯ {n} unchanged line{}", if n == 1 { "" } else { "s" })
}

const NO_NEWLINE: &str = "\\ No newline at end of file";

/// Column budget for one side: line-number gutter, sign, text.
struct Cols {
    numbers: bool,
    sign: bool,
    text: usize,
}

fn cols(width: usize, number_w: usize, want_numbers: bool) -> Cols {
    let numbers = want_numbers && width >= number_w + 2 + 8;
    let rest = width - if numbers { number_w } else { 0 };
    let sign = rest >= 4;
    Cols {
        numbers,
        sign,
        text: (rest - if sign { 2 } else { 0 }).max(1),
    }
}

fn opt_num(n: Option<usize>, w: usize) -> String {
    match n {
        Some(n) => format!("{n:>w$}"),
        None => " ".repeat(w),
    }
}

pub(super) fn unified(
    ctx: &Ctx,
    items: &[Item],
    width: usize,
    marks: &mut [usize],
) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let ow = digits(ctx.rows.iter().filter_map(|r| r.old_no).max().unwrap_or(0));
    let nw = digits(ctx.rows.iter().filter_map(|r| r.new_no).max().unwrap_or(0));
    let c = cols(width, ow + nw + 2, ctx.opts.line_numbers);
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::Fold(n) => out.push(fit_line(&fold_text(*n), width, t.dim)),
            Item::Hunk(h) => out.push(fit_line(h, width, t.diff_hunk)),
            Item::Review(n) => super::review::push_mark(ctx, *n, width, marks, &mut out),
            Item::Row(i) => {
                let Some(row) = ctx.rows.get(*i) else {
                    continue;
                };
                let (cells, bg) = row_cells(ctx, row, c.text);
                for (k, cell) in cells.into_iter().enumerate() {
                    let mut spans = Vec::new();
                    if c.numbers {
                        let g = if k == 0 {
                            format!("{} {} ", opt_num(row.old_no, ow), opt_num(row.new_no, nw))
                        } else {
                            " ".repeat(ow + nw + 2)
                        };
                        spans.push(Span::styled(g, t.line_number));
                    }
                    if c.sign {
                        spans.push(if k == 0 {
                            sign(row, t)
                        } else {
                            Span::styled("  ", bg)
                        });
                    }
                    spans.extend(cell);
                    out.push(Line::from(spans));
                }
                if row.no_newline {
                    out.push(fit_line(NO_NEWLINE, width, t.dim));
                }
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Side {
    Old,
    New,
}

/// One side of a side-by-side row: its wrapped lines, each exactly `w` wide.
fn side_lines(
    ctx: &Ctx,
    row: Option<&Row>,
    side: Side,
    w: usize,
    number_w: usize,
) -> Vec<Vec<Span<'static>>> {
    let t = ctx.theme;
    let c = cols(w, number_w + 1, ctx.opts.line_numbers);
    let Some(row) = row else {
        return vec![vec![Span::styled(" ".repeat(w), t.dim)]];
    };
    let (cells, bg) = row_cells(ctx, row, c.text);
    let no = match side {
        Side::Old => row.old_no,
        Side::New => row.new_no,
    };
    let mut out = Vec::new();
    for (k, cell) in cells.into_iter().enumerate() {
        let mut spans = Vec::new();
        if c.numbers {
            let g = if k == 0 {
                opt_num(no, number_w)
            } else {
                " ".repeat(number_w)
            };
            spans.push(Span::styled(format!("{g} "), t.line_number));
        }
        if c.sign {
            spans.push(if k == 0 {
                sign(row, t)
            } else {
                Span::styled("  ", bg)
            });
        }
        spans.extend(cell);
        out.push(spans);
    }
    if row.no_newline {
        out.push(fit_line(NO_NEWLINE, w, t.dim).spans);
    }
    out
}

pub(super) fn side_by_side(
    ctx: &Ctx,
    items: &[Item],
    width: usize,
    marks: &mut [usize],
) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let left_w = (width - 1) / 2;
    let right_w = width - 1 - left_w;
    let ow = digits(ctx.rows.iter().filter_map(|r| r.old_no).max().unwrap_or(0));
    let nw = digits(ctx.rows.iter().filter_map(|r| r.new_no).max().unwrap_or(0));
    let mut out = Vec::new();
    let pair = |l: Option<&Row>, r: Option<&Row>, out: &mut Vec<Line<'static>>| {
        let left = side_lines(ctx, l, Side::Old, left_w, ow);
        let right = side_lines(ctx, r, Side::New, right_w, nw);
        for k in 0..left.len().max(right.len()) {
            let mut spans = left.get(k).cloned().unwrap_or_default();
            pad_to(&mut spans, left_w, Style::default());
            spans.push(Span::styled("│", t.border));
            let mut rs = right.get(k).cloned().unwrap_or_default();
            pad_to(&mut rs, right_w, Style::default());
            spans.extend(rs);
            out.push(Line::from(spans));
        }
    };
    let mut i = 0;
    while i < items.len() {
        match &items[i] {
            Item::Fold(n) => out.push(fit_line(&fold_text(*n), width, t.dim)),
            Item::Hunk(h) => out.push(fit_line(h, width, t.diff_hunk)),
            Item::Review(n) => super::review::push_mark(ctx, *n, width, marks, &mut out),
            Item::Row(r) => {
                let row = &ctx.rows[*r];
                if row.kind == Kind::Equal {
                    pair(Some(row), Some(row), &mut out);
                } else {
                    // A run of changes: deletions on the left, insertions on
                    // the right, paired in order, fillers for the rest.
                    let (mut dels, mut ins) = (Vec::new(), Vec::new());
                    while let Some(Item::Row(r)) = items.get(i) {
                        let row = &ctx.rows[*r];
                        match row.kind {
                            Kind::Delete => dels.push(row),
                            Kind::Insert => ins.push(row),
                            Kind::Equal => break,
                        }
                        i += 1;
                    }
                    for k in 0..dels.len().max(ins.len()) {
                        pair(dels.get(k).copied(), ins.get(k).copied(), &mut out);
                    }
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}
