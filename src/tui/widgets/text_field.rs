//! The editing keys every one-line field of a dialog shares (a new title, a
//! deny reason): typing, Backspace, Ctrl+U to clear, Ctrl+W for the word
//! before the cursor, which sits at the end.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::keys::{Action, KeyMap};

/// Applies `key` to `text`; `true` when it was an editing key.
pub fn edit(text: &mut String, key: &KeyEvent, keys: &KeyMap) -> bool {
    if keys.is(Action::TextDeleteBack, key) {
        text.pop();
    } else if keys.is(Action::TextClear, key) {
        text.clear();
    } else if keys.is(Action::TextDeleteWord, key) {
        delete_word(text);
    } else if let KeyCode::Char(c) = key.code
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
        text.push(c);
    } else {
        return false;
    }
    true
}

/// Removes the spaces at the end, then the word before them.
fn delete_word(text: &mut String) {
    let kept = text.trim_end().len();
    text.truncate(kept);
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    text.truncate(start);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(text: &mut String, code: KeyCode, m: KeyModifiers) {
        edit(text, &KeyEvent::new(code, m), &KeyMap::default());
    }

    #[test]
    fn clears_deletes_words_and_types() {
        let mut t = "fix the  parser ".to_string();
        press(&mut t, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(t, "fix the  ");
        press(&mut t, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(t, "fix ");
        press(&mut t, KeyCode::Char('é'), KeyModifiers::NONE);
        assert_eq!(t, "fix é");
        press(&mut t, KeyCode::Char('u'), KeyModifiers::CONTROL);
        assert_eq!(t, "");
        press(&mut t, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(t, "");
    }
}
