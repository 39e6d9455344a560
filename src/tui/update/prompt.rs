//! Keys in the prompt: sending, `/` commands with their completion menu,
//! readline editing, and Ctrl+C.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::protocol::{AgentCommand, NoticeLevel};
use crate::tui::cmd::Cmd;
use crate::tui::commands::{MenuState, complete};
use crate::tui::keys::Action;
use crate::tui::model::{Model, Overlay};
use crate::tui::slash::{self, menu};

use super::{DOUBLE_INTERRUPT, notice};

/// Keys the open `/` menu takes (arrows, Tab, Esc); `None` for the others.
pub fn menu_key(model: &mut Model, key: KeyEvent) -> Option<Vec<Cmd>> {
    let menu = menu(model)?;
    let keys = &model.keys;
    let n = menu.items.len();
    let state = &mut model.slash_menu;
    if keys.is(Action::MenuPrev, &key) {
        state.selected = (state.selected + n - 1) % n;
        state.moved = true;
    } else if keys.is(Action::MenuNext, &key) {
        state.selected = (state.selected + 1) % n;
        state.moved = true;
    } else if keys.is(Action::MenuClose, &key) {
        state.hidden = true;
    } else if keys.is(Action::Complete, &key) {
        let pick = &menu.items[state.selected.min(n - 1)];
        let text = complete::complete(&model.input.text(), &menu, pick);
        model.input.set_text(&text);
        model.slash_menu = MenuState::default();
    } else {
        return None;
    }
    Some(Vec::new())
}

pub fn prompt_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    if key.code == KeyCode::Backspace
        && key.modifiers.is_empty()
        && super::pictures::remove_last(model)
    {
        return Vec::new();
    }
    let keys = &model.keys;
    if keys.is(Action::Submit, &key) {
        return submit(model);
    }
    if keys.is(Action::Newline, &key) {
        model.input.newline();
        return Vec::new();
    }
    if keys.is(Action::OpenEditor, &key) {
        return vec![Cmd::OpenEditor(model.input.text())];
    }
    if keys.is(Action::PasteImage, &key) {
        return vec![Cmd::ReadImage(crate::tui::cmd::ImageSource::Clipboard)];
    }

    if keys.is(Action::HistoryPrev, &key)
        && model.input.cursor_on_first_line()
        && model.input.history_prev()
    {
        return Vec::new();
    }
    if keys.is(Action::HistoryNext, &key)
        && model.input.cursor_on_last_line()
        && model.input.history_next()
    {
        return Vec::new();
    }
    if key.code == KeyCode::Char('@')
        && !key.modifiers.contains(KeyModifiers::CONTROL)
        && starts_word(model)
    {
        // The `@` is typed at once, so keys pressed before the picker
        // opens are not lost; the picker then completes the word.
        model.input.key(key);
        return vec![Cmd::ListFiles];
    }
    if key.code == KeyCode::Char('?') && model.input.is_empty() {
        model.modals.overlays.push(Overlay::Help(
            crate::tui::panels::help::HelpState::with_custom(
                &model.custom_commands,
                &model.mcp_prompts,
            ),
        ));
        return Vec::new();
    }
    let before = model.input.shown_text();
    if !readline_key(model, key) {
        model.input.key(key);
    }
    if model.input.shown_text() != before {
        model.slash_menu = MenuState::default();
        // The `/` menu opens: the person's commands and skills are read
        // again, so one made during the session is in it.
        if before.is_empty() && model.input.text() == "/" {
            return vec![Cmd::ReloadCommands];
        }
        return titles_request(model);
    }
    Vec::new()
}

/// Asks for this project's sessions when the person starts typing a
/// title after `/resume ` (or `/sessions `), to complete it.
fn titles_request(model: &Model) -> Vec<Cmd> {
    let text = model.input.text();
    if text != "/resume " && text != "/sessions " {
        return Vec::new();
    }
    vec![Cmd::Session(crate::protocol::SessionRequest::Query {
        text: String::new(),
        all_projects: false,
        offset: 0,
    })]
}

/// A page of the session list arrived: its titles complete `/resume`.
pub fn remember_titles(model: &mut Model, entries: &[crate::protocol::SessionEntry]) {
    model.session_titles = entries
        .iter()
        .map(|e| {
            let label = if e.title.is_empty() {
                &e.first_prompt
            } else {
                &e.title
            };
            (e.id.clone(), label.clone())
        })
        .filter(|(_, t)| !t.is_empty())
        .collect();
}

/// An `@` typed here would start a word (not an address's `@`).
fn starts_word(model: &Model) -> bool {
    let text = model.input.shown_text();
    let (row, col) = model.input.cursor();
    let line = text.lines().nth(row).unwrap_or("");
    line.chars()
        .nth(col.wrapping_sub(1))
        .is_none_or(char::is_whitespace)
}

/// The line-editing keys of the key table; false for other keys.
fn readline_key(model: &mut Model, key: KeyEvent) -> bool {
    let keys = &model.keys;
    if keys.is(Action::DeleteToStart, &key) {
        model.input.delete_to_start();
    } else if keys.is(Action::DeleteToEnd, &key) {
        model.input.delete_to_end();
    } else if keys.is(Action::DeleteWordBack, &key) {
        model.input.delete_word_back();
    } else if keys.is(Action::Undo, &key) {
        model.input.undo();
    } else {
        return false;
    }
    true
}

pub fn submit(model: &mut Model) -> Vec<Cmd> {
    if model.input.text().trim().is_empty() && model.images.is_empty() {
        return Vec::new();
    }
    if model.agent_gone {
        notice(
            model,
            NoticeLevel::Error,
            "The agent stopped; the prompt was not sent.".into(),
        );
        return Vec::new();
    }
    let typed = model.input.text();
    let menu = menu(model);
    let picked = menu.as_ref().and_then(|m| {
        let bare = typed.trim() == "/";
        (!bare || model.slash_menu.moved).then(|| m.items.get(model.slash_menu.selected))?
    });
    match complete::on_enter(&typed, menu.as_ref(), picked) {
        complete::Enter::Run(line) => run_command(model, &line),
        complete::Enter::Fill(text) => {
            model.input.set_text(&text);
            model.slash_menu = MenuState::default();
            Vec::new()
        }
        complete::Enter::Prompt => send(model),
        complete::Enter::Send(text) => {
            model.input.set_text(&text);
            send(model)
        }
    }
}

/// Runs a typed command line; one that does not parse stays in the
/// prompt to fix, with the reason above it.
fn run_command(model: &mut Model, line: &str) -> Vec<Cmd> {
    match slash::parse(line) {
        Ok(command) => {
            model.input.take();
            model.slash_menu = MenuState::default();
            slash::run(model, command)
        }
        Err(why) => {
            model.flash(why);
            Vec::new()
        }
    }
}

fn send(model: &mut Model) -> Vec<Cmd> {
    if model.read_only {
        return read_only_refusal(model);
    }
    if let Some(cmds) = super::shell::shell_line(model) {
        return cmds;
    }
    let (text, shown) = model.input.take_shown();
    if let Some(shown) = shown {
        model.folded_prompts.push((text.clone(), shown));
    }
    model.slash_menu = MenuState::default();
    model.transcript.to_bottom();
    if model.turn_running {
        model.queued.push_back(text.clone());
    }
    let images = std::mem::take(&mut model.images);
    vec![
        Cmd::Send(AgentCommand::Submit {
            text: text.clone(),
            images: images.into_iter().map(|(image, _)| image).collect(),
        }),
        Cmd::AppendHistory(text),
    ]
}

/// A read-only session sends nothing: the prompt stays in the input.
fn read_only_refusal(model: &mut Model) -> Vec<Cmd> {
    notice(
        model,
        NoticeLevel::Warning,
        "Not sent: this session is open in another cairn, so here it is read-only. \
         Fork it from the browser (Ctrl+S, then Enter and f) or start a new one with /new; \
         the prompt stays in the input."
            .into(),
    );
    model.transcript.to_bottom();
    Vec::new()
}

/// Ctrl+C: closes what is open, else stops the turn, else empties the
/// prompt; only on an empty, idle prompt does it arm quitting, and a
/// second press then quits.
pub fn interrupt(model: &mut Model) -> Vec<Cmd> {
    if model.agent_gone {
        model.should_quit = true;
        return vec![Cmd::Quit];
    }
    if !model.modals.overlays.is_empty() {
        model.last_interrupt = None;
        return super::panel::close_all(model);
    }
    // A server's question waiting: Ctrl+C cancels it, as the form says.
    if let Some(form) = model.modals.forms.pop_front() {
        let answer = crate::tools::input::InputAnswer::Cancel;
        let id = form.id;
        return vec![Cmd::Send(AgentCommand::InputReply { id, answer })];
    }
    if model.turn_running {
        model.last_interrupt = None;
        model.flash("Stopping the turn");
        return vec![Cmd::Send(AgentCommand::Cancel)];
    }
    if !model.input.is_empty() {
        model.last_interrupt = None;
        model.input.clear_undoable();
        model.slash_menu = MenuState::default();
        let undo = model.keys.keys_for(Action::Undo);
        let undo = undo.split(" / ").next().unwrap_or("undo").to_string();
        model.flash(format!("Prompt cleared ({undo} brings it back)"));
        return Vec::new();
    }
    let now = model.now;
    let armed = model
        .last_interrupt
        .is_some_and(|t| now.saturating_duration_since(t) < DOUBLE_INTERRUPT);
    if armed {
        model.should_quit = true;
        return vec![Cmd::Quit];
    }
    model.last_interrupt = Some(now);
    model.flash("Ctrl+C again to quit");
    Vec::new()
}
