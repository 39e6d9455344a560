//! The full-screen diff of an edit: scrollable, unified or side by side.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::{Outcome, Panel};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::styles::Styles;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView, highlight_affordable};

pub fn diff_panel(path: &str, old: &str, new: &str) -> Panel {
    Panel::Diff {
        view: Box::new(DiffView::new(path, old, new)),
        highlight: highlight_affordable(old, new),
        side_by_side: None,
        scroll: 0,
    }
}

/// Scrolls and switches the layout; any other key closes the diff.
pub(super) fn handle_key(
    scroll: &mut usize,
    side_by_side: &mut Option<bool>,
    key: KeyEvent,
    keys: &KeyMap,
) -> Outcome {
    if keys.is(Action::PanelDown, &key) {
        *scroll = scroll.saturating_add(1);
    } else if keys.is(Action::PanelUp, &key) {
        *scroll = scroll.saturating_sub(1);
    } else if keys.is(Action::DiffPageDown, &key) {
        *scroll = scroll.saturating_add(20);
    } else if keys.is(Action::PanelPageUp, &key) {
        *scroll = scroll.saturating_sub(20);
    } else if keys.is(Action::DiffTop, &key) {
        *scroll = 0;
    } else if keys.is(Action::ToggleDiffLayout, &key) {
        *side_by_side = Some(!side_by_side.unwrap_or(false));
    } else {
        return Outcome::close();
    }
    Outcome::keep()
}

#[allow(clippy::too_many_arguments)]
pub(super) fn render(
    view: &mut DiffView,
    highlight: bool,
    side_by_side: Option<bool>,
    scroll: &mut usize,
    area: Rect,
    buf: &mut Buffer,
    s: &Styles,
    theme: &Theme,
) {
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
            highlight,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn the_full_screen_diff_scrolls_toggles_and_closes() {
        let theme = Theme::default();
        let styles = Styles::from_theme(&theme);
        let keys = KeyMap::default();
        let old: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 50\n", "line fifty\n");
        let mut p = diff_panel("a.txt", &old, &new);
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 20));
        p.render(
            buf.area,
            &mut buf,
            &styles,
            &theme,
            &crate::tui::keys::KeyMap::default(),
        );
        let text: String = buf.content.iter().map(|c| c.symbol()).collect();
        assert!(text.contains("a.txt +1 −1"), "{text}");
        assert!(text.contains("line 0"), "the top of the whole file");
        let press =
            |p: &mut Panel, code| p.handle_key(KeyEvent::new(code, KeyModifiers::NONE), &keys);
        for _ in 0..2 {
            assert!(press(&mut p, KeyCode::PageDown).keep);
        }
        assert!(press(&mut p, KeyCode::Char('t')).keep);
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 20));
        p.render(
            buf.area,
            &mut buf,
            &styles,
            &theme,
            &crate::tui::keys::KeyMap::default(),
        );
        let text: String = buf.content.iter().map(|c| c.symbol()).collect();
        assert!(
            text.contains("line fifty"),
            "scrolled to the change: {text}"
        );
        assert!(!press(&mut p, KeyCode::Esc).keep);
    }
}
