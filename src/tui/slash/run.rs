//! Running a slash command: most change the model and return the effects
//! for the runtime; some open a panel.

use crate::permission::Mode;
use crate::protocol::SessionRequest;
use crate::protocol::{AgentCommand, NoticeLevel};
use crate::tui::cmd::Cmd;
use crate::tui::model::{Model, Overlay};
use crate::tui::panels::{self, Panel, SessionBrowser};
use crate::tui::styles::Styles;
use crate::tui::widgets::cell::CellKind;
use crate::tui::widgets::picker::{Picker, PickerItem};

use super::{COMMANDS, ExportFormat, Slash};

/// The command palette (Ctrl+P, or `/` in an empty prompt).
pub fn palette(query: &str) -> Panel {
    let items = COMMANDS
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

/// Runs a typed `/command`.
pub fn run_slash(model: &mut Model, text: &str) -> Vec<Cmd> {
    match super::parse(text) {
        Ok(c) => run(model, c),
        Err(e) => {
            model.flash(e);
            Vec::new()
        }
    }
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
        Slash::New => new_session(model),
        Slash::Sessions => open_sessions(model),
        Slash::Resume(title) => resume_titled(model, &title),
        Slash::Model(Some(id)) => vec![Cmd::Send(AgentCommand::SetModel {
            provider: None,
            model: id,
        })],
        Slash::Model(None) => {
            model.open_panel(panels::models_picker(&model.model));
            Vec::new()
        }
        Slash::Mode(Some(m)) => {
            model.mode = m;
            vec![Cmd::Send(AgentCommand::SetMode(m))]
        }
        Slash::Plan(goal) => {
            model.mode = Mode::Plan;
            let mut cmds = vec![Cmd::Send(AgentCommand::SetMode(Mode::Plan))];
            if let Some(text) = goal {
                model.transcript.to_bottom();
                if model.turn_running {
                    model.queued.push_back(text.clone());
                }
                cmds.push(Cmd::Send(AgentCommand::Submit {
                    text,
                    images: Vec::new(),
                }));
            }
            cmds
        }
        Slash::Mode(None) => {
            model.open_panel(panels::modes_picker(model.mode));
            Vec::new()
        }
        Slash::Effort(Some(effort)) => {
            model.flash(match effort {
                Some(e) => format!("Effort {e} from the next request"),
                None => "Effort: the model's default".to_string(),
            });
            vec![Cmd::Send(AgentCommand::SetEffort(effort))]
        }
        Slash::Effort(None) => {
            let now = model.effort.map_or("default", |e| e.as_str());
            model.flash(format!(
                "Effort is {now}; /effort minimal|low|medium|high|xhigh|default"
            ));
            Vec::new()
        }
        Slash::PasteImage => vec![Cmd::ReadImage(crate::tui::cmd::ImageSource::Clipboard)],
        Slash::Theme(Some(name)) => set_theme(model, &name, true),
        Slash::Theme(None) => {
            let p = panels::themes_picker(&model.themes.names(), &model.theme.name);
            model.open_panel(p);
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
        Slash::Rename(title) => rename(model, title),
        Slash::Export(fmt, to) => export(model, fmt, to),
        Slash::Mcp => vec![Cmd::ShowMcpStatus],
        Slash::McpRestart(name) => vec![Cmd::RestartMcp(name)],
        Slash::Lsp => vec![Cmd::Send(AgentCommand::ShowLanguageServers)],
        Slash::LspRestart(name) => vec![Cmd::Send(AgentCommand::RestartLanguageServer(name))],
        Slash::McpPrompt(command) => vec![Cmd::McpPrompt(command)],
        Slash::Prompts => {
            model.open_panel(Panel::Text {
                title: "MCP prompts".into(),
                text: prompts_text(&model.mcp_prompts),
                scroll: 0,
            });
            Vec::new()
        }
        Slash::Permissions => vec![Cmd::ShowPermissionRules],
        Slash::Hooks => vec![Cmd::ShowHooks],
        Slash::Memory => vec![Cmd::Send(AgentCommand::ShowMemory)],
        Slash::Init(focus) => {
            if model.read_only {
                model.flash("/init is not sent: this session is read-only here (/new starts one)");
                return Vec::new();
            }
            // The agent replaces `/init` with its built-in prompt.
            let text = match focus {
                Some(f) => format!("/init {f}"),
                None => "/init".to_string(),
            };
            submit_text(model, text)
        }
        Slash::Sandbox => {
            let text = model.sandbox.details();
            model.notice(NoticeLevel::Info, text);
            Vec::new()
        }
        Slash::Mouse => {
            model.mouse_captured = !model.mouse_captured;
            vec![Cmd::SetMouseCapture(model.mouse_captured)]
        }
        Slash::Jobs => {
            crate::tui::jobs::open(model);
            Vec::new()
        }
        Slash::Help => {
            model.modals.overlays.push(Overlay::Help(
                crate::tui::panels::help::HelpState::with_custom(
                    &model.custom_commands,
                    &model.mcp_prompts,
                ),
            ));
            Vec::new()
        }
        Slash::Quit => vec![Cmd::Quit],
    }
}

/// `/prompts`: each MCP prompt as it is typed, and what it does.
fn prompts_text(prompts: &[crate::tui::commands::CustomEntry]) -> String {
    if prompts.is_empty() {
        return "No MCP server offers prompts (or none has started yet; /mcp shows them).".into();
    }
    let mut out = String::from("Type one to send it; arguments as name=value or in order:\n");
    for p in prompts {
        let head = format!("/{} {}", p.name, p.args);
        out.push_str(&format!("  {}\n", head.trim_end()));
        if !p.description.is_empty() {
            out.push_str(&format!("      {}\n", p.description));
        }
    }
    out
}

fn new_session(model: &mut Model) -> Vec<Cmd> {
    if busy(model, "/new") {
        return Vec::new();
    }
    model.transcript = crate::tui::widgets::transcript::Transcript::new();
    model.title = None;
    // The next session is recorded under a new id once it is written.
    model.session = None;
    model.usage.context_tokens = 0;
    model.usage.cost = None;
    model.todos.clear();
    model.read_only = false;
    crate::tui::jobs::session_changed(model);
    vec![Cmd::Send(AgentCommand::NewSession)]
}

fn rename(model: &mut Model, title: String) -> Vec<Cmd> {
    model.title = Some(title.clone());
    let mut cmds = vec![Cmd::Send(AgentCommand::SetTitle(title.clone()))];
    match model.session.clone() {
        Some(id) => cmds.push(Cmd::Session(SessionRequest::Rename { id, title })),
        None => model.notice(
            NoticeLevel::Error,
            "This session has no messages yet; it is named when it starts.".into(),
        ),
    }
    cmds
}

fn export(model: &mut Model, fmt: ExportFormat, to: Option<String>) -> Vec<Cmd> {
    match model.session.clone() {
        Some(id) => vec![Cmd::Session(SessionRequest::Export {
            id,
            json: fmt == ExportFormat::Json,
            to,
        })],
        None => {
            model.notice(
                NoticeLevel::Error,
                "This session has no messages yet; there is nothing to export.".into(),
            );
            Vec::new()
        }
    }
}

/// Resumes the session titled `title` (any case), or opens the browser
/// searching for it when no title matches.
fn resume_titled(model: &mut Model, title: &str) -> Vec<Cmd> {
    if busy(model, "Resuming") {
        return Vec::new();
    }
    let wanted = title.to_lowercase();
    let found = model
        .session_titles
        .iter()
        .find(|(_, t)| t.to_lowercase() == wanted)
        .map(|(id, _)| id.clone());
    match found {
        Some(id) => vec![Cmd::Session(SessionRequest::Resume(id))],
        None => {
            model.flash(format!(
                "No session titled “{title}”; here are the sessions"
            ));
            open_sessions(model)
        }
    }
}

pub fn open_sessions(model: &mut Model) -> Vec<Cmd> {
    let (browser, first) = SessionBrowser::open(model.now_ms);
    model.open_panel(Panel::Sessions(Box::new(browser)));
    panels::sessions::commands(first, model.session.as_ref())
}

pub fn open_rewind(model: &mut Model) -> Vec<Cmd> {
    if busy(model, "Rewind") {
        return Vec::new();
    }
    let prompts: Vec<String> = model
        .transcript
        .cells()
        .iter()
        .filter_map(|c| match &c.kind {
            CellKind::User(p) => Some(p.shown().to_string()),
            _ => None,
        })
        .collect();
    match panels::rewind_picker(&prompts) {
        Some(p) => model.open_panel(p),
        None => model.flash("Nothing to rewind to yet"),
    }
    Vec::new()
}

/// Switches to the theme called `name`; `save` remembers it in the config.
pub fn set_theme(model: &mut Model, name: &str, save: bool) -> Vec<Cmd> {
    match model.themes.get(name) {
        Ok(t) => {
            model.theme = t;
            model.styles = Styles::from_theme(&model.theme);
            model.transcript.invalidate();
            if save {
                model.theme_chosen = true;
                vec![Cmd::SaveSetting {
                    key: "theme",
                    value: name.to_string(),
                }]
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

/// Sends `text` as the person's prompt (queued when a turn runs): for
/// what a command expands into (`/init`, an MCP prompt).
pub fn submit_text(model: &mut Model, text: String) -> Vec<Cmd> {
    model.transcript.to_bottom();
    if model.turn_running {
        model.queued.push_back(text.clone());
    }
    vec![Cmd::Send(AgentCommand::Submit {
        text,
        images: Vec::new(),
    })]
}
