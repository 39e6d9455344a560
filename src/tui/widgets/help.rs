//! The help overlay: every key from the binding table, by where it applies.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::text::fit as truncate;
use crate::tui::keys::{Action, KeyMap, Scope};
use crate::tui::styles::Styles;

pub fn lines(keys: &KeyMap, styles: &Styles) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let groups = [
        (Scope::Global, "Anywhere"),
        (Scope::Prompt, "Prompt"),
        (Scope::Transcript, "Transcript (Tab to focus)"),
        (Scope::Dialog, "Permission dialog"),
    ];
    for (scope, title) in groups {
        if !out.is_empty() {
            out.push(Line::default());
        }
        out.push(Line::from(Span::styled(title, styles.accent)));
        for a in Action::all().filter(|a| a.scope() == scope) {
            out.push(Line::from(vec![
                Span::styled(format!("  {:<22}", keys.keys_for(a)), styles.user),
                Span::styled(a.description(), styles.text),
            ]));
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        "Keys can be changed in the config's [keys] table: action = \"ctrl+g\".",
        styles.dim,
    )));
    out
}

pub fn render(area: Rect, buf: &mut Buffer, keys: &KeyMap, styles: &Styles, scroll: &mut u16) {
    let w = area.width.saturating_sub(4).clamp(area.width.min(30), 76);
    let content = lines(keys, styles);
    let h = (content.len() as u16 + 2).min(area.height);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(rect, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(styles.accent)
        .title(Span::styled(
            " Keys — Esc closes, j/k scroll ",
            styles.accent,
        ));
    let inner = block.inner(rect);
    block.render(rect, buf);
    let max = (content.len() as u16).saturating_sub(inner.height);
    *scroll = (*scroll).min(max);
    for (i, l) in content
        .iter()
        .skip(*scroll as usize)
        .take(inner.height as usize)
        .enumerate()
    {
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        if text.chars().count() > inner.width as usize {
            let cut = Line::from(Span::styled(
                truncate(&text, inner.width as usize),
                styles.text,
            ));
            buf.set_line(inner.x, inner.y + i as u16, &cut, inner.width);
        } else {
            buf.set_line(inner.x, inner.y + i as u16, l, inner.width);
        }
    }
}
