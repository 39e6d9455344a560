//! The full-screen interface, Elm-style: all state in `model::Model`,
//! every input a `msg::Msg`, `update` changes the model and returns
//! `cmd::Cmd`s, `view` draws it, and only `runtime` does I/O (it runs the
//! effects and the event loop; `render` owns the terminal). Dialogs live in
//! `panels/` behind one modal container, drawing pieces in `widgets/`, the
//! slash commands in `commands/` (catalogue, parser, completion) and
//! `slash/` (running them), the one key table in `keys/`. The interface
//! speaks to the agent only through `AgentCommand` and `AgentEvent`.

pub mod cmd;
pub mod commands;
pub mod exit_text;
pub mod fuzzy;
pub mod highlight;
pub mod history;
pub mod jobs;
pub mod keys;
pub mod markdown;
pub mod model;
pub mod msg;
pub mod panels;
pub mod render;
pub mod runtime;
pub mod sandbox_view;
pub mod setup;
pub mod slash;
pub mod styles;
pub mod theme;
pub mod trust;
pub mod update;
pub mod view;
pub mod widgets;
pub mod wrap;

use std::path::PathBuf;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::permission::Mode;
use crate::protocol::{AgentCommand, AgentEvent, NoticeLevel};

pub use keys::KeyConfig;

/// What the interface starts with.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// The person's own slash commands (`crate::extensions::commands`).
    pub commands: crate::extensions::commands::Catalogue,
    /// How long a permission dialog that appears just after a key press
    /// takes no answer (letters typed then go into the prompt).
    pub dialog_pause: std::time::Duration,
    pub provider: String,
    pub model: String,
    pub mode: Mode,
    pub cwd: PathBuf,
    pub git_branch: Option<String>,
    pub context_window: u64,
    /// Theme name (`dark`, `light`, `high-contrast`, or a user theme).
    pub theme: String,
    /// `[ui] colors`: the colour depth the person forced, if any.
    pub colors: Option<crate::config::ui::Colors>,
    /// Where user themes live (`<config>/themes`), if anywhere.
    pub theme_dir: Option<PathBuf>,
    /// Shown in the empty transcript when no provider is configured.
    pub first_run_help: Option<String>,
    /// Per-project prompt history (JSON lines).
    pub history_file: Option<PathBuf>,
    /// `[keys]` overrides from the config.
    pub keys: KeyConfig,
    /// The sessions service, MCP and config paths effects run with.
    pub handles: runtime::Handles,
    /// A resumed session, drawn as the starting transcript.
    pub resumed: Option<crate::protocol::LoadedSession>,
    /// Shown as notices at start (e.g. the store could not be opened).
    pub notices: Vec<(NoticeLevel, String)>,
    /// Open the session browser at start (`cairn --resume` without an id).
    pub open_sessions: bool,
    /// The sandbox commands run in.
    pub sandbox: sandbox_view::SandboxView,
    /// The resumed session is open in another cairn: prompts are refused.
    pub read_only: bool,
    /// `[ui] notify`: how to get attention while the terminal is unfocused.
    pub notify: crate::config::ui::Notify,
    /// `[ui] on_exit`: what is printed to the normal screen after quitting.
    pub on_exit: crate::config::ui::OnExit,
    /// `cairn "PROMPT"`: sent at start as if typed and entered.
    pub initial_prompt: Option<String>,
}

/// Runs the full-screen interface until the person quits. The interface
/// only sends `AgentCommand`s and reads `AgentEvent`s.
pub async fn run(
    opts: TuiOptions,
    commands: UnboundedSender<AgentCommand>,
    events: UnboundedReceiver<AgentEvent>,
) -> anyhow::Result<()> {
    let mut handles = opts.handles.clone();
    handles.history_file = opts.history_file.clone();
    let open_sessions = opts.open_sessions;
    let initial_prompt = opts.initial_prompt.clone();
    let mut model = build_model(opts);
    // Under GNU screen the mouse starts off, so Esc reaches cairn alone
    // (the status line says so, and how to turn it back on).
    if render::terminal::holds_lone_esc() {
        model.mouse_captured = false;
    }
    let mut startup = if open_sessions {
        model.now_ms = chrono::Utc::now().timestamp_millis();
        slash::open_sessions(&mut model)
    } else {
        Vec::new()
    };
    if let Some(prompt) = initial_prompt.filter(|p| !p.trim().is_empty()) {
        model.input.set_text(&prompt);
        let enter = crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Enter,
            crossterm::event::KeyModifiers::NONE,
        );
        startup.extend(update::update(&mut model, msg::Msg::Key(enter)));
    }
    runtime::run_loop(model, commands, events, handles, startup).await
}

/// The starting model for `opts`; theme and key problems become notices.
pub fn build_model(opts: TuiOptions) -> model::Model {
    let mut problems = Vec::new();
    let themes = theme::Themes::load(
        opts.theme_dir.as_deref(),
        theme::detect_color_depth(opts.colors),
    );
    let name = if opts.theme.is_empty() {
        "dark"
    } else {
        opts.theme.as_str()
    };
    let theme = match themes.get(name) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("theme `{name}`: {e}; using the default theme"));
            themes.fallback()
        }
    };
    let mut m = model::Model::new(opts.provider, opts.model, opts.mode, opts.cwd, theme);
    m.themes = themes;
    m.theme_chosen = !opts.theme.is_empty();
    m.dialog_pause = opts.dialog_pause;
    m.sandbox = opts.sandbox.clone();
    m.mcp_servers = opts.handles.mcp_server_names();
    let (custom, clashes) = commands::custom_entries(&opts.commands);
    m.custom_commands = custom;
    problems.extend(clashes);
    if let Some(loaded) = &opts.resumed {
        history::show(&mut m, loaded);
    }

    m.styles = styles::Styles::from_theme(&m.theme);
    m.git_branch = opts.git_branch;
    m.usage.context_window = opts.context_window;
    m.first_run_help = opts.first_run_help;
    m.read_only = opts.read_only;
    m.notify = opts.notify;
    m.on_exit = opts.on_exit;
    let history = opts
        .history_file
        .as_deref()
        .map(runtime::load_history)
        .unwrap_or_default();
    m.input = widgets::input::PromptInput::new(history);
    let (keys, key_problems) = keys::KeyMap::with_overrides(&opts.keys);
    m.keys = keys;
    problems.extend(key_problems);
    for p in problems {
        m.notice(NoticeLevel::Warning, p);
    }
    for (level, text) in opts.notices {
        m.notice(level, text);
    }
    m
}

#[cfg(test)]
mod grapheme_tests;
#[cfg(test)]
mod overlay_tests;
#[cfg(test)]
mod prompt_tests;
#[cfg(test)]
mod sandbox_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod update_tests;
#[cfg(test)]
mod view_tests;
