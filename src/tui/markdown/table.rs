//! Markdown tables: aligned columns with box-drawing borders, shrunk to the
//! available width by wrapping the widest cells first.

use pulldown_cmark::Alignment;
use ratatui::text::Span;

use super::{Renderer, Table};
use crate::tui::wrap::{spans_width, wrap_spans};

/// Column widths that fit `room`: narrow columns keep their natural width,
/// the widest are capped at a common level (found by binary search so huge
/// cells cost nothing extra), and left-over columns go to capped ones.
fn fit(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.to_vec();
    }
    let fits = |cap: usize| natural.iter().map(|w| (*w).min(cap)).sum::<usize>() <= room;
    let (mut lo, mut hi) = (1, natural.iter().copied().max().unwrap_or(1));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut widths: Vec<usize> = natural.iter().map(|w| (*w).min(lo)).collect();
    let mut left = room.saturating_sub(widths.iter().sum());
    for (w, n) in widths.iter_mut().zip(natural) {
        if left == 0 {
            break;
        }
        if *w < *n {
            *w += 1;
            left -= 1;
        }
    }
    widths
}

fn border(widths: &[usize], l: &str, m: &str, r: &str) -> String {
    let inner: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
    format!("{l}{}{r}", inner.join(m))
}

pub(super) fn render(r: &mut Renderer, tb: Table) {
    let t = r.theme;
    let ncols = tb.rows.iter().map(Vec::len).max().unwrap_or(0);
    if ncols == 0 {
        return;
    }
    let avail = r.avail();
    // "│ " + cells joined by " │ " + " │"
    let overhead = 3 * ncols + 1;
    if avail < overhead + ncols {
        // Too narrow for a grid: one wrapped line per row.
        for row in tb.rows {
            let mut spans = Vec::new();
            for (i, cell) in row.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", t.border));
                }
                spans.extend(cell);
            }
            for line in wrap_spans(spans, avail) {
                r.emit(line);
            }
        }
        return;
    }
    let natural: Vec<usize> = (0..ncols)
        .map(|c| {
            tb.rows
                .iter()
                .filter_map(|row| row.get(c))
                .map(|cell| spans_width(cell))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let widths = fit(&natural, avail - overhead);
    r.emit(vec![Span::styled(border(&widths, "┌", "┬", "┐"), t.border)]);
    let nrows = tb.rows.len();
    for (ri, row) in tb.rows.into_iter().enumerate() {
        let mut cells: Vec<Vec<Vec<Span<'static>>>> = Vec::with_capacity(ncols);
        let mut row = row.into_iter();
        for w in &widths {
            cells.push(wrap_spans(row.next().unwrap_or_default(), *w));
        }
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut line = vec![Span::styled("│ ", t.border)];
            for (c, w) in widths.iter().enumerate() {
                if c > 0 {
                    line.push(Span::styled(" │ ", t.border));
                }
                let content = cells[c].get(k).cloned().unwrap_or_default();
                let gap = w.saturating_sub(spans_width(&content));
                let (before, after) = match tb.aligns.get(c) {
                    Some(Alignment::Right) => (gap, 0),
                    Some(Alignment::Center) => (gap / 2, gap - gap / 2),
                    _ => (0, gap),
                };
                if before > 0 {
                    line.push(Span::raw(" ".repeat(before)));
                }
                line.extend(content);
                if after > 0 {
                    line.push(Span::raw(" ".repeat(after)));
                }
            }
            line.push(Span::styled(" │", t.border));
            r.emit(line);
        }
        if ri + 1 == tb.head_rows && nrows > tb.head_rows {
            r.emit(vec![Span::styled(border(&widths, "├", "┼", "┤"), t.border)]);
        }
    }
    r.emit(vec![Span::styled(border(&widths, "└", "┴", "┘"), t.border)]);
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn fit_shrinks_widest_first() {
        assert_eq!(fit(&[3, 4], 10), [3, 4]);
        assert_eq!(fit(&[3, 40, 30], 23), [3, 10, 10]);
        assert_eq!(fit(&[1, 1, 1], 3), [1, 1, 1]);
        let w = fit(&[50, 50], 21);
        assert_eq!(w.iter().sum::<usize>(), 21);
    }
}
