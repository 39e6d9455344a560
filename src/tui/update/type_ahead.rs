//! Keys typed just as a permission dialog appears were meant for the
//! prompt: a person writing "do a dance" while the model works must not
//! answer a dialog that popped up under their fingers ("a" is Allow once).
//! While the person goes on typing over a dialog that opened as they typed
//! (until they pause), letters go on into the prompt and other keys are
//! ignored. The same holds for the first moments of a dialog that appeared
//! just after a key press: someone who sent a prompt and at once starts the
//! next one must not answer it ("s" is Allow always).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::prompt_key;
use crate::tui::cmd::Cmd;
use crate::tui::model::{Focus, Model};

/// How long a dialog that opened while the person was typing takes no
/// answers: enough to notice it, too short to be in the way.
pub(super) const GRACE: Duration = Duration::from_millis(1500);

/// A key pressed this recently before a dialog opens means the person is
/// at the keyboard.
const RECENT_KEY: Duration = Duration::from_millis(1500);

/// When a dialog opens now: the time, if a key was pressed just before.
pub(super) fn fresh_since(model: &Model) -> Option<Instant> {
    model
        .last_key
        .is_some_and(|k| model.now.saturating_duration_since(k) < RECENT_KEY)
        .then_some(model.now)
}

/// When a dialog opens now: the time, if the person is typing a prompt.
pub(super) fn typing_since(model: &Model) -> Option<Instant> {
    (model.focus == Focus::Prompt && !model.input.is_empty()).then_some(model.now)
}

/// `Some` when `key` came too soon to be an answer to the dialog in front:
/// what it did instead (typed into the prompt, or nothing).
pub(super) fn too_soon(model: &mut Model, key: KeyEvent) -> Option<Vec<Cmd>> {
    if !model.modals.forms.is_empty() {
        return None;
    }
    let (now, pause) = (model.now, model.dialog_pause);
    let dialog = model.modals.permissions.front_mut()?;
    let since = |t: Option<Instant>| t.map(|t| now.saturating_duration_since(t));
    let fresh = since(dialog.opened).is_some_and(|d| d < pause);
    let typing = since(dialog.typed_over).is_some_and(|d| d < GRACE);
    if !fresh && !typing {
        return None;
    }
    // Typing on keeps the dialog waiting: it answers after a pause.
    dialog.typed_over = Some(now);
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    Some(match key.code {
        KeyCode::Char(_) | KeyCode::Backspace if plain => prompt_key(model, key),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyCode;

    use super::GRACE;
    use crate::protocol::AgentEvent;
    use crate::protocol::PermissionRequest;
    use crate::tui::cmd::Cmd;
    use crate::tui::test_support::{agent, key, model, type_text};
    use crate::tui::update::update;

    fn ask(m: &mut crate::tui::model::Model) {
        let request = PermissionRequest {
            formatting: None,
            tool: "bash".into(),
            summary: "bash echo two > /tmp/outside.txt".into(),
            reasons: vec!["outside the workspace".into()],
            preview: None,
            rules: vec![],
            sandbox: None,
        };
        agent(m, AgentEvent::PermissionRequested { id: 7, request });
    }

    fn answered(cmds: &[Cmd]) -> bool {
        cmds.iter()
            .any(|c| format!("{c:?}").contains("PermissionReply"))
    }

    #[test]
    fn letters_typed_as_the_dialog_opens_go_on_into_the_prompt() {
        let mut m = model();
        type_text(&mut m, "so as i said do ");
        ask(&mut m);
        m.now += GRACE / 4;
        assert!(!answered(&update(&mut m, key(KeyCode::Char('a')))));
        assert!(!answered(&update(&mut m, key(KeyCode::Enter))));
        // Still typing, later than GRACE after the dialog opened.
        m.now += GRACE * 3 / 4;
        type_text(&mut m, " dance");
        assert_eq!(m.modals.permissions.len(), 1);
        assert_eq!(m.input.text(), "so as i said do a dance");
        // Once the person has had time to see it, the dialog answers.
        m.now += GRACE;
        assert!(answered(&update(&mut m, key(KeyCode::Char('a')))));
        assert!(m.modals.permissions.is_empty());
        assert_eq!(m.input.text(), "so as i said do a dance");
    }

    #[test]
    fn the_next_prompt_typed_as_a_dialog_appears_does_not_answer_it() {
        // Sent a prompt, the dialog appeared, the person starts typing the
        // next one: "s" (Allow always) must not store rules unseen.
        let mut m = model();
        let pause = std::time::Duration::from_millis(600);
        m.dialog_pause = pause;
        type_text(&mut m, "start a job");
        update(&mut m, key(KeyCode::Enter));
        m.now += pause / 2;
        ask(&mut m);
        m.now += pause / 3;
        assert!(!answered(&update(&mut m, key(KeyCode::Char('s')))));
        m.now += pause / 3;
        type_text(&mut m, "o next");
        assert_eq!(m.input.text(), "so next");
        assert_eq!(m.modals.permissions.len(), 1);
        // Typing on keeps it waiting; after a pause it answers.
        m.now += GRACE;
        assert!(answered(&update(&mut m, key(KeyCode::Char('a')))));
    }

    #[test]
    fn with_an_empty_prompt_the_dialog_answers_at_once() {
        let mut m = model();
        ask(&mut m);
        assert!(answered(&update(&mut m, key(KeyCode::Char('a')))));
    }
}
