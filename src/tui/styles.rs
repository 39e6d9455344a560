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
    /// The border of what has the keys (the prompt, a dialog).
    pub border_focus: Style,
    /// The whole status row: its background and default text.
    pub status_bar: Style,
    pub reasoning: Style,
    pub tool_name: Style,
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
            border_focus: Style::default().fg(Color::Cyan),
            status_bar: Style::default(),
            reasoning: Style::default()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC),
            tool_name: Style::default().add_modifier(Modifier::BOLD),
        }
    }
}

/// Gives a cell drawn with the terminal's own colours (`Reset`) the
/// theme's instead, so a theme's background fills the screen.
/// Whether a base style leaves the terminal's own colours: then there is
/// nothing to fill.
pub fn is_terminal_default(base: Style) -> bool {
    base.fg.is_none_or(|c| c == Color::Reset) && base.bg.is_none_or(|c| c == Color::Reset)
}

pub fn fill_reset(cell: &mut ratatui::buffer::Cell, base: Style) {
    if cell.bg == Color::Reset {
        cell.bg = base.bg.unwrap_or(Color::Reset);
    }
    if cell.fg == Color::Reset {
        cell.fg = base.fg.unwrap_or(Color::Reset);
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
            border_focus: t.border_focus,
            status_bar: base.patch(t.status_bg).patch(t.status_fg),
            reasoning: t.reasoning,
            tool_name: t.tool_name,
        }
    }
}
