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
use crate::tui::widgets::permission_dialog::PermissionDialog;
use crate::tui::widgets::transcript::Transcript;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Prompt,
    Transcript,
}

/// What the agent is doing, for the status line.
#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    Idle,
    Thinking {
        since: Instant,
    },
    Responding {
        since: Instant,
    },
    RunningTool {
        name: String,
        since: Instant,
    },
    WaitingForPermission,
    Retrying {
        until: Instant,
        attempt: u32,
        max: u32,
    },
}

/// Screens drawn over the transcript, topmost last; the topmost gets keys.
/// The palette, slash commands and file picker go here.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help { scroll: u16 },
    Panel(Box<crate::tui::panels::Panel>),
}

#[derive(Debug, Clone, Default)]
pub struct UsageInfo {
    pub context_tokens: u64,
    pub context_window: u64,
    pub cost: Option<f64>,
}

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
    pub dialogs: VecDeque<PermissionDialog>,
    pub overlays: Vec<Overlay>,
    pub focus: Focus,
    pub activity: Activity,
    pub turn_running: bool,
    /// Prompts sent while a turn ran, shown until their turn starts.
    pub queued: VecDeque<String>,
    pub todos: Vec<Todo>,
    pub mouse_captured: bool,
    pub last_interrupt: Option<Instant>,
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
    pub should_quit: bool,
    /// The session's title, once it has one.
    pub title: Option<String>,
    /// Where user themes live.
    pub theme_dir: Option<PathBuf>,
    /// When Esc was last pressed while idle (Esc twice rewinds).
    pub last_idle_esc: Option<Instant>,
    /// Why the session store refuses writes, while it does (shown until
    /// the waiting writes are saved).
    pub store_warning: Option<String>,
    /// MCP servers up / starting / enabled, once any is configured.
    pub servers: Option<crate::tools::SourceHealth>,
    /// Servers' requests for input, answered in order.
    pub forms: VecDeque<crate::tui::widgets::input_form::InputForm>,
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
            dialogs: VecDeque::new(),
            overlays: Vec::new(),
            focus: Focus::Prompt,
            activity: Activity::Idle,
            turn_running: false,
            queued: VecDeque::new(),
            todos: Vec::new(),
            mouse_captured: true,
            last_interrupt: None,
            response_start: None,
            code_cursor: (usize::MAX, 0),
            first_run_help: None,
            agent_gone: false,
            flash: None,
            now: Instant::now(),
            should_quit: false,
            title: None,
            theme_dir: None,
            last_idle_esc: None,
            store_warning: None,
            servers: None,
            forms: VecDeque::new(),
        }
    }

    pub fn flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now + std::time::Duration::from_secs(3)));
    }

    /// Something on screen moves with time (spinner, timer, countdown).
    pub fn needs_tick(&self) -> bool {
        self.activity != Activity::Idle || self.turn_running || self.flash.is_some()
    }
}
