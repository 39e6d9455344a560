//! The session browser as a panel: this project's sessions (or all),
//! searched as you type, with a preview; resume, rename, delete, fork,
//! export, or continue one from before a prompt.

mod browser;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

pub use browser::{BROWSER_PAGE, BrowserAction, BrowserEntry, BrowserStyles, SessionBrowser};

use super::{Outcome, PanelAction};
use crate::protocol::SessionRequest;
use crate::sessions::SessionId;
use crate::tui::cmd::Cmd;
use crate::tui::keys::KeyMap;
use crate::tui::styles::Styles;

/// A key for the browser: resuming and rewinding close it (`update` may
/// keep it open when the agent is busy).
pub(super) fn handle_key(b: &mut SessionBrowser, key: KeyEvent, keys: &KeyMap) -> Outcome {
    let action = b.handle_key(key, keys);
    let keep = !matches!(
        action,
        BrowserAction::Close | BrowserAction::Resume(_) | BrowserAction::Rewind(_)
    );
    Outcome {
        keep,
        action: PanelAction::Browser(action),
    }
}

pub(super) fn render(b: &mut SessionBrowser, area: Rect, buf: &mut Buffer, s: &Styles) {
    let inset = if area.width > 60 && area.height > 16 {
        Rect {
            x: area.x + 2,
            y: area.y + 1,
            width: area.width - 4,
            height: area.height - 2,
        }
    } else {
        area
    };
    b.render(
        inset,
        buf,
        &BrowserStyles {
            border: s.accent,
            text: s.text,
            dim: s.dim,
            selected: s.selection,
            matched: s.accent.add_modifier(ratatui::style::Modifier::BOLD),
            warning: s.warning,
        },
    )
}

/// What the browser asks of the sessions service; `current` is the session
/// being recorded (it is not deleted).
pub fn commands(action: BrowserAction, current: Option<&SessionId>) -> Vec<Cmd> {
    let ask = |req| vec![Cmd::Session(req)];
    match action {
        BrowserAction::Query {
            text,
            all_projects,
            offset,
        } => ask(SessionRequest::Query {
            text,
            all_projects,
            offset,
        }),
        BrowserAction::Then(first, second) => {
            let mut cmds = commands(*first, current);
            cmds.extend(commands(*second, current));
            cmds
        }
        BrowserAction::Preview(id) => ask(SessionRequest::Preview(id)),
        BrowserAction::Rename { id, title } => ask(SessionRequest::Rename { id, title }),
        BrowserAction::Delete(id) => ask(SessionRequest::Delete {
            id,
            current: current.cloned(),
        }),
        BrowserAction::Fork(id) => ask(SessionRequest::Fork(id)),
        BrowserAction::Export { id, json } => ask(SessionRequest::Export { id, json, to: None }),
        BrowserAction::Resume(id) => ask(SessionRequest::Resume(id)),
        BrowserAction::Rewind(id) => ask(SessionRequest::Prompts(id)),
        BrowserAction::None | BrowserAction::Close => Vec::new(),
    }
}
