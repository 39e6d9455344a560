//! The permission dialog's keys: answers, moving between choices and
//! rules, scrolling, and the reason fields. Every key comes from the table.

use crossterm::event::KeyEvent;

use super::{Choice, DiffLayout, PermissionDialog};
use crate::protocol::Decision;
use crate::tui::keys::{Action, KeyMap};

impl PermissionDialog {
    /// Typing a reason; `Some` when it was sent.
    fn type_reason(reason: &mut String, key: &KeyEvent, keys: &KeyMap) -> Option<Option<String>> {
        if keys.is(Action::TextSubmit, key) {
            let r = reason.trim().to_string();
            return Some((!r.is_empty()).then_some(r));
        }
        crate::tui::widgets::text_field::edit(reason, key, keys);
        None
    }

    /// Handles a key while a reason is being typed.
    fn reason_key(&mut self, key: &KeyEvent, keys: &KeyMap) -> Option<Decision> {
        if let Some(reason) = &mut self.deny_reason {
            if keys.is(Action::TextCancel, key) {
                return Some(Decision::Deny { reason: None });
            }
            return Self::type_reason(reason, key, keys).map(|reason| Decision::Deny { reason });
        }
        let reason = self.hunk_reason.as_mut()?;
        if keys.is(Action::TextCancel, key) {
            // Back to the review.
            self.hunk_reason = None;
            return None;
        }
        let reason = Self::type_reason(reason, key, keys)?;
        let rejected = self
            .review
            .as_ref()
            .map(|r| r.rejected())
            .unwrap_or_default();
        Some(Decision::AllowHunks { rejected, reason })
    }

    /// Handles a key; returns the decision when the person made one.
    pub fn key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<Decision> {
        if self.deny_reason.is_some() || self.hunk_reason.is_some() {
            return self.reason_key(&key, keys);
        }
        if let Some(review) = &mut self.review {
            if review.key(&key, keys) {
                self.review_rev += 1;
                self.recheck_if_changed();
                return None;
            }
            if keys.is(Action::ViewDiff, &key) {
                self.full = !self.full;
                self.scroll = 0;
                return None;
            }
            if self.full && keys.is(Action::DialogDismiss, &key) {
                self.full = false;
                return None;
            }
        }
        if keys.is(Action::AllowOnce, &key) {
            return self.decide(Choice::AllowOnce);
        }
        if keys.is(Action::AllowAlways, &key) {
            if self.can_always() {
                self.choice = Choice::AllowAlways;
            }
            return self.decide(Choice::AllowAlways);
        }
        if keys.is(Action::AllowUnsandboxed, &key) && self.can_unsandbox() {
            return self.decide(Choice::AllowUnsandboxed);
        }
        if keys.is(Action::Deny, &key) {
            self.choice = Choice::Deny;
            self.deny_reason = Some(String::new());
            return None;
        }
        if keys.is(Action::ToggleDiffLayout, &key) {
            self.layout = Some(match self.layout {
                Some(DiffLayout::SideBySide) => DiffLayout::Unified,
                _ => DiffLayout::SideBySide,
            });
            return None;
        }
        self.move_key(key, keys)
    }

    /// Enter, Esc, and moving between choices, rules and preview rows.
    fn move_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<Decision> {
        let page = usize::from(self.preview_rows.max(2) - 1);
        let is = |a| keys.is(a, &key);
        if is(Action::DialogDismiss) {
            return Some(Decision::Deny { reason: None });
        } else if is(Action::DialogChoose) {
            if self.choice == Choice::Deny {
                self.deny_reason = Some(String::new());
                return None;
            }
            return self.decide(self.choice);
        } else if is(Action::DialogPrevChoice) {
            self.move_choice(-1)
        } else if is(Action::DialogNextChoice) {
            self.move_choice(1)
        } else if is(Action::RulePrev) {
            self.cycle_rule(-1)
        } else if is(Action::RuleNext) {
            self.cycle_rule(1)
        } else if is(Action::DialogScrollDown) {
            self.scroll += 1
        } else if is(Action::DialogScrollUp) {
            self.scroll = self.scroll.saturating_sub(1)
        } else if is(Action::DialogPageDown) {
            self.scroll += page
        } else if is(Action::DialogPageUp) {
            self.scroll = self.scroll.saturating_sub(page)
        }
        None
    }

    fn move_choice(&mut self, delta: i32) {
        let choices = self.choices();
        let n = choices.len() as i32;
        let mut i = choices.iter().position(|c| *c == self.choice).unwrap_or(0) as i32;
        loop {
            i = (i + delta).rem_euclid(n);
            if choices[i as usize] != Choice::AllowAlways || self.can_always() {
                break;
            }
        }
        self.choice = choices[i as usize];
    }

    fn cycle_rule(&mut self, delta: i32) {
        let n = self.request.rules.len() as i32;
        if n > 1 && !self.request.rules_together() {
            self.rule = (self.rule as i32 + delta).rem_euclid(n) as usize;
            self.choice = Choice::AllowAlways;
        }
    }
}
