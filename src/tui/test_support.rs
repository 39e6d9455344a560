//! Helpers for the interface's unit and snapshot tests.

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::permission::Mode;
use crate::protocol::AgentEvent;
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;
use crate::tui::msg::Msg;
use crate::tui::theme::Theme;
use crate::tui::update::update;

pub fn model() -> Model {
    crate::tui::highlight::ensure_loaded();
    let mut m = Model::new(
        "anthropic".into(),
        "claude-sonnet".into(),
        Mode::Smart,
        PathBuf::from("/work/project"),
        Theme::default(),
    );
    m.git_branch = Some("main".into());
    m.usage.context_window = 200_000;
    m.now = Instant::now();
    // Tests answer a dialog the moment it opens (the pause has its own test).
    m.dialog_pause = std::time::Duration::ZERO;
    // Highlighting is loaded above, before anything was drawn.
    m.highlight_seen = true;
    m
}

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub fn shift(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::SHIFT))
}

pub fn type_text(m: &mut Model, text: &str) {
    for c in text.chars() {
        update(m, key(KeyCode::Char(c)));
    }
}

pub fn agent(m: &mut Model, ev: AgentEvent) -> Vec<Cmd> {
    update(m, Msg::Agent(ev))
}

/// The screen `view` draws at `w`×`h`, as text.
pub fn draw_text(m: &mut Model, w: u16, h: u16) -> String {
    let mut t =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("a test terminal");
    t.draw(|f| crate::tui::view::view(m, f))
        .expect("drawing on a test terminal");
    t.backend().to_string()
}
