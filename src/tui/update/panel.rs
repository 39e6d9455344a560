//! Keys for the topmost panel, and carrying out what the panel asked for.

use crossterm::event::{KeyCode, KeyEvent};

use crate::tui::keys::{Action, KeyMap};
use crate::tui::panels::help::HelpState;

use crate::protocol::{RewindTo, SessionRequest};
use crate::tui::cmd::Cmd;
use crate::tui::model::{Model, Overlay};
use crate::tui::panels::{self, BrowserAction, PanelAction};
use crate::tui::slash::{self, Slash};

/// The panel is taken off the stack while it handles the key (so what it
/// asks for may change the model) and put back unless it closed.
pub fn on_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    let Some(Overlay::Panel(mut panel)) = model.modals.overlays.pop() else {
        return Vec::new();
    };
    if asks_for_keys(&model.keys, &key, panel.typing()) {
        let help = HelpState::for_scopes(panel.help_scopes());
        model.modals.overlays.push(Overlay::Panel(panel));
        model.modals.overlays.push(Overlay::Help(help));
        return Vec::new();
    }
    let out = panel.handle_key(key, &model.keys);
    let mut keep = out.keep;
    let cmds = apply(model, out.action, &mut keep);
    if keep {
        model.modals.overlays.push(Overlay::Panel(panel));
    }
    cmds
}

/// `?` (unless it is being typed into a field) or F1: a dialog's keys.
pub fn asks_for_keys(keys: &KeyMap, key: &KeyEvent, typing: bool) -> bool {
    keys.is(Action::DialogKeys, key) && !(typing && matches!(key.code, KeyCode::Char(_)))
}

fn apply(model: &mut Model, action: PanelAction, keep: &mut bool) -> Vec<Cmd> {
    match action {
        PanelAction::None => Vec::new(),
        PanelAction::Command(name) => slash::run_slash(model, &format!("/{name}")),
        PanelAction::TypeCommand(name) => {
            model.input.set_text(&format!("/{name} "));
            Vec::new()
        }
        PanelAction::InsertFile(path) => {
            replace_mention(model, &format!("@{path} "));
            Vec::new()
        }
        PanelAction::TypedMention(query) => {
            replace_mention(model, &format!("@{query}"));
            Vec::new()
        }
        PanelAction::Model(id) => slash::run(model, Slash::Model(Some(id))),
        PanelAction::Mode(mode) => slash::run(model, Slash::Mode(Some(mode))),
        PanelAction::PreviewTheme(name) => slash::set_theme(model, &name, false),
        PanelAction::ChooseTheme(name) => slash::set_theme(model, &name, true),
        PanelAction::Browser(action) => browser(model, action, keep),
        PanelAction::Agent(cmd) => vec![Cmd::Send(cmd)],
        PanelAction::Session(req) => vec![Cmd::Session(req)],
        PanelAction::RewindStored {
            session,
            message,
            in_place,
        } => vec![Cmd::Session(SessionRequest::Rewind {
            to: RewindTo {
                id: session,
                message,
                in_place,
            },
            current: model.session.clone(),
            workspace: model.cwd.clone(),
        })],
        PanelAction::RestoreFiles { versions, from } => {
            vec![Cmd::Session(SessionRequest::RestoreFiles {
                versions,
                from,
            })]
        }
    }
}

/// The `@…` word the prompt ends with, without its `@`: what the file
/// picker starts filtered by. `None` when the prompt does not end with one.
pub fn typed_mention(text: &str) -> Option<&str> {
    let word = text.rsplit(char::is_whitespace).next()?;
    word.strip_prefix('@')
}

/// Puts `with` in place of the `@…` word the prompt ends with (or after
/// the prompt when it ends with none).
fn replace_mention(model: &mut Model, with: &str) {
    let mut text = model.input.text();
    match typed_mention(&text) {
        Some(word) => {
            let cut = text.len() - word.len() - 1;
            text.truncate(cut);
        }
        None if !(text.is_empty() || text.ends_with(char::is_whitespace)) => text.push(' '),
        None => {}
    }
    text.push_str(with);
    model.input.set_text(&text);
}

/// Resuming or rewinding waits while a turn runs: the browser stays open.
fn browser(model: &mut Model, action: BrowserAction, keep: &mut bool) -> Vec<Cmd> {
    if matches!(action, BrowserAction::Resume(_) | BrowserAction::Rewind(_)) && model.turn_running {
        model.flash("Resuming waits until the agent is idle (Esc stops it)");
        *keep = true;
        return Vec::new();
    }
    panels::sessions::commands(action, model.session.as_ref())
}

/// Closes every overlay (Ctrl+C); a theme being previewed goes back to
/// the one in use before.
pub fn close_all(model: &mut Model) -> Vec<Cmd> {
    let mut cmds = Vec::new();
    while let Some(overlay) = model.modals.overlays.pop() {
        if let Overlay::Panel(p) = overlay
            && let panels::Panel::Themes { original, .. } = *p
        {
            cmds.extend(slash::set_theme(model, &original, false));
        }
    }
    cmds
}

/// Keys for the help overlay; any key it does not scroll with closes it.
pub fn help_key(model: &mut Model, key: KeyEvent) {
    let keys = model.keys.clone();
    if let Some(Overlay::Help(state)) = model.modals.overlays.last_mut()
        && !panels::help::handle_key(state, key, &keys)
    {
        model.modals.overlays.pop();
    }
}
