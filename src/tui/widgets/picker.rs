//! A filterable list in a popup: the command palette, the `@` file picker,
//! the model and theme pickers.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::keys::{Action, KeyMap};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::tui::fuzzy::{Fuzzy, Hit};

#[derive(Debug, Clone, PartialEq)]
pub struct PickerItem {
    pub label: String,
    /// Shown dimmed after the label.
    pub detail: String,
    /// What choosing it yields.
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PickerAction {
    None,
    Cancel,
    Choose(String),
    /// The highlighted item changed (for live previews such as themes).
    Moved(String),
}

/// The styles a picker is drawn with.
#[derive(Debug, Clone, Copy, Default)]
pub struct PickerStyles {
    pub border: Style,
    pub text: Style,
    pub detail: Style,
    pub selected: Style,
    pub matched: Style,
}

#[derive(Clone)]
pub struct Picker {
    pub title: String,
    items: Vec<PickerItem>,
    labels: Vec<String>,
    query: String,
    hits: Vec<Hit>,
    selected: usize,
    scroll: usize,
    fuzzy: Fuzzy,
    limit: usize,
}

impl Picker {
    pub fn new(title: impl Into<String>, items: Vec<PickerItem>, paths: bool) -> Picker {
        let labels = items.iter().map(|i| i.label.clone()).collect();
        let mut p = Picker {
            title: title.into(),
            items,
            labels,
            query: String::new(),
            hits: Vec::new(),
            selected: 0,
            scroll: 0,
            fuzzy: Fuzzy::new(paths),
            limit: 500,
        };
        p.refilter();
        p
    }

    /// Starts with `query` typed (e.g. what followed `@`).
    pub fn with_query(mut self, query: &str) -> Picker {
        self.query = query.to_string();
        self.refilter();
        self
    }

    /// Highlights the item with this value, if present.
    pub fn select_value(&mut self, value: &str) {
        if let Some(pos) = self
            .hits
            .iter()
            .position(|h| self.items[h.index].value == value)
        {
            self.selected = pos;
        }
    }

    pub fn query(&self) -> &str {
        &self.query
    }

    pub fn selected_value(&self) -> Option<&str> {
        self.hits
            .get(self.selected)
            .map(|h| self.items[h.index].value.as_str())
    }

    pub fn visible_count(&self) -> usize {
        self.hits.len()
    }

    fn refilter(&mut self) {
        self.hits = self.fuzzy.rank(&self.query, &self.labels, self.limit);
        // The exact name, then names starting with what was typed, first:
        // `mode` must pick the mode command, not `model`.
        let typed = self.query.trim().trim_start_matches('/').to_lowercase();
        if !typed.is_empty() {
            let labels = &self.labels;
            self.hits.sort_by_key(|h| {
                let label = labels[h.index].trim_start_matches('/').to_lowercase();
                if label == typed {
                    0
                } else if label.starts_with(&typed) {
                    1
                } else {
                    2
                }
            });
        }
        self.selected = 0;
        self.scroll = 0;
    }

    fn moved(&self) -> PickerAction {
        self.selected_value()
            .map(|v| PickerAction::Moved(v.to_string()))
            .unwrap_or(PickerAction::None)
    }

    pub fn handle_key(&mut self, key: KeyEvent, keys: &KeyMap) -> PickerAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if keys.is(Action::PickerCancel, &key) {
            return PickerAction::Cancel;
        }
        if keys.is(Action::PickerChoose, &key) {
            return self
                .selected_value()
                .map(|v| PickerAction::Choose(v.to_string()))
                .unwrap_or(PickerAction::None);
        }
        if keys.is(Action::PickerPrev, &key) {
            self.selected = self.selected.saturating_sub(1);
            return self.moved();
        }
        if keys.is(Action::PickerNext, &key) {
            if self.selected + 1 < self.hits.len() {
                self.selected += 1;
            }
            return self.moved();
        }
        if keys.is(Action::PickerPageUp, &key) {
            self.selected = self.selected.saturating_sub(10);
            return self.moved();
        }
        if keys.is(Action::PickerPageDown, &key) {
            self.selected = (self.selected + 10).min(self.hits.len().saturating_sub(1));
            return self.moved();
        }
        if keys.is(Action::PickerClear, &key) {
            self.query.clear();
            self.refilter();
            return self.moved();
        }
        match key.code {
            _ if keys.is(Action::TextDeleteBack, &key) => {
                if self.query.pop().is_some() {
                    self.refilter();
                    return self.moved();
                }
                PickerAction::None
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.refilter();
                self.moved()
            }
            _ => PickerAction::None,
        }
    }

    /// Draws the picker centred in `area`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, styles: &PickerStyles) {
        let width = area.width.saturating_sub(4).clamp(10, 90);
        // As tall as the whole list (the query line, the items, the
        // border), at most 20 rows: a short list leaves what is behind it
        // (the transcript a theme previews on) in sight.
        let rows = (self.items.len() as u16).max(1).saturating_add(3);
        let height = area.height.saturating_sub(2).min(rows).clamp(4, 20);
        let popup = Rect {
            x: area.x + area.width.saturating_sub(width) / 2,
            y: area.y + area.height.saturating_sub(height) / 3,
            width: width.min(area.width),
            height: height.min(area.height),
        };
        Clear.render(popup, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(styles.border)
            .title(format!(" {} ", self.title));
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let [input, list] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
        let count = format!(" {}/{}", self.hits.len(), self.items.len());

        Paragraph::new(Line::from(vec![
            Span::styled("› ", styles.matched),
            Span::styled(self.query.clone(), styles.text),
            Span::styled("▏", styles.detail),
            Span::styled(count, styles.detail),
        ]))
        .render(input, buf);
        let rows = list.height as usize;
        if rows == 0 {
            return;
        }
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + rows {
            self.scroll = self.selected + 1 - rows;
        }
        let mut lines = Vec::with_capacity(rows);
        for (i, hit) in self.hits.iter().enumerate().skip(self.scroll).take(rows) {
            let item = &self.items[hit.index];
            let base = if i == self.selected {
                styles.selected
            } else {
                styles.text
            };
            let mut spans = Vec::new();
            for (ci, ch) in item.label.chars().enumerate() {
                let style = if hit.positions.binary_search(&(ci as u32)).is_ok() {
                    base.patch(styles.matched)
                } else {
                    base
                };
                spans.push(Span::styled(ch.to_string(), style));
            }
            if !item.detail.is_empty() {
                spans.push(Span::styled(format!("  {}", item.detail), styles.detail));
            }
            lines.push(Line::from(spans));
        }
        if self.hits.is_empty() {
            lines.push(Line::styled("no matches", styles.detail));
        }
        Paragraph::new(lines).render(list, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn items(names: &[&str]) -> Vec<PickerItem> {
        names
            .iter()
            .map(|n| PickerItem {
                label: n.to_string(),
                detail: String::new(),
                value: n.to_string(),
            })
            .collect()
    }

    #[test]
    fn typing_filters_and_enter_chooses() {
        let mut p = Picker::new(
            "Files",
            items(&["src/main.rs", "src/lib.rs", "Cargo.toml"]),
            true,
        );
        assert_eq!(p.visible_count(), 3);
        for c in "lib".chars() {
            p.handle_key(key(KeyCode::Char(c)), &KeyMap::default());
        }
        assert_eq!(p.visible_count(), 1);
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), &KeyMap::default()),
            PickerAction::Choose("src/lib.rs".into())
        );
        p.handle_key(key(KeyCode::Backspace), &KeyMap::default());
        p.handle_key(key(KeyCode::Backspace), &KeyMap::default());
        p.handle_key(key(KeyCode::Backspace), &KeyMap::default());
        assert_eq!(p.visible_count(), 3);
        assert_eq!(
            p.handle_key(key(KeyCode::Down), &KeyMap::default()),
            PickerAction::Moved("src/lib.rs".into())
        );
        assert_eq!(
            p.handle_key(key(KeyCode::Esc), &KeyMap::default()),
            PickerAction::Cancel
        );
    }

    #[test]
    fn the_exact_then_prefix_match_ranks_first() {
        let mut p = Picker::new("Commands", items(&["/model", "/mode", "/mouse"]), false);
        for c in "mode".chars() {
            p.handle_key(key(KeyCode::Char(c)), &KeyMap::default());
        }
        assert_eq!(p.selected_value(), Some("/mode"));
        p.handle_key(key(KeyCode::Backspace), &KeyMap::default());
        p.handle_key(key(KeyCode::Backspace), &KeyMap::default());
        assert_eq!(p.selected_value(), Some("/model"));
    }

    #[test]
    fn renders_in_a_small_area_without_panicking() {
        let mut p = Picker::new("Commands", items(&["new", "model", "mode"]), false);
        for (w, h) in [(10, 4), (40, 12), (120, 40), (1, 1)] {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| p.render(f.area(), f.buffer_mut(), &PickerStyles::default()))
                .unwrap();
        }
        let mut t = Terminal::new(TestBackend::new(40, 12)).unwrap();
        t.draw(|f| p.render(f.area(), f.buffer_mut(), &PickerStyles::default()))
            .unwrap();
        let screen = format!("{:?}", t.backend().buffer());
        assert!(screen.contains("Commands") && screen.contains("model"));
    }

    #[test]
    fn a_short_list_gets_a_short_box() {
        // The theme picker "previews as you move", but its 4 themes sat in
        // a box of 20 rows that hid the transcript being previewed.
        let mut p = Picker::new(
            "Theme",
            items(&["dark", "light", "high-contrast", "blind"]),
            false,
        );
        let mut t = Terminal::new(TestBackend::new(100, 40)).unwrap();
        t.draw(|f| p.render(f.area(), f.buffer_mut(), &PickerStyles::default()))
            .unwrap();
        let rows = t.backend().to_string();
        let boxed = rows.lines().filter(|l| l.contains('│')).count();
        assert_eq!(boxed, 5, "the query line and four items:\n{rows}");
        // A long list still gets at most 20 rows, and a list cut short by
        // typing keeps its box (it does not jump as the person types).
        let names: Vec<String> = (0..50).map(|i| format!("item {i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut p = Picker::new("Files", items(&names), false);
        p.handle_key(key(KeyCode::Char('7')), &KeyMap::default());
        t.draw(|f| p.render(f.area(), f.buffer_mut(), &PickerStyles::default()))
            .unwrap();
        let rows = t.backend().to_string();
        assert_eq!(rows.lines().filter(|l| l.contains('│')).count(), 18);
    }
}
