//! All interface state. No channels, no I/O: `update` changes it, `view`
//! draws it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

use crate::permission::Mode;
use crate::tools::state::Todo;
use crate::tui::keys::KeyMap;
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::input::PromptInput;
use crate::tui::widgets::transcript::Transcript;

pub use crate::tui::widgets::status_bar::{Activity, UsageInfo};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Prompt,
    Transcript,
}

pub use crate::tui::panels::modals::{Front, Modals, Overlay};

pub struct Model {
    pub provider: String,
    pub model: String,
    pub mode: Mode,
    pub cwd: PathBuf,
    pub git_branch: Option<String>,
    pub usage: UsageInfo,
    pub theme: Theme,
    pub styles: Styles,
    pub keys: KeyMap,
    pub transcript: Transcript,
    pub input: PromptInput,
    /// Every dialog open or waiting: who gets a key, what is drawn on top.
    pub modals: Modals,
    pub focus: Focus,
    pub activity: Activity,
    pub turn_running: bool,
    /// Prompts sent while a turn ran, shown until their turn starts.
    pub queued: VecDeque<String>,
    pub todos: Vec<Todo>,
    pub mouse_captured: bool,
    pub last_interrupt: Option<Instant>,
    /// When the person last pressed a key (a dialog opening right after
    /// one takes no answer at once).
    pub last_key: Option<Instant>,
    /// How long such a dialog takes no answer.
    pub dialog_pause: std::time::Duration,
    /// Where the current response's cells begin (for `ResponseReset`).
    pub response_start: Option<usize>,
    /// Next code block `c` copies, per selected cell.
    pub code_cursor: (usize, usize),
    pub first_run_help: Option<String>,
    pub agent_gone: bool,
    /// A short message over the prompt ("copied"), until the instant.
    pub flash: Option<(String, Instant)>,
    /// The clock `update` reads; the runtime sets it before each message.
    pub now: Instant,
    /// The wall clock in Unix milliseconds, set with `now` (session ages).
    pub now_ms: i64,
    pub should_quit: bool,
    /// The stored session being recorded, once there is one.
    pub session: Option<crate::sessions::SessionId>,
    /// Why the session store refuses writes, while it does (shown until
    /// the waiting writes are saved).
    pub store_warning: Option<String>,
    /// The session's title, once it has one.
    pub title: Option<String>,
    /// The session shown is open in another cairn: prompts are refused.
    pub read_only: bool,
    /// The terminal has focus (as far as it says: focus events).
    pub focused: bool,
    /// How to get attention when it has not (`[ui] notify`).
    pub notify: crate::config::ui::Notify,
    /// The themes to switch between by name.
    pub themes: crate::tui::theme::Themes,
    /// The person named a theme (config or `/theme`); otherwise it follows
    /// the terminal's background.
    pub theme_chosen: bool,
    /// The transcript was last rendered knowing syntax highlighting is
    /// loaded (it loads on first use; code drawn before is plain).
    pub highlight_seen: bool,
    /// What is being copied ("12 characters"), until the copy reports.
    pub copying: Option<String>,
    /// What the terminal is and answered at start.
    pub terminal: crate::tui::msg::TerminalFacts,
    /// When Esc was last pressed while idle (Esc twice rewinds).
    pub last_idle_esc: Option<Instant>,
    /// MCP servers up / starting / enabled, once any is configured.
    pub servers: Option<crate::tools::SourceHealth>,
    /// The language servers started so far and their states.
    pub language_servers: Vec<crate::protocol::ServerStatus>,
    /// The sandbox commands run in, as the status line shows it.
    pub sandbox: crate::tui::sandbox_view::SandboxView,
    /// Where the person is in the `/` completion menu.
    pub slash_menu: crate::tui::commands::MenuState,
    /// The configured MCP servers' names, for completing `/mcp restart`.
    pub mcp_servers: Vec<String>,
    /// What each sub-agent did, by the `agent` call that started it.
    pub subagents:
        std::collections::HashMap<String, crate::tui::widgets::sub_transcript::SubTranscript>,
    /// This project's recent sessions by title, for completing `/resume`.
    pub session_titles: Vec<(crate::sessions::SessionId, String)>,
    /// The person's own slash commands, for the menu and help.
    pub custom_commands: Vec<crate::tui::commands::CustomEntry>,
    /// The MCP servers' prompts (`mcp__server__prompt`), as they last said.
    pub mcp_prompts: Vec<crate::tui::commands::CustomEntry>,
    /// Pictures attached to the next prompt (pasted, or a pasted path),
    /// shown as chips over it.
    pub images: Vec<(
        crate::conversation::ImageData,
        Option<crate::images::ImageInfo>,
    )>,
    /// `!` alone: every prompt is a command of the person's own until `!`
    /// again.
    pub shell_mode: bool,
    /// The reasoning effort in force, for the status line.
    pub effort: Option<crate::config::effort::Effort>,
    /// What is printed to the normal screen after quitting.
    pub on_exit: crate::config::ui::OnExit,
    /// The session's background jobs, for the status line and `/jobs`.
    pub jobs: Vec<crate::tui::panels::jobs::JobRow>,
    /// Prompts sent with folded pastes, until their turn shows them:
    /// (the text sent, the text the prompt showed).
    pub folded_prompts: Vec<(String, String)>,
}

impl Model {
    pub fn new(provider: String, model: String, mode: Mode, cwd: PathBuf, theme: Theme) -> Self {
        Model {
            provider,
            model,
            mode,
            cwd,
            git_branch: None,
            usage: UsageInfo::default(),
            theme,
            styles: Styles::default(),
            keys: KeyMap::default(),
            transcript: Transcript::new(),
            input: PromptInput::default(),
            modals: Modals::default(),
            focus: Focus::Prompt,
            activity: Activity::Idle,
            turn_running: false,
            queued: VecDeque::new(),
            todos: Vec::new(),
            mouse_captured: true,
            last_interrupt: None,
            last_key: None,
            dialog_pause: std::time::Duration::from_millis(600),
            response_start: None,
            code_cursor: (usize::MAX, 0),
            first_run_help: None,
            agent_gone: false,
            flash: None,
            now: Instant::now(),
            now_ms: 0,
            session: None,
            store_warning: None,
            should_quit: false,
            title: None,
            read_only: false,
            focused: true,
            notify: Default::default(),
            themes: crate::tui::theme::Themes::default(),
            theme_chosen: false,
            highlight_seen: false,
            terminal: Default::default(),
            copying: None,
            last_idle_esc: None,
            servers: None,
            language_servers: Vec::new(),
            sandbox: Default::default(),
            slash_menu: Default::default(),
            mcp_servers: Vec::new(),
            subagents: Default::default(),
            session_titles: Vec::new(),
            custom_commands: Vec::new(),
            mcp_prompts: Vec::new(),
            images: Vec::new(),
            effort: None,
            shell_mode: false,
            on_exit: Default::default(),
            jobs: Vec::new(),
            folded_prompts: Vec::new(),
        }
    }

    pub fn open_panel(&mut self, panel: crate::tui::panels::Panel) {
        self.modals.open_panel(panel);
    }

    /// The open session browser, to feed it what the service answered.
    pub fn browser_mut(&mut self) -> Option<&mut crate::tui::panels::SessionBrowser> {
        self.modals.browser_mut()
    }

    /// A notice in the transcript.
    pub fn notice(&mut self, level: crate::protocol::NoticeLevel, text: String) {
        self.transcript
            .push(crate::tui::widgets::cell::CellKind::Notice { level, text });
    }

    pub fn flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now + std::time::Duration::from_secs(3)));
    }

    /// Whether `/jobs` is open.
    pub fn jobs_panel_open(&self) -> bool {
        self.modals.overlays.iter().any(
            |o| matches!(o, Overlay::Panel(p) if matches!(**p, crate::tui::panels::Panel::Jobs(_))),
        )
    }

    /// Something on screen moves with time (spinner, timer, countdown).
    pub fn needs_tick(&self) -> bool {
        self.activity != Activity::Idle
            || self.turn_running
            || self.flash.is_some()
            // Highlighting is loading: notice when it is ready.
            || crate::tui::highlight::is_loading()
            || (crate::tui::highlight::is_ready() && !self.highlight_seen)
            // An open `/jobs` shows the running ones' clocks.
            || (self.jobs.iter().any(|j| j.running()) && self.jobs_panel_open())
            // A background job's pane keeps its clock between turns.
            || self.transcript.cells().iter().rev().take(64).any(|c| c.is_animated())
    }
}
