//! The keys of the help overlay (drawn by `widgets::help`): scroll, and any
//! other key closes it.

use crossterm::event::KeyEvent;

use crate::tui::keys::{Action, KeyMap};

/// Scrolls the overlay; false when the key closes it.
pub fn handle_key(scroll: &mut u16, key: KeyEvent, keys: &KeyMap) -> bool {
    if keys.is(Action::HelpDown, &key) {
        *scroll = scroll.saturating_add(1);
    } else if keys.is(Action::HelpUp, &key) {
        *scroll = scroll.saturating_sub(1);
    } else if keys.is(Action::HelpPageDown, &key) {
        *scroll = scroll.saturating_add(10);
    } else if keys.is(Action::HelpPageUp, &key) {
        *scroll = scroll.saturating_sub(10);
    } else {
        return false;
    }
    true
}
