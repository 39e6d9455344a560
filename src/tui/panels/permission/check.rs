//! The language server's verdict on the edit a dialog shows: "checking…"
//! while it runs, then "+1 error" with the messages under the head, and
//! beside each hunk the problems that fall in it.

use ratatui::text::{Line, Span};

use super::PermissionDialog;
use crate::protocol::{Severity, Verdict};
use crate::tools::Preview;
use crate::tui::styles::Styles;
use crate::tui::wrap::wrap_prefixed;

/// Messages listed under the head (the rest are counted).
const SHOWN: usize = 4;

#[derive(Debug, Clone)]
pub struct EditCheck {
    pub server: String,
    /// `None` while the server checks.
    pub verdict: Option<Verdict>,
    /// Per hunk of the diff: "+1 error" when problems fall in it.
    hunk_notes: Vec<Option<(String, bool)>>,
    /// The hunks left out of the text checked (or being checked).
    rejected: Vec<usize>,
}

impl PermissionDialog {
    /// The check of this dialog's edit, with the `rejected` hunks left
    /// out, began (`None`) or ended. A verdict on another choice of hunks
    /// than the review's current one is stale and dropped.
    pub fn set_check(&mut self, server: String, verdict: Option<Verdict>, rejected: Vec<usize>) {
        let current = self
            .review
            .as_ref()
            .map(|r| r.rejected())
            .unwrap_or_default();
        if rejected != current {
            return;
        }
        let hunk_notes = match (&verdict, &self.request.preview) {
            (Some(v), Some(Preview::Diff(d))) => hunk_notes(v, &d.old, &d.new, &rejected),
            _ => Vec::new(),
        };
        self.check = Some(EditCheck {
            server,
            verdict,
            hunk_notes,
            rejected,
        });
        self.review_rev += 1;
    }

    /// After a review key: when the hunks kept changed, the check says
    /// "checking…" again and `recheck` asks for the new one (nothing is
    /// checked when every hunk is rejected: nothing would be written).
    pub(super) fn recheck_if_changed(&mut self) {
        let (Some(check), Some(review)) = (&mut self.check, &self.review) else {
            return;
        };
        let rejected = review.rejected();
        if rejected == check.rejected || review.all_rejected() {
            return;
        }
        check.verdict = None;
        check.hunk_notes.clear();
        check.rejected = rejected.clone();
        self.recheck = Some(rejected);
    }
}

/// Per hunk of `old`→`new`, the problems that fall in it in the text
/// written with the `rejected` hunks left out (their lines in that text).
fn hunk_notes(
    v: &Verdict,
    old: &str,
    new: &str,
    rejected: &[usize],
) -> Vec<Option<(String, bool)>> {
    let all = crate::diff::hunks(old, new);
    let mut notes = vec![None; all.len()];
    let kept: Vec<usize> = (0..all.len()).filter(|i| !rejected.contains(i)).collect();
    let written = if rejected.is_empty() {
        new.to_string()
    } else {
        let accepted: Vec<bool> = (0..all.len()).map(|i| !rejected.contains(&i)).collect();
        crate::diff::apply_hunks(old, new, &accepted)
    };
    let in_written = crate::diff::hunks(old, &written);
    if in_written.len() != kept.len() {
        return notes;
    }
    for (h, i) in in_written.iter().zip(kept) {
        let found = v.findings_in(h.new.clone());
        let errors = (found.iter())
            .filter(|f| f.severity == Severity::Error)
            .count();
        let warnings = found.len() - errors;
        notes[i] = (!found.is_empty()).then(|| (counts(errors, warnings), errors > 0));
    }
    notes
}

fn counts(errors: usize, warnings: usize) -> String {
    let mut parts = Vec::new();
    if errors > 0 {
        parts.push(format!(
            "+{errors} error{}",
            if errors == 1 { "" } else { "s" }
        ));
    }
    if warnings > 0 {
        parts.push(format!(
            "+{warnings} warning{}",
            if warnings == 1 { "" } else { "s" }
        ));
    }
    parts.join(", ")
}

/// The head's lines for the check.
pub(super) fn head_lines(check: &EditCheck, width: u16, styles: &Styles) -> Vec<Line<'static>> {
    let server = crate::term_safe::escape(&check.server);
    let Some(v) = &check.verdict else {
        return vec![Line::from(Span::styled(
            format!("{server}: checking…"),
            styles.dim,
        ))];
    };
    let (style, findings) = match v {
        Verdict::Checked {
            new,
            new_errors,
            elsewhere_errors,
            ..
        } if *new_errors + *elsewhere_errors > 0 => (styles.error, &new[..]),
        Verdict::Checked { new, .. } if !new.is_empty() => (styles.warning, &new[..]),
        Verdict::Checked { .. } => (styles.success, &[][..]),
        Verdict::Unavailable { .. } => (styles.warning, &[][..]),
    };
    let mut out = wrap_prefixed(
        &crate::term_safe::escape(&v.tally()),
        width,
        Span::styled(format!("{server}: "), styles.dim),
        Span::raw(" ".repeat(server.chars().count() + 2)),
        style,
    );
    for f in findings.iter().take(SHOWN) {
        let text = format!(
            "line {}: {}",
            f.line + 1,
            crate::term_safe::escape(&f.message.split_whitespace().collect::<Vec<_>>().join(" "))
        );
        let style = match f.severity {
            Severity::Error => styles.error,
            Severity::Warning => styles.warning,
        };
        out.extend(wrap_prefixed(
            &text,
            width,
            Span::raw("  "),
            Span::raw("    "),
            style,
        ));
    }
    if findings.len() > SHOWN {
        out.push(Line::from(Span::styled(
            format!("  … {} more", findings.len() - SHOWN),
            styles.dim,
        )));
    }
    // Other files the edit broke: the first error of each.
    for e in v.elsewhere() {
        let Some(f) = e.new.first() else { continue };
        let text = format!(
            "{} line {}: {}",
            crate::term_safe::escape(&e.path),
            f.line + 1,
            crate::term_safe::escape(&f.message.split_whitespace().collect::<Vec<_>>().join(" "))
        );
        out.extend(wrap_prefixed(
            &text,
            width,
            Span::raw("  "),
            Span::raw("    "),
            styles.error,
        ));
    }
    out
}

/// Puts each hunk's problems beside its review mark.
pub(super) fn mark_hunks(
    check: Option<&EditCheck>,
    lines: &mut [Line<'static>],
    marks: &[usize],
    styles: &Styles,
) {
    let Some(check) = check else { return };
    for (note, &at) in check.hunk_notes.iter().zip(marks) {
        if let (Some((text, error)), Some(line)) = (note, lines.get_mut(at)) {
            let style = if *error { styles.error } else { styles.warning };
            line.spans.push(Span::styled(format!("  {text}"), style));
        }
    }
}
