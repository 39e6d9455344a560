//! The keys of the help overlay: scroll, search as you type after `/`,
//! and any other key closes it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::HelpState;
use crate::tui::keys::{Action, KeyMap};

/// Scrolls or searches; false when the key closes the overlay.
pub fn handle_key(state: &mut HelpState, key: KeyEvent, keys: &KeyMap) -> bool {
    if state.searching {
        search_key(state, key, keys);
        return true;
    }
    if keys.is(Action::HelpSearch, &key) {
        state.searching = true;
    } else if keys.is(Action::HelpDown, &key) {
        state.scroll = state.scroll.saturating_add(1);
    } else if keys.is(Action::HelpUp, &key) {
        state.scroll = state.scroll.saturating_sub(1);
    } else if keys.is(Action::HelpPageDown, &key) {
        state.scroll = state.scroll.saturating_add(10);
    } else if keys.is(Action::HelpPageUp, &key) {
        state.scroll = state.scroll.saturating_sub(10);
    } else if keys.is(Action::TextCancel, &key) && !state.query.is_empty() {
        state.query.clear();
        state.scroll = 0;
    } else {
        return false;
    }
    true
}

/// Typing the search: Enter keeps the filter and scrolls again, Esc drops it.
fn search_key(state: &mut HelpState, key: KeyEvent, keys: &KeyMap) {
    if keys.is(Action::TextSubmit, &key) {
        state.searching = false;
    } else if keys.is(Action::TextCancel, &key) {
        state.searching = false;
        state.query.clear();
    } else if keys.is(Action::TextDeleteBack, &key) {
        state.query.pop();
    } else if let KeyCode::Char(c) = key.code
        && !key.modifiers.contains(KeyModifiers::CONTROL)
    {
        state.query.push(c);
    }
    state.scroll = 0;
}
