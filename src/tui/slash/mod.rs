//! Slash commands: what each one does (`run`), and the `/` menu as the
//! model shows it. The catalogue and the parser are `super::commands`.

mod run;

pub use crate::tui::commands::{COMMANDS, ExportFormat, Slash, SlashCommand, complete, parse};
pub use run::{open_rewind, open_sessions, palette, run, run_slash, set_theme, submit_text};

/// The values `/` arguments complete from.
pub fn arg_values(model: &crate::tui::model::Model) -> complete::ArgValues {
    complete::ArgValues {
        models: crate::llm::ModelCatalog::global()
            .pickable()
            .into_iter()
            .map(|m| m.id)
            .collect(),
        themes: model.themes.names(),
        servers: model.mcp_servers.clone(),
        sessions: model
            .session_titles
            .iter()
            .map(|(_, t)| t.clone())
            .collect(),
        custom: (model.custom_commands.iter())
            .chain(&model.mcp_prompts)
            .cloned()
            .collect(),
    }
}

/// The `/` menu as it shows now, `None` when closed or empty.
pub fn menu(model: &crate::tui::model::Model) -> Option<complete::Suggestions> {
    if model.slash_menu.hidden || !model.input.text().starts_with('/') {
        return None;
    }
    complete::suggest(&model.input.text(), &arg_values(model))
}
