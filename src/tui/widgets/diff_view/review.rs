//! Hunk-by-hunk review drawn into a diff: a mark where each hunk starts
//! (accepted or rejected, the focused one pointed at), and rejected rows
//! struck through, so what will be applied is plain to see.

use ratatui::style::Modifier;
use ratatui::text::Line;

use super::parts::{Ctx, Item, fit_line};
use super::{Kind, Row};
use crate::diff::Hunk;

/// Gives each changed row the hunk its line falls in.
pub(super) fn assign_hunks(rows: &mut [Row], hunks: &[Hunk]) {
    for row in rows.iter_mut() {
        let found = match row.kind {
            Kind::Equal => None,
            Kind::Delete => row
                .old_no
                .and_then(|n| hunks.iter().position(|h| h.old.contains(&(n - 1)))),
            Kind::Insert => row
                .new_no
                .and_then(|n| hunks.iter().position(|h| h.new.contains(&(n - 1)))),
        };
        row.hunk = found;
    }
}

/// Puts a mark before the first shown row of each hunk.
pub(super) fn mark_items(rows: &[Row], items: &mut Vec<Item>) {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(items.len() + 8);
    for item in items.drain(..) {
        if let Item::Row(i) = &item
            && let Some(h) = rows.get(*i).and_then(|r| r.hunk)
            && seen.insert(h)
        {
            out.push(Item::Review(h));
        }
        out.push(item);
    }
    *items = out;
}

pub(super) fn rejected(ctx: &Ctx, row: &Row) -> bool {
    match (ctx.review, row.hunk) {
        (Some(r), Some(h)) => !r.accepted.get(h).copied().unwrap_or(true),
        _ => false,
    }
}

pub(super) fn push_mark(
    ctx: &Ctx,
    n: usize,
    width: usize,
    marks: &mut [usize],
    out: &mut Vec<Line<'static>>,
) {
    let Some(review) = ctx.review else {
        return;
    };
    if let Some(m) = marks.get_mut(n) {
        *m = out.len();
    }
    let t = ctx.theme;
    let accepted = review.accepted.get(n).copied().unwrap_or(true);
    let focused = review.focus == n;
    let text = format!(
        "{} hunk {}/{} {}",
        if focused { "▶" } else { " " },
        n + 1,
        ctx.hunks,
        if accepted {
            "✓ accepted"
        } else {
            "✗ rejected (will not be applied)"
        }
    );
    let mut style = if accepted { t.success } else { t.error };
    style = style.add_modifier(Modifier::BOLD);
    if focused {
        style = style.add_modifier(Modifier::REVERSED);
    }
    out.push(fit_line(&text, width, style));
}
