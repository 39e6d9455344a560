//! Every modal dialog, one file or folder per family: the permission
//! dialog (`permission`), a server's request for input (`input_form`),
//! pickers (palette, files, model, mode, theme, rewind), confirmations
//! (undo, rewind, restoring files, a session open elsewhere), the
//! full-screen diff, text panels, the session browser, the help overlay,
//! and the trust question asked before start. All that are open or waiting
//! sit in the one container, `modals::Modals`, which says who gets a key and
//! what is drawn on top. Each dialog owns its state, its keys (from the one
//! key table) and its drawing; what a panel's key asks of the rest of the
//! interface comes back as a `PanelAction` for `update` to carry out.

mod confirm;
mod diff;
pub mod help;
pub mod input_form;
pub mod jobs;
pub mod modals;
mod open_elsewhere;
pub mod permission;
pub mod pickers;
pub mod plan;
pub mod sessions;
mod text;
pub mod trust;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use crate::config::Mode;
use crate::protocol::AgentCommand;
use crate::sessions::SessionId;
use crate::tools::restore::UndoPlan;
use crate::tools::state::FileVersion;
use crate::tui::keys::{KeyMap, Scope};
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::DiffView;
use crate::tui::widgets::picker::Picker;

pub use diff::diff_panel;
pub use pickers::{
    files_picker, models_picker, modes_picker, rewind_picker, stored_rewind_panel, themes_picker,
};
pub use sessions::{BrowserAction, SessionBrowser};

#[derive(Clone)]
pub enum Panel {
    Commands(Picker),
    Files(Picker),
    Models(Picker),
    Modes(Picker),
    Themes {
        picker: Picker,
        original: String,
    },
    Sessions(Box<SessionBrowser>),
    Rewind(Picker),
    /// A prompt of a stored session to continue from.
    StoredRewind {
        session: SessionId,
        picker: Picker,
        prompts: Vec<(i64, String)>,
    },
    /// How to continue from that prompt: as a fork, or in place.
    ConfirmStoredRewind {
        session: SessionId,
        message: i64,
        prompt: String,
        fork: bool,
    },
    /// After such a rewind: put the files back as they were then?
    RestoreFiles {
        from: u64,
        versions: Vec<FileVersion>,
        plan: UndoPlan,
    },
    ConfirmUndo(UndoPlan),
    ConfirmRewind {
        turn: u64,
        prompt: String,
        files: UndoPlan,
        restore_files: bool,
        fork: bool,
    },
    Text {
        title: String,
        text: String,
        scroll: u16,
    },
    /// Resuming a session another cairn has open: fork, read-only, cancel.
    OpenElsewhere {
        id: SessionId,
        held: String,
    },
    /// The model's plan, waiting for the person's approval.
    Plan(Box<plan::PlanDialog>),
    /// The session's background jobs (`/jobs`).
    Jobs(Box<jobs::JobsPanel>),
    /// A diff full-screen: scrollable, unified or side by side.
    Diff {
        view: Box<DiffView>,
        highlight: bool,
        side_by_side: Option<bool>,
        scroll: usize,
    },
}

impl std::fmt::Debug for Panel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for Panel {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// What a key in a panel asks of the rest of the interface.
#[derive(Debug, Clone, PartialEq)]
pub enum PanelAction {
    None,
    /// Run this slash command (chosen in the palette), without its `/`.
    Command(String),
    /// Put `/name ` in the prompt for the person to finish.
    TypeCommand(String),
    /// Complete the `@…` being typed in the prompt to `@path `.
    InsertFile(String),
    /// Leave the `@…` being typed as `@` and this.
    TypedMention(String),
    Model(String),
    Mode(Mode),
    /// Show a theme while the picker moves (or put the first one back).
    PreviewTheme(String),
    /// Use a theme and remember it.
    ChooseTheme(String),
    Browser(BrowserAction),
    Agent(AgentCommand),
    /// Continue a stored session from before one of its prompts.
    RewindStored {
        session: SessionId,
        message: i64,
        in_place: bool,
    },
    /// Put files back as they were before turn `from`.
    RestoreFiles {
        versions: Vec<FileVersion>,
        from: u64,
    },
    /// Ask the sessions service.
    Session(crate::protocol::SessionRequest),
}

/// Whether the panel stays open after a key, and what the key asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub keep: bool,
    pub action: PanelAction,
}

impl Outcome {
    pub fn keep() -> Outcome {
        Outcome {
            keep: true,
            action: PanelAction::None,
        }
    }

    pub fn close() -> Outcome {
        Outcome {
            keep: false,
            action: PanelAction::None,
        }
    }

    pub fn close_with(action: PanelAction) -> Outcome {
        Outcome {
            keep: false,
            action,
        }
    }

    /// Open or closed as `keep` says, with nothing else to do.
    pub fn stay(keep: bool) -> Outcome {
        Outcome {
            keep,
            action: PanelAction::None,
        }
    }
}

impl Panel {
    pub fn name(&self) -> &'static str {
        match self {
            Panel::Commands(_) => "commands",
            Panel::Files(_) => "files",
            Panel::Models(_) => "models",
            Panel::Modes(_) => "modes",
            Panel::Themes { .. } => "themes",
            Panel::Sessions(_) => "sessions",
            Panel::Rewind(_) => "rewind",
            Panel::StoredRewind { .. } => "stored-rewind",
            Panel::ConfirmStoredRewind { .. } => "stored-rewind-confirm",
            Panel::RestoreFiles { .. } => "restore-files",
            Panel::ConfirmUndo(_) => "undo",
            Panel::ConfirmRewind { .. } => "rewind-confirm",
            Panel::Text { .. } => "text",
            Panel::Diff { .. } => "diff",
            Panel::OpenElsewhere { .. } => "open-elsewhere",
            Panel::Plan(_) => "plan",
            Panel::Jobs(_) => "jobs",
        }
    }

    /// The screens whose keys help shows when asked from this panel.
    pub fn help_scopes(&self) -> Vec<Scope> {
        let own = match self {
            Panel::Sessions(_) => vec![Scope::Browser, Scope::TextField],
            Panel::Text { .. } => vec![Scope::TextPanel],
            Panel::Diff { .. } => vec![Scope::Diff],
            Panel::Jobs(_) => vec![Scope::Jobs, Scope::Confirm],
            Panel::ConfirmUndo(_)
            | Panel::ConfirmRewind { .. }
            | Panel::ConfirmStoredRewind { .. }
            | Panel::RestoreFiles { .. } => vec![Scope::Confirm],
            _ => vec![Scope::Picker, Scope::TextField],
        };
        own.into_iter().chain([Scope::Panel]).collect()
    }

    /// Whether typed characters go to a field here, so `?` is typed and
    /// only F1 shows the keys.
    pub fn typing(&self) -> bool {
        match self {
            Panel::Commands(p)
            | Panel::Files(p)
            | Panel::Models(p)
            | Panel::Modes(p)
            | Panel::Rewind(p)
            | Panel::StoredRewind { picker: p, .. }
            | Panel::Themes { picker: p, .. } => !p.query().is_empty(),
            Panel::Sessions(_) => true,
            Panel::Plan(d) => d.note.is_some(),
            _ => false,
        }
    }

    /// Handles a key for this panel (the topmost one).
    pub fn handle_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Outcome {
        if let Some(out) = pickers::handle_key(self, key, keys) {
            return out;
        }
        if let Some(out) = confirm::handle_key(self, key, keys) {
            return out;
        }
        if let Some(out) = open_elsewhere::handle_key(self, key, keys) {
            return out;
        }
        match self {
            Panel::Plan(d) => d.handle_key(key, keys),
            Panel::Jobs(p) => p.handle_key(key, keys),
            Panel::Sessions(b) => sessions::handle_key(b, key, keys),
            Panel::Diff {
                scroll,
                side_by_side,
                ..
            } => diff::handle_key(scroll, side_by_side, key, keys),
            Panel::Text { scroll, .. } => text::handle_key(scroll, key, keys),
            _ => Outcome::keep(),
        }
    }

    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        s: &Styles,
        theme: &Theme,
        keys: &KeyMap,
    ) {
        if pickers::render(self, area, buf, s)
            || confirm::render(self, area, buf, s)
            || open_elsewhere::render(self, area, buf, s)
        {
            return;
        }
        match self {
            Panel::Diff {
                view,
                highlight,
                side_by_side,
                scroll,
            } => diff::render(view, *highlight, *side_by_side, scroll, area, buf, s, theme),
            Panel::Sessions(b) => sessions::render(b, area, buf, s),
            Panel::Plan(d) => d.render(area, buf, s, theme),
            Panel::Jobs(p) => p.render(area, buf, s, keys),
            Panel::Text {
                title,
                text,
                scroll,
            } => text::render(title, text, *scroll, area, buf, s),
            _ => {}
        }
    }
}

/// A box centred in `area`, as tall as its lines once wrapped.
pub(crate) fn boxed(
    title: &str,
    lines: Vec<Line<'static>>,
    area: Rect,
    buf: &mut Buffer,
    s: &Styles,
) {
    let width = area.width.saturating_sub(4).clamp(10, 100);
    // Rows once wrapped, so the last line (the keys) is never cut off.
    let inner = usize::from(width.saturating_sub(2).max(1));
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let height = (rows as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(height) / 3,
        width: width.min(area.width),
        height,
    };
    Clear.render(popup, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(s.accent)
        .title(title.to_string());
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block)
        .render(popup, buf);
}
