//! Panels over the transcript: the command palette and slash commands, the
//! `@` file picker, model/mode/theme pickers, the session browser, undo and
//! rewind confirmations, and text panels (`/mcp`, `/permissions`).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use crate::agent::AgentCommand;
use crate::agent::undo::{FileAction, UndoPlan};
use crate::tui::cmd::Cmd;
use crate::tui::model::{Model, Overlay};
use crate::tui::services::ServiceCmd;
use crate::tui::slash::{self, Slash};
use crate::tui::styles::Styles;
use crate::tui::widgets::picker::{Picker, PickerAction, PickerItem, PickerStyles};
use crate::tui::widgets::session_browser::{BrowserAction, BrowserStyles, SessionBrowser};

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
        session: String,
        picker: Picker,
        prompts: Vec<(i64, String)>,
    },
    /// How to continue from that prompt: as a fork, or in place.
    ConfirmStoredRewind {
        session: String,
        message: i64,
        prompt: String,
        fork: bool,
    },
    /// After such a rewind: put the files back as they were then?
    RestoreFiles {
        from: u64,
        versions: Vec<crate::tools::state::FileVersion>,
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
    /// A diff full-screen: scrollable, unified or side by side.
    Diff {
        view: Box<crate::tui::widgets::diff_view::DiffView>,
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
        }
    }
}

pub fn open(model: &mut Model, panel: Panel) {
    model.overlays.push(Overlay::Panel(Box::new(panel)));
}

pub fn top_is_panel(model: &Model) -> bool {
    matches!(model.overlays.last(), Some(Overlay::Panel(_)))
}

/// The command palette (Ctrl+P, or `/` in an empty prompt).
pub fn commands_picker(query: &str) -> Panel {
    let items = slash::COMMANDS
        .iter()
        .map(|c| PickerItem {
            label: format!("/{}", c.name),
            detail: if c.args.is_empty() {
                c.description.to_string()
            } else {
                format!("{} — {}", c.args, c.description)
            },
            value: c.name.to_string(),
        })
        .collect();
    Panel::Commands(Picker::new("Commands", items, false).with_query(query))
}

pub fn files_picker(files: Vec<String>) -> Panel {
    let items = files
        .into_iter()
        .map(|f| PickerItem {
            label: f.clone(),
            detail: String::new(),
            value: f,
        })
        .collect();
    Panel::Files(Picker::new("Files (@)", items, true))
}

fn models_picker(current: &str) -> Panel {
    let mut items: Vec<PickerItem> = crate::llm::ModelCatalog::global()
        .pickable()
        .iter()
        .map(|m| PickerItem {
            label: m.id.clone(),
            detail: format!("{}k context", m.context_window / 1000),
            value: m.id.clone(),
        })
        .collect();
    if !items.iter().any(|i| i.value == current) {
        items.insert(
            0,
            PickerItem {
                label: current.to_string(),
                detail: "current".into(),
                value: current.to_string(),
            },
        );
    }
    let mut p = Picker::new("Model (type any id, Enter)", items, false);
    p.select_value(current);
    Panel::Models(p)
}

fn modes_picker(current: crate::permission::Mode) -> Panel {
    use crate::permission::Mode;
    let items = Mode::ALL
        .iter()
        .map(|m| PickerItem {
            label: m.as_str().to_string(),
            detail: match m {
                Mode::Smart => "read-only tools run; writes and unsafe commands ask",
                Mode::AlwaysAsk => "everything but reading asks",
                Mode::Auto => "nothing asks but paths outside the project; deny rules hold",
                Mode::Chat => "no tools",
            }
            .into(),
            value: m.as_str().to_string(),
        })
        .collect();
    let mut p = Picker::new("Permission mode", items, false);
    p.select_value(current.as_str());
    Panel::Modes(p)
}

fn themes_picker(current: &str) -> Panel {
    let items = crate::tui::theme::Theme::builtin_names()
        .iter()
        .map(|n| PickerItem {
            label: n.to_string(),
            detail: String::new(),
            value: n.to_string(),
        })
        .collect();
    let mut picker = Picker::new("Theme (previews as you move)", items, false);
    picker.select_value(current);
    Panel::Themes {
        picker,
        original: current.to_string(),
    }
}

/// The prompts of a stored session, newest first.
pub fn stored_rewind_panel(session: String, prompts: Vec<(i64, String)>) -> Panel {
    let items = prompts
        .iter()
        .cloned()
        .enumerate()
        .rev()
        .map(|(i, (mid, text))| PickerItem {
            label: text.split_whitespace().collect::<Vec<_>>().join(" "),
            detail: format!("turn {}", i + 1),
            value: mid.to_string(),
        })
        .collect();
    Panel::StoredRewind {
        session,
        picker: Picker::new("Continue from before which prompt?", items, false),
        prompts,
    }
}

pub fn diff_panel(path: &str, old: &str, new: &str) -> Panel {
    Panel::Diff {
        view: Box::new(crate::tui::widgets::diff_view::DiffView::new(
            path, old, new,
        )),
        highlight: crate::tui::widgets::diff_view::highlight_affordable(old, new),
        side_by_side: None,
        scroll: 0,
    }
}

/// The prompts of the transcript, newest first, for rewinding.
fn rewind_picker(model: &Model) -> Option<Panel> {
    let prompts: Vec<String> = model
        .transcript
        .cells()
        .iter()
        .filter_map(|c| match &c.kind {
            crate::tui::widgets::cell::CellKind::User(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    if prompts.is_empty() {
        return None;
    }
    let items = prompts
        .iter()
        .enumerate()
        .rev()
        .map(|(i, p)| PickerItem {
            label: p.split_whitespace().collect::<Vec<_>>().join(" "),
            detail: format!("turn {}", i + 1),
            value: (i + 1).to_string(),
        })
        .collect();
    Some(Panel::Rewind(Picker::new(
        "Rewind to before which prompt?",
        items,
        false,
    )))
}

/// Runs a typed `/command`.
pub fn run_slash(model: &mut Model, text: &str) -> Vec<Cmd> {
    let cmd = match slash::parse(text) {
        Ok(c) => c,
        Err(e) => {
            model.flash(e);
            return Vec::new();
        }
    };
    run(model, cmd)
}

fn busy(model: &mut Model, what: &str) -> bool {
    if model.turn_running {
        model.flash(format!(
            "{what} waits until the agent is idle (Esc stops it)"
        ));
        return true;
    }
    false
}

pub fn run(model: &mut Model, cmd: Slash) -> Vec<Cmd> {
    match cmd {
        Slash::New => {
            if busy(model, "/new") {
                return Vec::new();
            }
            model.transcript = crate::tui::widgets::transcript::Transcript::new();
            model.title = None;
            model.usage.context_tokens = 0;
            model.usage.cost = None;
            model.todos.clear();
            vec![Cmd::Send(AgentCommand::NewSession)]
        }
        Slash::Sessions => open_sessions(model),
        Slash::Model(Some(id)) => vec![Cmd::Send(AgentCommand::SetModel {
            provider: None,
            model: id,
        })],
        Slash::Model(None) => {
            let p = models_picker(&model.model);
            open(model, p);
            Vec::new()
        }
        Slash::Mode(Some(m)) => {
            model.mode = m;
            vec![Cmd::Send(AgentCommand::SetMode(m))]
        }
        Slash::Mode(None) => {
            let p = modes_picker(model.mode);
            open(model, p);
            Vec::new()
        }
        Slash::Theme(Some(name)) => set_theme(model, &name, true),
        Slash::Theme(None) => {
            let p = themes_picker(&model.theme.name);
            open(model, p);
            Vec::new()
        }
        Slash::Compact(focus) => {
            if busy(model, "/compact") {
                return Vec::new();
            }
            vec![Cmd::Send(AgentCommand::Compact { focus })]
        }
        Slash::Undo => {
            if busy(model, "/undo") {
                return Vec::new();
            }
            vec![Cmd::Send(AgentCommand::PrepareUndo)]
        }
        Slash::Rewind => open_rewind(model),
        Slash::Rename(title) => {
            model.title = Some(title.clone());
            vec![
                Cmd::Send(AgentCommand::SetTitle(title.clone())),
                Cmd::Service(ServiceCmd::Rename { id: None, title }),
            ]
        }
        Slash::Export(fmt) => vec![Cmd::Service(ServiceCmd::Export {
            id: None,
            json: fmt == slash::ExportFormat::Json,
        })],
        Slash::Mcp => vec![Cmd::Service(ServiceCmd::McpStatus)],
        Slash::McpRestart(name) => vec![Cmd::Service(ServiceCmd::McpRestart(name))],
        Slash::McpPrompt(command) => vec![Cmd::Service(ServiceCmd::McpPrompt(command))],
        Slash::Permissions => vec![Cmd::Service(ServiceCmd::Permissions)],
        Slash::Sandbox => {
            let text = model.sandbox.details();
            crate::tui::update::notice(model, crate::agent::NoticeLevel::Info, text);
            Vec::new()
        }
        Slash::Mouse => {
            model.mouse_captured = !model.mouse_captured;
            vec![Cmd::SetMouseCapture(model.mouse_captured)]
        }
        Slash::Help => {
            model.overlays.push(Overlay::Help { scroll: 0 });
            Vec::new()
        }
        Slash::Quit => vec![Cmd::Quit],
    }
}

pub fn open_sessions(model: &mut Model) -> Vec<Cmd> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let (browser, first) = SessionBrowser::open(now_ms);
    open(model, Panel::Sessions(Box::new(browser)));
    browser_cmds(first)
}

pub fn open_rewind(model: &mut Model) -> Vec<Cmd> {
    if busy(model, "Rewind") {
        return Vec::new();
    }
    match rewind_picker(model) {
        Some(p) => open(model, p),
        None => model.flash("Nothing to rewind to yet"),
    }
    Vec::new()
}

fn set_theme(model: &mut Model, name: &str, save: bool) -> Vec<Cmd> {
    match crate::tui::theme::Theme::load(name, model.theme_dir.as_deref()) {
        Ok(t) => {
            model.theme = t.adapt(crate::tui::theme::detect_color_depth());
            model.styles = Styles::from_theme(&model.theme);
            model.transcript.invalidate();
            if save {
                vec![Cmd::Service(ServiceCmd::SaveTheme(name.to_string()))]
            } else {
                Vec::new()
            }
        }
        Err(e) => {
            model.flash(format!("theme `{name}`: {e}"));
            Vec::new()
        }
    }
}

fn browser_cmds(action: BrowserAction) -> Vec<Cmd> {
    match action {
        BrowserAction::Query {
            text,
            all_projects,
            offset,
        } => {
            vec![Cmd::Service(ServiceCmd::QuerySessions {
                text,
                all: all_projects,
                offset,
            })]
        }
        BrowserAction::Then(first, second) => {
            let mut cmds = browser_cmds(*first);
            cmds.extend(browser_cmds(*second));
            cmds
        }
        BrowserAction::Preview(id) => vec![Cmd::Service(ServiceCmd::Preview(id))],
        BrowserAction::Rename { id, title } => vec![Cmd::Service(ServiceCmd::Rename {
            id: Some(id),
            title,
        })],
        BrowserAction::Delete(id) => vec![Cmd::Service(ServiceCmd::Delete(id))],
        BrowserAction::Fork(id) => vec![Cmd::Service(ServiceCmd::Fork(id))],
        BrowserAction::Export { id, json } => {
            vec![Cmd::Service(ServiceCmd::Export { id: Some(id), json })]
        }
        BrowserAction::Resume(id) => vec![Cmd::Service(ServiceCmd::Resume(id))],
        BrowserAction::Rewind(id) => vec![Cmd::Service(ServiceCmd::Prompts(id))],
        BrowserAction::None | BrowserAction::Close => Vec::new(),
    }
}

/// Keys for the topmost panel. It is taken off the stack while it handles
/// the key (so it may change the model) and put back unless it closed.
pub fn on_key(model: &mut Model, key: KeyEvent) -> Vec<Cmd> {
    let Some(Overlay::Panel(mut panel)) = model.overlays.pop() else {
        return Vec::new();
    };
    let mut keep = true;
    let mut cmds = Vec::new();
    match &mut *panel {
        // An MCP prompt (`/mcp__SERVER__PROMPT args`) is not in the list.
        Panel::Commands(p)
            if key.code == crossterm::event::KeyCode::Enter
                && p.query().trim_start().starts_with("mcp__") =>
        {
            keep = false;
            cmds = run_slash(model, &format!("/{}", p.query().trim()));
        }
        Panel::Commands(p) => match p.handle_key(key) {
            PickerAction::Cancel => keep = false,
            PickerAction::Choose(name) => {
                keep = false;
                let takes_text = matches!(name.as_str(), "rename" | "compact" | "export");
                if takes_text {
                    model.input.set_text(&format!("/{name} "));
                } else {
                    cmds = run_slash(model, &format!("/{name}"));
                }
            }
            _ => {}
        },
        Panel::Files(p) => match p.handle_key(key) {
            PickerAction::Cancel => keep = false,
            PickerAction::Choose(path) => {
                keep = false;
                let mut text = model.input.text();
                if !(text.is_empty() || text.ends_with(char::is_whitespace)) {
                    text.push(' ');
                }
                text.push_str(&format!("@{path} "));
                model.input.set_text(&text);
            }
            _ => {}
        },
        Panel::Models(p) => {
            let typed = p.query().to_string();
            match p.handle_key(key) {
                PickerAction::Cancel => keep = false,
                PickerAction::Choose(id) => {
                    keep = false;
                    cmds = run(model, Slash::Model(Some(id)));
                }
                PickerAction::None if key.code == KeyCode::Enter && !typed.trim().is_empty() => {
                    keep = false;
                    cmds = run(model, Slash::Model(Some(typed.trim().to_string())));
                }
                _ => {}
            }
        }
        Panel::Modes(p) => match p.handle_key(key) {
            PickerAction::Cancel => keep = false,
            PickerAction::Choose(m) => {
                keep = false;
                if let Some(mode) = crate::permission::Mode::parse(&m) {
                    cmds = run(model, Slash::Mode(Some(mode)));
                }
            }
            _ => {}
        },
        Panel::Themes { picker, original } => match picker.handle_key(key) {
            PickerAction::Cancel => {
                keep = false;
                let o = original.clone();
                set_theme(model, &o, false);
            }
            PickerAction::Moved(name) => {
                set_theme(model, &name, false);
            }
            PickerAction::Choose(name) => {
                keep = false;
                cmds = set_theme(model, &name, true);
            }
            PickerAction::None => {}
        },
        Panel::Sessions(b) => {
            let action = b.handle_key(key);
            if matches!(
                action,
                BrowserAction::Close | BrowserAction::Resume(_) | BrowserAction::Rewind(_)
            ) {
                keep = false;
            }
            if matches!(action, BrowserAction::Resume(_) | BrowserAction::Rewind(_))
                && model.turn_running
            {
                model.flash("Resuming waits until the agent is idle (Esc stops it)");
                keep = true;
            } else {
                cmds = browser_cmds(action);
            }
        }
        Panel::Rewind(p) => match p.handle_key(key) {
            PickerAction::Cancel => keep = false,
            PickerAction::Choose(turn) => {
                keep = false;
                if let Ok(turn) = turn.parse() {
                    cmds = vec![Cmd::Send(AgentCommand::PrepareRewind { turn })];
                }
            }
            _ => {}
        },
        Panel::StoredRewind {
            session,
            picker,
            prompts,
        } => match picker.handle_key(key) {
            PickerAction::Cancel => keep = false,
            PickerAction::Choose(message) => {
                if let Ok(message) = message.parse::<i64>() {
                    let prompt = prompts
                        .iter()
                        .find(|(m, _)| *m == message)
                        .map(|(_, p)| p.clone())
                        .unwrap_or_default();
                    *panel = Panel::ConfirmStoredRewind {
                        session: std::mem::take(session),
                        message,
                        prompt,
                        fork: true,
                    };
                } else {
                    keep = false;
                }
            }
            _ => {}
        },
        Panel::ConfirmStoredRewind {
            session,
            message,
            fork,
            ..
        } => match key.code {
            KeyCode::Char('f') | KeyCode::Char(' ') => *fork = !*fork,
            KeyCode::Enter | KeyCode::Char('y') => {
                keep = false;
                cmds = vec![Cmd::Service(ServiceCmd::ForkBefore {
                    id: session.clone(),
                    message: *message,
                    in_place: !*fork,
                })];
            }
            KeyCode::Esc | KeyCode::Char('n') => keep = false,
            _ => {}
        },
        Panel::RestoreFiles { from, versions, .. } => match key.code {
            KeyCode::Char('y') | KeyCode::Enter => {
                keep = false;
                cmds = vec![Cmd::Service(ServiceCmd::RestoreFiles {
                    versions: std::mem::take(versions),
                    from: *from,
                })];
            }
            KeyCode::Char('n') | KeyCode::Esc => keep = false,
            _ => {}
        },
        Panel::ConfirmUndo(plan) => match key.code {
            KeyCode::Char('y') | KeyCode::Enter => {
                keep = false;
                cmds = vec![Cmd::Send(AgentCommand::ConfirmUndo { turn: plan.turn })];
            }
            KeyCode::Char('n') | KeyCode::Esc => keep = false,
            _ => {}
        },
        Panel::ConfirmRewind {
            turn,
            restore_files,
            fork,
            ..
        } => match key.code {
            KeyCode::Char('f') => *fork = !*fork,
            KeyCode::Char('r') => *restore_files = !*restore_files,
            KeyCode::Enter | KeyCode::Char('y') => {
                keep = false;
                cmds = vec![Cmd::Send(AgentCommand::Rewind {
                    turn: *turn,
                    restore_files: *restore_files,
                    fork: *fork,
                })];
            }
            KeyCode::Esc | KeyCode::Char('n') => keep = false,
            _ => {}
        },
        Panel::Diff {
            scroll,
            side_by_side,
            ..
        } => match key.code {
            KeyCode::Down | KeyCode::Char('j') => *scroll = scroll.saturating_add(1),
            KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => *scroll = scroll.saturating_add(20),
            KeyCode::PageUp => *scroll = scroll.saturating_sub(20),
            KeyCode::Char('g') | KeyCode::Home => *scroll = 0,
            KeyCode::Char('t') => *side_by_side = Some(!side_by_side.unwrap_or(false)),
            _ => keep = false,
        },
        Panel::Text { scroll, .. } => match key.code {
            KeyCode::Down | KeyCode::Char('j') => *scroll = scroll.saturating_add(1),
            KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
            KeyCode::PageDown => *scroll = scroll.saturating_add(10),
            KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
            _ => keep = false,
        },
    }
    if keep {
        model.overlays.push(Overlay::Panel(panel));
    }
    cmds
}

/// Feeds a service answer to the open browser.
pub fn browser_mut(model: &mut Model) -> Option<&mut SessionBrowser> {
    model.overlays.iter_mut().rev().find_map(|o| match o {
        Overlay::Panel(p) => match &mut **p {
            Panel::Sessions(b) => Some(&mut **b),
            _ => None,
        },
        _ => None,
    })
}

pub fn browser_follow_up(action: BrowserAction) -> Vec<Cmd> {
    browser_cmds(action)
}

fn picker_styles(s: &Styles) -> PickerStyles {
    PickerStyles {
        border: s.accent,
        text: s.text,
        detail: s.dim,
        selected: s.focused_choice,
        matched: s.accent.add_modifier(ratatui::style::Modifier::BOLD),
    }
}

pub fn render(
    panel: &mut Panel,
    area: Rect,
    buf: &mut Buffer,
    s: &Styles,
    theme: &crate::tui::theme::Theme,
) {
    match panel {
        Panel::Diff {
            view,
            highlight,
            side_by_side,
            scroll,
        } => {
            use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions};
            Clear.render(area, buf);
            let inner_w = area.width.saturating_sub(2).max(1);
            let layout = match side_by_side {
                Some(true) => DiffLayout::SideBySide,
                Some(false) => DiffLayout::Unified,
                None => DiffLayout::for_width(inner_w),
            };
            let lines = view.lines(
                inner_w,
                layout,
                theme,
                DiffOptions {
                    context: 3,
                    fold: false,
                    line_numbers: true,
                    highlight: *highlight,
                },
            );
            let rows = usize::from(area.height.saturating_sub(2));
            *scroll = (*scroll).min(lines.len().saturating_sub(rows));
            let shown: Vec<Line> = lines.into_iter().skip(*scroll).take(rows).collect();
            let title = format!(
                " {} +{} −{} · j/k PgUp/PgDn scroll · t layout · Esc close ",
                view.path(),
                view.added(),
                view.removed()
            );
            Paragraph::new(shown)
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(s.accent)
                        .title(title),
                )
                .render(area, buf);
        }
        Panel::Commands(p)
        | Panel::Files(p)
        | Panel::Models(p)
        | Panel::Modes(p)
        | Panel::Rewind(p)
        | Panel::StoredRewind { picker: p, .. }
        | Panel::Themes { picker: p, .. } => p.render(area, buf, &picker_styles(s)),
        Panel::Sessions(b) => {
            let inset = if area.width > 60 && area.height > 16 {
                Rect {
                    x: area.x + 2,
                    y: area.y + 1,
                    width: area.width - 4,
                    height: area.height - 2,
                }
            } else {
                area
            };
            b.render(
                inset,
                buf,
                &BrowserStyles {
                    border: s.accent,
                    text: s.text,
                    dim: s.dim,
                    selected: s.selection,
                    matched: s.accent.add_modifier(ratatui::style::Modifier::BOLD),
                    warning: s.warning,
                },
            )
        }
        Panel::RestoreFiles { plan, .. } => {
            let mut lines = vec![Line::styled(
                "Also put the files back as they were before that prompt?",
                s.text,
            )];
            lines.extend(plan_lines(plan, s));
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "y / Enter: restore    n / Esc: keep them as they are",
                s.dim,
            ));
            boxed(" Rewind: files ", lines, area, buf, s);
        }
        Panel::ConfirmUndo(plan) => {
            let mut lines = vec![Line::styled(
                "Undo the file changes of the last turn?",
                s.text,
            )];
            lines.extend(plan_lines(plan, s));
            lines.push(Line::raw(""));
            lines.push(Line::styled("y / Enter: restore    n / Esc: keep", s.dim));
            boxed(" Undo ", lines, area, buf, s);
        }
        Panel::ConfirmRewind {
            prompt,
            files,
            restore_files,
            fork,
            ..
        } => {
            let mut lines = rewind_head(
                "Return the conversation to just before:",
                prompt,
                *fork,
                "this one stays as it is",
                s,
            );
            lines.push(Line::from(vec![
                Span::styled(if *restore_files { "[x]" } else { "[ ]" }, s.accent),
                Span::styled(" r  restore the files to how they were then", s.text),
            ]));
            if *restore_files {
                lines.extend(plan_lines(files, s));
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled("Enter: rewind    Esc: cancel", s.dim));
            boxed(" Rewind ", lines, area, buf, s);
        }
        Panel::ConfirmStoredRewind { prompt, fork, .. } => {
            let mut lines = rewind_head(
                "Continue that session from just before:",
                prompt,
                *fork,
                "the original stays as it is",
                s,
            );
            lines.extend([
                Line::styled(
                    if *fork {
                        "    otherwise the session itself is cut back there"
                    } else {
                        "    in place: what came after that prompt is deleted from the session"
                    },
                    if *fork { s.dim } else { s.warning },
                ),
                Line::raw(""),
                Line::styled("Enter: continue    Esc: cancel", s.dim),
            ]);
            boxed(" Rewind ", lines, area, buf, s);
        }
        Panel::Text {
            title,
            text,
            scroll,
        } => {
            let lines: Vec<Line> = text
                .lines()
                .skip(*scroll as usize)
                .map(|l| Line::styled(l.to_string(), s.text))
                .collect();
            boxed(&format!(" {title} "), lines, area, buf, s);
        }
    }
}

/// The top of a rewind confirmation: where to, and the fork checkbox.
fn rewind_head(
    heading: &str,
    prompt: &str,
    fork: bool,
    stays: &str,
    s: &Styles,
) -> Vec<Line<'static>> {
    vec![
        Line::styled(heading.to_string(), s.text),
        Line::styled(
            format!("  › {}", prompt.lines().next().unwrap_or("")),
            s.user,
        ),
        Line::raw(""),
        Line::from(vec![
            Span::styled(if fork { "[x]" } else { "[ ]" }, s.accent),
            Span::styled(format!(" f  as a fork (a new session; {stays})"), s.text),
        ]),
    ]
}

fn plan_lines(plan: &UndoPlan, s: &Styles) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if plan.files.is_empty() {
        out.push(Line::styled("  (no file changes to restore)", s.dim));
    }
    for (path, action) in &plan.files {
        let (mark, what) = match action {
            FileAction::Restore => ("↺", "restore"),
            FileAction::Delete => ("✗", "delete (it was created)"),
        };
        out.push(Line::styled(format!("  {mark} {path}  — {what}"), s.text));
    }
    for (path, why) in &plan.unrestorable {
        out.push(Line::styled(format!("  ! {path}: {why}"), s.warning));
    }
    out
}

fn boxed(title: &str, lines: Vec<Line<'static>>, area: Rect, buf: &mut Buffer, s: &Styles) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    #[test]
    fn the_full_screen_diff_scrolls_toggles_and_closes() {
        let theme = crate::tui::theme::Theme::default();
        let styles = Styles::from_theme(&theme);
        let old: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 50\n", "line fifty\n");
        let mut p = diff_panel("a.txt", &old, &new);
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 20));
        render(&mut p, buf.area, &mut buf, &styles, &theme);
        let text: String = buf.content.iter().map(|c| c.symbol()).collect();
        assert!(text.contains("a.txt +1 −1"), "{text}");
        assert!(text.contains("line 0"), "the top of the whole file");
        let mut m = crate::tui::model::Model::new(
            "p".into(),
            "m".into(),
            crate::permission::Mode::Smart,
            "/".into(),
            theme.clone(),
        );
        open(&mut m, p);
        for _ in 0..2 {
            on_key(&mut m, KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
        }
        on_key(
            &mut m,
            KeyEvent::new(KeyCode::Char('t'), KeyModifiers::NONE),
        );
        match m.overlays.last_mut() {
            Some(Overlay::Panel(p)) => {
                let mut buf = Buffer::empty(Rect::new(0, 0, 100, 20));
                render(p, buf.area, &mut buf, &styles, &theme);
                let text: String = buf.content.iter().map(|c| c.symbol()).collect();
                assert!(
                    text.contains("line fifty"),
                    "scrolled to the change: {text}"
                );
            }
            other => panic!("{other:?}"),
        }
        on_key(&mut m, KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        assert!(m.overlays.is_empty());
    }
}
