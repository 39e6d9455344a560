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
    fn counts_changed_lines() {
        assert_eq!(line_counts("a\nb\nc\n", "a\nB\nc\nd\n"), (2, 1));
        assert_eq!(line_counts("", "x\ny\n"), (2, 0));
        assert_eq!(line_counts("same\n", "same\n"), (0, 0));
    }
}
