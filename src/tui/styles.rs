//! The few interface styles the app's own widgets use (prompt, gutter,
//! status, dialog). Markdown, code and diff colours come from `Theme`.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone)]
pub struct Styles {
    pub text: Style,
    pub dim: Style,
    pub accent: Style,
    pub user: Style,
    pub success: Style,
    pub error: Style,
    pub warning: Style,
    pub selection: Style,
    pub status: Style,
    pub border: Style,
    pub focused_choice: Style,
}

impl Default for Styles {
    fn default() -> Self {
        Styles {
            text: Style::default(),
            dim: Style::default().fg(Color::DarkGray),
            accent: Style::default().fg(Color::Cyan),
            user: Style::default().add_modifier(Modifier::BOLD),
            success: Style::default().fg(Color::Green),
            error: Style::default().fg(Color::Red),
            warning: Style::default().fg(Color::Yellow),
            selection: Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            status: Style::default().fg(Color::Gray),
            border: Style::default().fg(Color::DarkGray),
            focused_choice: Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        }
    }
}

impl Styles {
    pub fn from_theme(t: &crate::tui::theme::Theme) -> Self {
        let base = t.base();
        Styles {
            text: base,
            dim: t.dim,
            accent: t.accent,
            user: t.user_prompt,
            success: t.success,
            error: t.error,
            warning: t.warning,
            selection: t.accent.add_modifier(Modifier::BOLD),
            status: t.status_fg,
            border: t.border,
            focused_choice: t.selection_bg.add_modifier(Modifier::BOLD),
        }
    }
}
