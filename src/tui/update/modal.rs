//! Keys while a dialog is open: the modal container says which one is in
//! front, and the key goes to it alone.

use crossterm::event::KeyEvent;

use super::panel::{self, asks_for_keys};
use super::{settle_activity, type_ahead};
use crate::protocol::AgentCommand;
use crate::tui::cmd::Cmd;
use crate::tui::keys::Scope;
use crate::tui::model::{Front, Model, Overlay};
use crate::tui::panels::help::HelpState;

/// What `key` did in the dialog in front; `None` when no dialog is open.
pub fn on_key(model: &mut Model, key: KeyEvent) -> Option<Vec<Cmd>> {
    let cmds = match model.modals.front()? {
        Front::Panel => panel::on_key(model, key),
        Front::Help => {
            panel::help_key(model, key);
            Vec::new()
        }
        Front::Form => form_key(model, key),
        Front::Permission => permission_key(model, key),
    };
    Some(cmds)
}

/// A server's request for input: its keys, or help on them.
fn form_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    if asks_for_keys(&model.keys, &key, true) {
        open_help(model, vec![Scope::Form, Scope::TextField]);
        return Vec::new();
    }
    let keys = model.keys.clone();
    let Some(form) = model.modals.forms.front_mut() else {
        return Vec::new();
    };
    let Some(answer) = form.key(key, &keys) else {
        return Vec::new();
    };
    let id = form.id;
    model.modals.forms.pop_front();
    vec![Cmd::Send(AgentCommand::InputReply { id, answer })]
}

/// The permission dialog in front: a key typed too soon goes to the
/// prompt; otherwise its keys, or help on them.
fn permission_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    if let Some(cmds) = type_ahead::too_soon(model, key) {
        return cmds;
    }
    let keys = model.keys.clone();
    let Some(dialog) = model.modals.permissions.front_mut() else {
        return Vec::new();
    };
    if asks_for_keys(&keys, &key, dialog.deny_reason.is_some()) {
        open_help(model, vec![Scope::Dialog, Scope::TextField]);
        return Vec::new();
    }
    let Some(decision) = dialog.key(key, &keys) else {
        return match dialog.recheck.take() {
            Some(rejected) => vec![Cmd::Send(AgentCommand::RecheckEdit {
                id: dialog.id,
                rejected,
            })],
            None => Vec::new(),
        };
    };
    let id = dialog.id;
    model.modals.permissions.pop_front();
    settle_activity(model);
    vec![Cmd::Send(AgentCommand::PermissionReply { id, decision })]
}

fn open_help(model: &mut Model, scopes: Vec<Scope>) {
    let help = HelpState::for_scopes(scopes);
    model.modals.overlays.push(Overlay::Help(help));
}
