//! Resuming from the browser a session another cairn has open: continue
//! in a fork of it (the default), look at it read-only, or cancel. Two
//! writers would interleave their turns into one history.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::{Outcome, Panel, PanelAction, boxed};
use crate::protocol::{OpenAs, SessionRequest};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;

/// Keys for the question; `None` for the other panels.
pub(super) fn handle_key(panel: &Panel, key: KeyEvent, keys: &KeyMap) -> Option<Outcome> {
    let Panel::OpenElsewhere { id, .. } = panel else {
        return None;
    };
    let open = |how| {
        Outcome::close_with(PanelAction::Session(SessionRequest::OpenAs(
            id.clone(),
            how,
        )))
    };
    Some(if keys.is(Action::BrowserOpenFork, &key) {
        open(OpenAs::Fork)
    } else if keys.is(Action::BrowserOpenReadOnly, &key) {
        open(OpenAs::ReadOnly)
    } else {
        Outcome::stay(!keys.is(Action::PanelReject, &key))
    })
}

/// Draws the question; false for the other panels.
pub(super) fn render(panel: &Panel, area: Rect, buf: &mut Buffer, s: &Styles) -> bool {
    let Panel::OpenElsewhere { id, held } = panel else {
        return false;
    };
    let lines = vec![
        Line::styled(
            format!("Session {}: {held}.", crate::protocol::short_id(id)),
            s.text,
        ),
        Line::styled(
            "Writing into it from here too would interleave both conversations.",
            s.dim,
        ),
        Line::raw(""),
        Line::styled(
            "  f / Enter  fork it: continue in a copy (a new session)",
            s.text,
        ),
        Line::styled("  r          open it read-only: look, send nothing", s.text),
        Line::styled("  Esc        cancel", s.text),
    ];
    boxed(" Open in another cairn ", lines, area, buf, s);
    true
}
