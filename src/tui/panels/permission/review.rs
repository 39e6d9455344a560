//! Reviewing an edit hunk by hunk in the dialog: move between hunks,
//! accept or reject each; allowing then applies only the accepted ones.

use crossterm::event::KeyEvent;

use crate::tui::keys::{Action, KeyMap};
use crate::tui::widgets::diff_view::Review;

#[derive(Debug, Clone)]
pub struct HunkReview {
    pub accepted: Vec<bool>,
    pub focus: usize,
    /// The focused hunk changed: scroll it into view at the next draw.
    pub(super) reveal: bool,
}

impl HunkReview {
    /// A review for an edit of `count` hunks; one hunk is accepted or
    /// rejected with the dialog itself.
    pub fn new(count: usize) -> Option<HunkReview> {
        (count > 1).then(|| HunkReview {
            accepted: vec![true; count],
            focus: 0,
            reveal: false,
        })
    }

    pub fn rejected(&self) -> Vec<usize> {
        (0..self.accepted.len())
            .filter(|i| !self.accepted[*i])
            .collect()
    }

    pub fn all_rejected(&self) -> bool {
        self.accepted.iter().all(|a| !a)
    }

    pub fn as_review(&self) -> Review<'_> {
        Review {
            accepted: &self.accepted,
            focus: self.focus,
        }
    }

    /// Handles the review keys; whether the key was one of them.
    pub fn key(&mut self, key: &KeyEvent, keys: &KeyMap) -> bool {
        let n = self.accepted.len();
        if keys.is(Action::HunkNext, key) {
            self.focus = (self.focus + 1) % n;
        } else if keys.is(Action::HunkPrev, key) {
            self.focus = (self.focus + n - 1) % n;
        } else if keys.is(Action::HunkToggle, key) {
            self.accepted[self.focus] = !self.accepted[self.focus];
        } else {
            return false;
        }
        self.reveal = true;
        true
    }

    /// "2 of 3 hunks accepted" for the choice and the title.
    pub fn tally(&self) -> String {
        let kept = self.accepted.iter().filter(|a| **a).count();
        format!("{kept} of {} hunks accepted", self.accepted.len())
    }

    /// The hint for the review keys, from the key table; `full` when the
    /// diff is over the whole screen (the same key goes back).
    pub fn hint(keys: &KeyMap, full: bool) -> String {
        format!(
            "{}/{} hunk · {} accept/reject · {} {}",
            keys.keys_for(Action::HunkNext),
            keys.keys_for(Action::HunkPrev),
            keys.keys_for(Action::HunkToggle),
            keys.keys_for(Action::ViewDiff),
            if full {
                "back to the dialog"
            } else {
                "full screen"
            },
        )
    }
}
