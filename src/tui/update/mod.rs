//! `update(&mut Model, Msg) -> Vec<Cmd>`: every state change, no I/O. A key
//! goes first to the dialog in front (`modal`), else to the prompt or the
//! transcript; agent events (`agent`), session replies (`session`) and the
//! prompt (`prompt`, `type_ahead`) each have their file.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use crate::permission::Mode;
use crate::protocol::{AgentCommand, NoticeLevel};
use crate::tui::cmd::Cmd;
use crate::tui::keys::{Action, KeyMap};
use crate::tui::markdown;
use crate::tui::model::{Focus, Model, Overlay};
use crate::tui::msg::Msg;
use crate::tui::slash;
mod agent;
mod modal;
mod panel;
mod pictures;
mod prompt;
mod session;
mod shell;
mod type_ahead;

use crate::tui::widgets::cell::CellKind;
use agent::agent_event;
pub use agent::settle_activity;
pub use pictures::chips as picture_chips;
use prompt::{interrupt, prompt_key};

/// A second Ctrl+C within this long quits.
pub const DOUBLE_INTERRUPT: Duration = Duration::from_millis(1500);
const WHEEL_ROWS: i64 = 3;
/// How to select text with the terminal while cairn captures the mouse.
pub const SELECT_HINT: &str =
    "To select text, hold Shift while dragging (Option in iTerm2), or press F2 to free the mouse";

pub fn update(model: &mut Model, msg: Msg) -> Vec<Cmd> {
    let cmds = handle(model, msg);
    crate::tui::jobs::refresh_panel(model);
    cmds
}

fn handle(model: &mut Model, msg: Msg) -> Vec<Cmd> {
    match msg {
        Msg::Key(key) if key.kind == KeyEventKind::Release => Vec::new(),
        Msg::Key(key) => on_key(model, key),
        Msg::Paste(text) => {
            if let Some(d) = model.modals.permissions.front_mut() {
                if let Some(reason) = &mut d.deny_reason {
                    reason.push_str(&text.replace(['\n', '\r'], " "));
                }
            } else if model.modals.overlays.is_empty() {
                model.focus = Focus::Prompt;
                if let Some(read) = pictures::pasted_path(&text) {
                    return vec![read];
                }
                model.input.paste(&text);
            }
            Vec::new()
        }
        Msg::Image(result) => {
            pictures::arrived(model, result);
            Vec::new()
        }
        Msg::Mouse(m) => on_mouse(model, m),
        Msg::Resize { .. } => Vec::new(),
        Msg::Focus(on) => {
            model.focused = on;
            Vec::new()
        }
        Msg::Tick(now) => {
            model.now = now;
            if model.flash.as_ref().is_some_and(|f| f.1 <= now) {
                model.flash = None;
            }
            if !model.highlight_seen && crate::tui::highlight::is_ready() {
                // Code drawn plain while highlighting loaded gets its colours.
                model.highlight_seen = true;
                model.transcript.invalidate();
            }
            let n = model.transcript.len();
            // Only the current turn's cells can be animated.
            for i in (n.saturating_sub(64)..n).rev() {
                if model.transcript.cells()[i].is_animated() {
                    model.transcript.refresh(i);
                }
            }
            Vec::new()
        }
        Msg::EditorClosed(Ok(text)) => {
            model.input.set_text(text.trim_end_matches('\n'));
            Vec::new()
        }
        Msg::EditorClosed(Err(e)) => {
            notice(model, NoticeLevel::Error, format!("editor: {e}"));
            Vec::new()
        }
        Msg::Agent(ev) => agent_event(model, ev),
        Msg::Session(reply) => session::session_reply(model, reply),
        Msg::Files(files) => session::files(model, files),
        Msg::Sandbox(view) => {
            model.sandbox = view;
            Vec::new()
        }
        Msg::Text { title, text } => session::text(model, title, text),
        Msg::SubmitPrompt(text) => session::submit_prompt(model, text),
        Msg::CustomCommands(entries) => {
            model.custom_commands = entries;
            Vec::new()
        }
        Msg::McpPrompts(prompts) => {
            model.mcp_prompts = prompts;
            Vec::new()
        }
        Msg::Notice(level, text) => {
            notice(model, level, text);
            Vec::new()
        }
        Msg::Terminal(facts) => terminal_facts(model, facts),
        Msg::Copied { system } => {
            // OSC 52 has no answer: only the system clipboard is known to
            // have taken the text.
            if let Some(what) = model.copying.take() {
                model.flash(if system {
                    format!("copied {what}")
                } else {
                    format!("{what} sent to the terminal (OSC 52)")
                });
            }
            Vec::new()
        }
        Msg::AgentGone => {
            model.agent_gone = true;
            model.turn_running = false;
            model.activity = crate::tui::model::Activity::Idle;
            notice(
                model,
                NoticeLevel::Error,
                "The agent stopped; nothing more can be sent. Ctrl+C quits.".into(),
            );
            Vec::new()
        }
    }
}

/// The terminal answered: a theme nobody chose follows its background,
/// and a chosen one is redrawn for it (a dark theme paints its canvas on a
/// light terminal).
fn terminal_facts(model: &mut Model, facts: crate::tui::msg::TerminalFacts) -> Vec<Cmd> {
    model.themes.set_background(facts.background);
    let name = if model.theme_chosen {
        model.theme.name.clone()
    } else {
        model.themes.automatic().to_string()
    };
    let newline = if facts.enhanced_keys {
        crate::tui::widgets::input::NEWLINE_KEY
    } else {
        crate::tui::widgets::input::NEWLINE_KEY_PLAIN
    };
    model.input.set_newline_key(newline);
    model.terminal = facts;
    slash::set_theme(model, &name, false)
}

pub fn notice(model: &mut Model, level: NoticeLevel, text: String) {
    model.notice(level, text);
}

fn on_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    model.last_key = Some(model.now);
    let keys = model.keys.clone();
    if keys.is(Action::Interrupt, &key) {
        return interrupt(model);
    }
    if let Some(cmds) = modal::on_key(model, key) {
        return cmds;
    }
    if model.focus == Focus::Prompt
        && let Some(cmds) = prompt::menu_key(model, key)
    {
        return cmds;
    }
    if let Some(cmds) = global_key(model, &keys, key) {
        return cmds;
    }
    if keys.is(Action::Cancel, &key) {
        return cancel(model);
    }
    match model.focus {
        Focus::Transcript => transcript_key(model, key),
        Focus::Prompt => prompt_key(model, key),
    }
}

/// Keys that do the same wherever the focus is; `None` when `key` is not
/// one of them.
fn global_key(model: &mut Model, keys: &KeyMap, key: KeyEvent) -> Option<Vec<Cmd>> {
    let is = |a| keys.is(a, &key);
    let cmds = if is(Action::Help) {
        model.modals.overlays.push(Overlay::Help(
            crate::tui::panels::help::HelpState::with_custom(
                &model.custom_commands,
                &model.mcp_prompts,
            ),
        ));
        Vec::new()
    } else if is(Action::ToggleMouse) {
        model.mouse_captured = !model.mouse_captured;
        vec![Cmd::SetMouseCapture(model.mouse_captured)]
    } else if is(Action::CycleMode) {
        let i = Mode::ALL.iter().position(|m| *m == model.mode).unwrap_or(0);
        let next = Mode::ALL[(i + 1) % Mode::ALL.len()];
        model.mode = next;
        vec![Cmd::Send(AgentCommand::SetMode(next))]
    } else if is(Action::ScrollUp) {
        model.transcript.scroll_page(-1);
        Vec::new()
    } else if is(Action::ScrollDown) {
        model.transcript.scroll_page(1);
        Vec::new()
    } else if is(Action::ScrollTop) {
        model.transcript.to_top();
        Vec::new()
    } else if is(Action::ScrollBottom) {
        model.transcript.to_bottom();
        Vec::new()
    } else if is(Action::FocusTranscript) {
        let other = if model.focus == Focus::Prompt {
            Focus::Transcript
        } else {
            Focus::Prompt
        };
        set_focus(model, other);
        Vec::new()
    } else if is(Action::Palette) {
        model.open_panel(slash::palette(""));
        Vec::new()
    } else if is(Action::Sessions) {
        slash::open_sessions(model)
    } else {
        return None;
    };
    Some(cmds)
}

/// Esc: stops the turn, leaves the transcript, or (twice on an idle,
/// empty prompt) opens the rewind picker.
fn cancel(model: &mut Model) -> Vec<Cmd> {
    if model.turn_running {
        return vec![Cmd::Send(AgentCommand::Cancel)];
    }
    if model.focus == Focus::Transcript {
        set_focus(model, Focus::Prompt);
        return Vec::new();
    }
    let now = model.now;
    let twice = model
        .last_idle_esc
        .is_some_and(|t| now.saturating_duration_since(t) < DOUBLE_INTERRUPT);
    if twice && model.input.is_empty() {
        model.last_idle_esc = None;
        return slash::open_rewind(model);
    }
    model.last_idle_esc = Some(now);
    Vec::new()
}

fn set_focus(model: &mut Model, focus: Focus) {
    model.focus = focus;
    match focus {
        Focus::Transcript => {
            let last = model.transcript.len().checked_sub(1);
            model.transcript.select(model.transcript.selected.or(last));
        }
        Focus::Prompt => model.transcript.select(None),
    }
}

fn transcript_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    let keys = model.keys.clone();
    let n = model.transcript.len();
    let sel = model.transcript.selected;
    if keys.is(Action::SelectPrev, &key) {
        model.transcript.select(Some(
            sel.map_or(n.saturating_sub(1), |s| s.saturating_sub(1)),
        ));
    } else if keys.is(Action::SelectNext, &key) {
        model
            .transcript
            .select(Some(sel.map_or(0, |s| (s + 1).min(n.saturating_sub(1)))));
    } else if keys.is(Action::SelectFirst, &key) {
        model.transcript.select(Some(0));
    } else if keys.is(Action::SelectLast, &key) {
        model.transcript.select(n.checked_sub(1));
    } else if keys.is(Action::ToggleExpand, &key) {
        // A sub-agent's pane: the first press lists its calls in place,
        // the next opens its whole transcript (and folds the pane again).
        let sub_agent = sel
            .and_then(|s| model.transcript.cells().get(s))
            .and_then(|c| match &c.kind {
                CellKind::Tool(t) if t.name == "agent" && c.expanded => Some(t.call_id.clone()),
                _ => None,
            });
        if let Some(call_id) = sub_agent
            && agent::subagents::open(model, &call_id)
        {
            if let Some(c) = sel.and_then(|s| model.transcript.get_mut(s)) {
                c.expanded = false;
            }
            return Vec::new();
        }
        if let Some(c) = sel.and_then(|s| model.transcript.get_mut(s)) {
            c.expanded = !c.expanded;
        }
        model.transcript.select(sel);
    } else if keys.is(Action::CopyMessage, &key) {
        if let Some(text) = sel
            .and_then(|s| model.transcript.cells().get(s))
            .map(|c| c.copy_text())
        {
            model.copying = Some(format!("{} characters", text.chars().count()));
            return vec![Cmd::CopyToClipboard(text)];
        }
    } else if keys.is(Action::CopyCode, &key) {
        return copy_code(model);
    } else if keys.is(Action::ViewDiff, &key) {
        let diff = sel
            .and_then(|s| model.transcript.cells().get(s))
            .and_then(|c| match &c.kind {
                CellKind::Tool(t) => t.display.clone(),
                _ => None,
            });
        // A rename's files: the first (the cell shows them all).
        match diff.as_ref().and_then(|d| d.diffs().first()) {
            Some(d) => model.open_panel(crate::tui::panels::diff_panel(&d.path, &d.old, &d.new)),
            None => model.flash("The selected cell has no diff"),
        }
    } else if let KeyCode::Char(_) = key.code {
        // Typing goes to the prompt.
        if !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            set_focus(model, Focus::Prompt);
            return prompt_key(model, key);
        }
    }
    Vec::new()
}

/// Copies the next code block of the selected answer (or the last answer).
fn copy_code(model: &mut Model) -> Vec<Cmd> {
    let cells = model.transcript.cells();
    let is_answer = |i: &usize| matches!(cells[*i].kind, CellKind::Assistant(_));
    let target = model
        .transcript
        .selected
        .filter(|i| *i < cells.len() && is_answer(i))
        .or_else(|| (0..cells.len()).rev().find(is_answer));
    let Some(i) = target else {
        model.flash("no answer with code to copy");
        return Vec::new();
    };
    let CellKind::Assistant(a) = &cells[i].kind else {
        return Vec::new();
    };
    let blocks = markdown::code_blocks(&a.text);
    if blocks.is_empty() {
        model.flash("that answer has no code block");
        return Vec::new();
    }
    let next = if model.code_cursor.0 == i {
        (model.code_cursor.1 + 1) % blocks.len()
    } else {
        0
    };
    model.code_cursor = (i, next);
    let code = blocks[next].code.clone();
    model.copying = Some(format!(
        "code block {} of {} ({} lines)",
        next + 1,
        blocks.len(),
        code.lines().count()
    ));
    vec![Cmd::CopyToClipboard(code)]
}

fn on_mouse(model: &mut Model, m: MouseEvent) -> Vec<Cmd> {
    let delta = match m.kind {
        MouseEventKind::ScrollUp => -WHEEL_ROWS,
        MouseEventKind::ScrollDown => WHEEL_ROWS,
        // Dragging to select while cairn holds the mouse selects nothing:
        // say how the terminal selects anyway.
        MouseEventKind::Drag(_) => {
            model.flash(SELECT_HINT);
            return Vec::new();
        }
        _ => return Vec::new(),
    };
    if let Some(Overlay::Help(help)) = model.modals.overlays.last_mut() {
        help.scroll = help.scroll.saturating_add_signed(delta as i16);
    } else if let Some(d) = model.modals.permissions.front_mut() {
        d.scroll = d.scroll.saturating_add_signed(delta as isize);
    } else {
        model.transcript.scroll(delta);
    }
    Vec::new()
}
