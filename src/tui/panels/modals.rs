//! The one container for what is drawn over the main screen and takes its
//! keys: the permission dialogs the agent is waiting on, the servers'
//! requests for input, and the panels and help the person opened. It
//! answers the two questions the rest of the interface asks of dialogs:
//! who gets this key ([`Modals::front`]) and what is drawn on top
//! ([`Modals::render`]).

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::help::{self, HelpState};
use super::input_form::InputForm;
use super::permission::PermissionDialog;
use super::{Panel, SessionBrowser};
use crate::tui::keys::KeyMap;
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::overlay;

/// A screen the person opened over the transcript; the topmost gets keys.
/// The palette, slash commands and file picker go here.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help(HelpState),
    Panel(Box<Panel>),
}

/// Which kind of dialog a key goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    /// The topmost opened panel.
    Panel,
    /// The help overlay, opened on top of everything else.
    Help,
    /// The first server request for input.
    Form,
    /// The first permission dialog.
    Permission,
}

/// Every dialog that is open or waiting. Drawn bottom to top: the first
/// permission dialog, the first form, then the opened screens in order;
/// keys go to the opened screens first, then the form, then the dialog.
#[derive(Default)]
pub struct Modals {
    /// Permission requests, answered in order (the first is shown).
    pub permissions: VecDeque<PermissionDialog>,
    /// Servers' requests for input, answered in order.
    pub forms: VecDeque<InputForm>,
    /// Panels and help the person opened, topmost last.
    pub overlays: Vec<Overlay>,
}

impl Modals {
    /// Who gets the next key; `None` when no dialog is open.
    pub fn front(&self) -> Option<Front> {
        match self.overlays.last() {
            Some(Overlay::Panel(_)) => Some(Front::Panel),
            Some(Overlay::Help(_)) => Some(Front::Help),
            None if !self.forms.is_empty() => Some(Front::Form),
            None if !self.permissions.is_empty() => Some(Front::Permission),
            None => None,
        }
    }

    /// Nothing is open or waiting: the prompt has the keys.
    pub fn is_empty(&self) -> bool {
        self.overlays.is_empty() && self.forms.is_empty() && self.permissions.is_empty()
    }

    pub fn open_panel(&mut self, panel: Panel) {
        self.overlays.push(Overlay::Panel(Box::new(panel)));
    }

    /// The open session browser, to feed it what the service answered.
    pub fn browser_mut(&mut self) -> Option<&mut SessionBrowser> {
        self.overlays.iter_mut().rev().find_map(|o| match o {
            Overlay::Panel(p) => match &mut **p {
                Panel::Sessions(b) => Some(&mut **b),
                _ => None,
            },
            _ => None,
        })
    }

    /// Draws every dialog, bottom to top. Each goes through
    /// `overlay::draw`, which clears the rows it covers and never leaves a
    /// wide character cut in half. Waiting dialogs are placed in
    /// `dialog_area`; opened screens use the whole `area`.
    pub fn render(
        &mut self,
        area: Rect,
        dialog_area: Rect,
        buf: &mut Buffer,
        styles: &Styles,
        theme: &Theme,
        keys: &KeyMap,
    ) {
        let base = styles.text;
        let count = self.permissions.len();
        if let Some(d) = self.permissions.front_mut() {
            overlay::draw(buf, area, base, |b| {
                d.render(dialog_area, b, styles, theme, keys, Some((1, count)));
            });
        }
        if let Some(form) = self.forms.front() {
            overlay::draw(buf, area, base, |b| {
                form.render(dialog_area, b, styles, keys)
            });
        }
        for o in self.overlays.iter_mut() {
            overlay::draw(buf, area, base, |b| match o {
                Overlay::Help(state) => help::render(area, b, keys, styles, state),
                Overlay::Panel(p) => p.render(area, b, styles, theme, keys),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyCode;

    use super::Front;
    use crate::protocol::AgentEvent;
    use crate::protocol::PermissionRequest;
    use crate::tools::input::{FieldKind, InputField, InputRequest};
    use crate::tui::test_support::{agent, ctrl, key, model};
    use crate::tui::update::update;

    fn permission() -> AgentEvent {
        let request = PermissionRequest {
            formatting: None,
            tool: "bash".into(),
            summary: "bash rm notes.txt".into(),
            reasons: vec!["deletes a file".into()],
            preview: None,
            rules: vec![],
            sandbox: None,
        };
        AgentEvent::PermissionRequested { id: 1, request }
    }

    fn form() -> AgentEvent {
        let request = InputRequest {
            source: "MCP server `demo`".into(),
            message: "Which name?".into(),
            fields: vec![InputField {
                name: "name".into(),
                label: "name".into(),
                description: String::new(),
                kind: FieldKind::Text,
                required: true,
                default: None,
            }],
            url: None,
        };
        AgentEvent::InputRequested { id: 2, request }
    }

    #[test]
    fn keys_go_to_help_then_the_form_then_the_permission_dialog() {
        let mut m = model();
        assert_eq!(m.modals.front(), None);
        agent(&mut m, permission());
        assert_eq!(m.modals.front(), Some(Front::Permission));
        agent(&mut m, form());
        assert_eq!(m.modals.front(), Some(Front::Form));
        update(&mut m, key(KeyCode::F(1)));
        assert_eq!(m.modals.front(), Some(Front::Help));
        update(&mut m, key(KeyCode::Esc));
        assert_eq!(m.modals.front(), Some(Front::Form));
        // Ctrl+C cancels the form; the permission dialog is in front again.
        update(&mut m, ctrl('c'));
        assert_eq!(m.modals.front(), Some(Front::Permission));
        let cmds = update(&mut m, key(KeyCode::Char('a')));
        assert!(format!("{cmds:?}").contains("PermissionReply"), "{cmds:?}");
        assert!(m.modals.is_empty());
    }
}
