//! A file change, as the edit tools describe it (for review before it runs
//! and for the transcript after) and the interface draws it.

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};

/// One file's change. `old` is empty for a new file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub old: String,
    pub new: String,
    pub added: usize,
    pub removed: usize,
}

impl FileDiff {
    /// The change from `old` to `new`, its line counts worked out.
    pub fn new(path: String, old: String, new: String) -> Self {
        let (added, removed) = line_counts(&old, &new);
        FileDiff {
            path,
            old,
            new,
            added,
            removed,
        }
    }
}

/// Lines added and removed going from `old` to `new`.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let diff = TextDiff::from_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// One hunk of a change: a run of changed lines, with the unchanged lines
/// between changes that lie close together (as a diff view groups them).
/// Ranges are 0-based line indexes into the old and the new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old: std::ops::Range<usize>,
    pub new: std::ops::Range<usize>,
}

/// Changes separated by at most this many unchanged lines are one hunk
/// (a blank line or a brace between two changed lines); changes further
/// apart, such as the edits of a multiedit a few lines from each other,
/// are reviewed one by one. How the diff is drawn (its context and folds)
/// does not depend on this.
pub const HUNK_JOIN: usize = 1;

/// The hunks of the change from `old` to `new`, in order.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .diff_lines(old, new);
    let mut out: Vec<Hunk> = Vec::new();
    let mut gap: Option<usize> = None;
    for op in diff.ops() {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            gap = Some(o.len());
            continue;
        }
        match out.last_mut() {
            Some(h) if gap.is_none_or(|g| g <= HUNK_JOIN) => {
                h.old.end = o.end;
                h.new.end = n.end;
            }
            _ => out.push(Hunk { old: o, new: n }),
        }
        gap = None;
    }
    out
}

fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// `old` with only the hunks whose `accepted` flag is set taken from `new`
/// (a missing flag counts as accepted).
pub fn apply_hunks(old: &str, new: &str, accepted: &[bool]) -> String {
    let (a, b) = (lines_of(old), lines_of(new));
    let mut out = String::with_capacity(new.len().max(old.len()));
    let mut at = 0;
    for (i, h) in hunks(old, new).iter().enumerate() {
        a[at..h.old.start].iter().for_each(|l| out.push_str(l));
        let taken = if accepted.get(i).copied().unwrap_or(true) {
            &b[h.new.clone()]
        } else {
            &a[h.old.clone()]
        };
        taken.iter().for_each(|l| out.push_str(l));
        at = h.old.end;
    }
    a[at..].iter().for_each(|l| out.push_str(l));
    out
}

/// A hunk as unified-diff text (`@@ -3,2 +3,3 @@`, `-old`, `+new`), to
/// tell the model exactly what was left out.
pub fn hunk_text(old: &str, new: &str, h: &Hunk) -> String {
    let (a, b) = (lines_of(old), lines_of(new));
    let mut out = format!(
        "@@ -{},{} +{},{} @@\n",
        h.old.start + 1,
        h.old.len(),
        h.new.start + 1,
        h.new.len()
    );
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .diff_slices(&a[h.old.clone()], &b[h.new.clone()]);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Insert => '+',
            ChangeTag::Delete => '-',
            ChangeTag::Equal => ' ',
        };
        out.push(sign);
        out.push_str(change.value().trim_end_matches(['\n', '\r']));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_stored_with_its_kind_beside_its_fields() {
        // The interface's tool-run column keeps `{"kind":"diff",...}` rows.
        let d =
            crate::tools::ToolDisplay::Diff(FileDiff::new("a".into(), "x\n".into(), "y\n".into()));
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["kind"], "diff");
        assert_eq!(v["path"], "a");
        assert_eq!(v["added"], 1);
        let back: crate::tools::ToolDisplay = serde_json::from_value(v).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn hunks_far_apart_are_separate_and_apply_one_by_one() {
        let old: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 20\n", "line twenty\nextra\n")
            .replace("line 35\n", "");
        let hs = hunks(&old, &new);
        assert_eq!(hs.len(), 3, "{hs:?}");
        assert_eq!(apply_hunks(&old, &new, &[true, true, true]), new);
        assert_eq!(apply_hunks(&old, &new, &[false, false, false]), old);
        let middle_out = apply_hunks(&old, &new, &[true, false, true]);
        assert!(middle_out.contains("line two\n") && middle_out.contains("line 20\n"));
        assert!(!middle_out.contains("extra") && !middle_out.contains("line 35\n"));
        let text = hunk_text(&old, &new, &hs[1]);
        assert!(text.starts_with("@@ -21,1 +21,2 @@"), "{text}");
        assert!(text.contains("-line 20\n+line twenty\n+extra\n"), "{text}");
    }

    #[test]
    fn edits_a_few_lines_apart_are_separate_hunks() {
        // A multiedit whose edits are 3 to 5 lines apart: each edit can be
        // accepted or rejected on its own.
        let old: String = (1..=20).map(|i| format!("row {i}\n")).collect();
        let new = old
            .replace("row 5\n", "ROW 5\n")
            .replace("row 9\n", "ROW 9\n")
            .replace("row 12\n", "ROW 12\n");
        assert_eq!(hunks(&old, &new).len(), 3);
        let only_middle = apply_hunks(&old, &new, &[false, true, false]);
        assert!(only_middle.contains("row 5\nrow 6\nrow 7\nrow 8\nROW 9\n"));
        assert!(only_middle.contains("row 12\n"));
    }

    #[test]
    fn close_changes_are_one_hunk_and_no_final_newline_survives() {
        // One unchanged line (a blank line, a brace) between changes keeps
        // them together.
        let old = "a\nb\nc";
        let new = "A\nb\nC";
        assert_eq!(hunks(old, new).len(), 1);
        assert_eq!(apply_hunks(old, new, &[true]), new);
        assert_eq!(apply_hunks(old, new, &[false]), old);
        assert_eq!(hunks("", "x\n").len(), 1);
        assert_eq!(apply_hunks("", "x\n", &[false]), "");
    }

    #[test]
    fn counts_changed_lines() {
        assert_eq!(line_counts("a\nb\nc\n", "a\nB\nc\nd\n"), (2, 1));
        assert_eq!(line_counts("", "x\ny\n"), (2, 0));
        assert_eq!(line_counts("same\n", "same\n"), (0, 0));
    }
}
