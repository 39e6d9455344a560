//! The session browser: this project's sessions (or all), filtered by full
//! text as you type, with a preview of the selected one.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::keys::{Action, KeyMap};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

/// One row of the list.
pub use crate::sessions::SessionEntry as BrowserEntry;
use crate::sessions::SessionId;
use crate::sessions::age;

#[derive(Debug, Clone, PartialEq)]
pub enum BrowserAction {
    None,
    Close,
    /// Ask the store: list (empty query) or search, in this project or all.
    Query {
        text: String,
        all_projects: bool,
        /// Rows already shown: a non-zero offset asks for the next page.
        offset: usize,
    },
    /// Two things to do, in order.
    Then(Box<BrowserAction>, Box<BrowserAction>),
    /// Load the preview of this session.
    Preview(SessionId),
    Resume(SessionId),
    Rename {
        id: SessionId,
        title: String,
    },
    Delete(SessionId),
    Fork(SessionId),
    Export {
        id: SessionId,
        json: bool,
    },
    /// Pick a prompt of this session to continue from (a fork before it).
    Rewind(SessionId),
}

#[derive(Debug, Clone, PartialEq)]
enum Prompt {
    None,
    Rename(String),
    ConfirmDelete,
    ExportFormat,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct BrowserStyles {
    pub border: Style,
    pub text: Style,
    pub dim: Style,
    pub selected: Style,
    pub matched: Style,
    pub warning: Style,
}

/// The keys, most useful first, as many as fit in `width`; "Esc close"
/// always ends the line.
fn key_help(width: usize) -> String {
    const KEYS: &[&str] = &[
        "Enter resume",
        "↑↓ move",
        "Ctrl+R rename",
        "Ctrl+D delete",
        "Ctrl+F fork",
        "Ctrl+W rewind",
        "Ctrl+E export",
    ];
    const LAST: &str = "Esc close";
    let mut out = String::new();
    for k in KEYS {
        let len = out.chars().count() + k.chars().count() + 3 + LAST.chars().count();
        if len > width {
            break;
        }
        out.push_str(k);
        out.push_str(" · ");
    }
    out.push_str(LAST);
    out
}

#[derive(Debug, Clone)]
pub struct SessionBrowser {
    query: String,
    pub all_projects: bool,
    entries: Vec<BrowserEntry>,
    selected: usize,
    scroll: usize,
    prompt: Prompt,
    preview: Option<(SessionId, Vec<String>)>,
    now_ms: i64,
    /// The list may go on past what is shown (the last page was full).
    more: bool,
    /// The next page has been asked for.
    loading_more: bool,
}

/// Sessions listed per page; the next page loads as the selection nears
/// the end of the list.
pub use crate::sessions::PAGE as BROWSER_PAGE;

impl SessionBrowser {
    /// A new browser; the caller runs the returned query.
    pub fn open(now_ms: i64) -> (SessionBrowser, BrowserAction) {
        let b = SessionBrowser {
            query: String::new(),
            all_projects: false,
            entries: Vec::new(),
            selected: 0,
            scroll: 0,
            prompt: Prompt::None,
            preview: None,
            now_ms,
            more: false,
            loading_more: false,
        };
        let q = b.query_action();
        (b, q)
    }

    /// The query that reloads the list as it is now.
    pub fn query_action(&self) -> BrowserAction {
        BrowserAction::Query {
            text: self.query.clone(),
            all_projects: self.all_projects,
            offset: 0,
        }
    }

    /// Results arrived for `query` (a later page when `offset` > 0).
    /// Returns the preview to load.
    pub fn set_entries(
        &mut self,
        query: &str,
        entries: Vec<BrowserEntry>,
        now_ms: i64,
        offset: usize,
    ) -> BrowserAction {
        if query != self.query {
            return BrowserAction::None;
        }
        self.now_ms = now_ms;
        self.more = query.trim().is_empty() && entries.len() >= BROWSER_PAGE;
        if offset > 0 {
            if offset == self.entries.len() && self.loading_more {
                self.entries.extend(entries);
            }
            self.loading_more = false;
            return BrowserAction::None;
        }
        self.loading_more = false;
        self.entries = entries;
        self.selected = 0;
        self.scroll = 0;
        self.preview_action()
    }

    pub fn set_preview(&mut self, id: &SessionId, lines: Vec<String>) {
        if self.selected_id() == Some(id) {
            self.preview = Some((id.clone(), lines));
        }
    }

    pub fn selected_id(&self) -> Option<&SessionId> {
        self.entries.get(self.selected).map(|e| &e.id)
    }

    fn preview_action(&mut self) -> BrowserAction {
        match self.selected_id().cloned() {
            Some(id) => {
                if self.preview.as_ref().map(|p| &p.0) != Some(&id) {
                    self.preview = None;
                }
                BrowserAction::Preview(id)
            }
            None => {
                self.preview = None;
                BrowserAction::None
            }
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, keys: &KeyMap) -> BrowserAction {
        let action = self.handle_key_inner(key, keys);
        let near_end = self.selected + 20 >= self.entries.len();
        if near_end && self.more && !self.loading_more && matches!(self.prompt, Prompt::None) {
            self.loading_more = true;
            let next = BrowserAction::Query {
                text: self.query.clone(),
                all_projects: self.all_projects,
                offset: self.entries.len(),
            };
            return BrowserAction::Then(Box::new(action), Box::new(next));
        }
        action
    }

    fn handle_key_inner(&mut self, key: KeyEvent, keys: &KeyMap) -> BrowserAction {
        if let Some(action) = self.prompt_key(key, keys) {
            return action;
        }
        if let Some(action) = self.move_key(key, keys) {
            return action;
        }
        if let Some(action) = self.session_key(key, keys) {
            return action;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if keys.is(Action::PickerClear, &key) {
            self.query.clear();
            return self.query_action();
        }
        match key.code {
            _ if keys.is(Action::TextDeleteBack, &key) => {
                if self.query.pop().is_some() {
                    return self.query_action();
                }
                BrowserAction::None
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.query_action()
            }
            _ => BrowserAction::None,
        }
    }

    /// A key while a question is open (the new title, delete?, which
    /// format); `None` when there is none.
    fn prompt_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<BrowserAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let action = match &mut self.prompt {
            Prompt::None => return None,
            Prompt::Rename(title) => {
                match key.code {
                    _ if keys.is(Action::TextCancel, &key) => self.prompt = Prompt::None,
                    _ if keys.is(Action::TextSubmit, &key) => {
                        let title = title.trim().to_string();
                        self.prompt = Prompt::None;
                        if let Some(id) = self.selected_id().cloned()
                            && !title.is_empty()
                        {
                            if let Some(e) = self.entries.get_mut(self.selected) {
                                e.title = title.clone();
                            }
                            return Some(BrowserAction::Rename { id, title });
                        }
                    }
                    _ if keys.is(Action::TextDeleteBack, &key) => {
                        title.pop();
                    }
                    KeyCode::Char(c) if !ctrl => title.push(c),
                    _ => {}
                }
                BrowserAction::None
            }
            Prompt::ExportFormat => {
                self.prompt = Prompt::None;
                let json = if keys.is(Action::BrowserExportMarkdown, &key) {
                    false
                } else if keys.is(Action::BrowserExportJson, &key) {
                    true
                } else {
                    return Some(BrowserAction::None);
                };
                match self.selected_id() {
                    Some(id) => BrowserAction::Export {
                        id: id.clone(),
                        json,
                    },
                    None => BrowserAction::None,
                }
            }
            Prompt::ConfirmDelete => {
                self.prompt = Prompt::None;
                match self.selected_id().cloned() {
                    Some(id) if keys.is(Action::BrowserConfirmDelete, &key) => {
                        self.entries.remove(self.selected);
                        self.selected = self.selected.min(self.entries.len().saturating_sub(1));
                        BrowserAction::Delete(id)
                    }
                    _ => BrowserAction::None,
                }
            }
        };
        Some(action)
    }

    /// Closing, resuming, moving through the list, switching its scope.
    fn move_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<BrowserAction> {
        let last = self.entries.len().saturating_sub(1);
        let action = if keys.is(Action::BrowserClose, &key) {
            BrowserAction::Close
        } else if keys.is(Action::BrowserResume, &key) {
            self.with_selected(BrowserAction::Resume)
        } else if keys.is(Action::BrowserPrev, &key) {
            self.selected = self.selected.saturating_sub(1);
            self.preview_action()
        } else if keys.is(Action::BrowserNext, &key) {
            self.selected = (self.selected + 1).min(last);
            self.preview_action()
        } else if keys.is(Action::BrowserPageUp, &key) {
            self.selected = self.selected.saturating_sub(10);
            self.preview_action()
        } else if keys.is(Action::BrowserPageDown, &key) {
            self.selected = (self.selected + 10).min(last);
            self.preview_action()
        } else if keys.is(Action::BrowserScope, &key) {
            self.all_projects = !self.all_projects;
            self.query_action()
        } else {
            return None;
        };
        Some(action)
    }

    /// What to do with the selected session: rename, delete, fork, export,
    /// continue from before a prompt.
    fn session_key(&mut self, key: KeyEvent, keys: &KeyMap) -> Option<BrowserAction> {
        let selected = self.selected_id().is_some();
        let action = if keys.is(Action::BrowserRename, &key) {
            if let Some(e) = self.entries.get(self.selected) {
                self.prompt = Prompt::Rename(e.title.clone());
            }
            BrowserAction::None
        } else if keys.is(Action::BrowserDelete, &key) {
            if selected {
                self.prompt = Prompt::ConfirmDelete;
            }
            BrowserAction::None
        } else if keys.is(Action::BrowserFork, &key) {
            self.with_selected(BrowserAction::Fork)
        } else if keys.is(Action::BrowserExport, &key) {
            if selected {
                self.prompt = Prompt::ExportFormat;
            }
            BrowserAction::None
        } else if keys.is(Action::BrowserRewind, &key) {
            self.with_selected(BrowserAction::Rewind)
        } else {
            return None;
        };
        Some(action)
    }

    /// `make(id)` of the selected session, or nothing when none is.
    fn with_selected(&self, make: fn(SessionId) -> BrowserAction) -> BrowserAction {
        self.selected_id()
            .cloned()
            .map(make)
            .unwrap_or(BrowserAction::None)
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, st: &BrowserStyles) {
        Clear.render(area, buf);
        let scope = if self.all_projects {
            "all projects"
        } else {
            "this project"
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(st.border)
            .title(format!(" Sessions — {scope} (Tab: toggle) "));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 3 || inner.width < 10 {
            return;
        }
        let [search, body, help] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(1),
        ])
        .areas(inner);
        let search_line = match &self.prompt {
            Prompt::Rename(t) => Line::from(vec![
                Span::styled("rename: ", st.warning),
                Span::styled(t.clone(), st.text),
                Span::styled("▏", st.dim),
            ]),
            Prompt::ConfirmDelete => Line::styled(
                "Delete this session and its history? y to confirm, any other key to keep it",
                st.warning,
            ),
            Prompt::ExportFormat => Line::styled(
                "Export as m markdown (Enter) or j JSON? Any other key cancels",
                st.warning,
            ),
            Prompt::None => Line::from(vec![
                Span::styled("search: ", st.dim),
                Span::styled(self.query.clone(), st.text),
                Span::styled("▏", st.dim),
                Span::styled(format!("  {} sessions", self.entries.len()), st.dim),
            ]),
        };
        Paragraph::new(search_line).render(search, buf);

        Paragraph::new(Line::styled(key_help(help.width as usize), st.dim)).render(help, buf);
        let (list_area, preview_area) = if body.width >= 90 {
            let [l, p] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                    .areas(body);
            (l, Some(p))
        } else {
            (body, None)
        };
        self.render_list(list_area, buf, st);
        if let Some(p) = preview_area {
            self.render_preview(p, buf, st);
        }
    }

    fn render_list(&mut self, area: Rect, buf: &mut Buffer, st: &BrowserStyles) {
        let per_entry = 3usize;
        let rows = (area.height as usize / per_entry).max(1);
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + rows {
            self.scroll = self.selected + 1 - rows;
        }
        let mut lines = Vec::new();
        if self.entries.is_empty() {
            let msg = if self.query.is_empty() {
                "No sessions yet."
            } else {
                "Nothing matches."
            };
            lines.push(Line::styled(msg, st.dim));
        }
        let width = area.width as usize;
        for (i, e) in self.entries.iter().enumerate().skip(self.scroll).take(rows) {
            let sel = i == self.selected;
            let base = if sel { st.selected } else { st.text };
            let marker = if sel { "▌ " } else { "  " };
            let title = if e.title.trim().is_empty() {
                "(untitled)"
            } else {
                e.title.as_str()
            };
            let meta = format!(
                "  {} · {} msgs",
                age(self.now_ms, e.updated_at),
                e.message_count
            );
            lines.push(Line::from(vec![
                Span::styled(marker, base),
                Span::styled(
                    crate::text::clip(title, width.saturating_sub(meta.len() + 2)),
                    base.add_modifier(Modifier::BOLD),
                ),
                Span::styled(meta, st.dim),
            ]));
            let second = match &e.snippet {
                Some(snip) => highlight_snippet(snip, width.saturating_sub(4), st),
                None => {
                    let mut l = Line::styled(
                        crate::text::clip(
                            &crate::text::one_line(&e.first_prompt),
                            width.saturating_sub(4),
                        ),
                        st.dim,
                    );
                    if self.all_projects {
                        l.spans
                            .push(Span::styled(format!("  [{}]", e.project), st.dim));
                    }
                    l
                }
            };
            let mut second = second;
            second.spans.insert(0, Span::raw("    "));
            lines.push(second);
            lines.push(Line::raw(""));
        }
        Paragraph::new(lines).render(area, buf);
    }

    fn render_preview(&self, area: Rect, buf: &mut Buffer, st: &BrowserStyles) {
        let block = Block::default()
            .borders(Borders::LEFT)
            .border_style(st.border);
        let inner = block.inner(area);
        block.render(area, buf);
        let lines: Vec<Line> = match &self.preview {
            Some((_, text)) => text
                .iter()
                .map(|l| Line::styled(l.clone(), st.text))
                .collect(),
            None if self.entries.is_empty() => Vec::new(),
            None => vec![Line::styled("loading…", st.dim)],
        };
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}

/// A snippet with its matched words highlighted.
fn highlight_snippet(snippet: &str, max: usize, st: &BrowserStyles) -> Line<'static> {
    let flat = crate::text::one_line(snippet);
    let mut spans = Vec::new();
    let mut used = 0;
    let mut matched = false;
    let mut cur = String::new();
    let flush = |cur: &mut String, matched: bool, spans: &mut Vec<Span<'static>>| {
        if !cur.is_empty() {
            let style = if matched { st.matched } else { st.dim };
            spans.push(Span::styled(std::mem::take(cur), style));
        }
    };
    for ch in flat.chars() {
        match ch {
            '\u{1}' => {
                flush(&mut cur, matched, &mut spans);
                matched = true;
            }
            '\u{2}' => {
                flush(&mut cur, matched, &mut spans);
                matched = false;
            }
            c => {
                if used >= max {
                    break;
                }
                used += 1;
                cur.push(c);
            }
        }
    }
    flush(&mut cur, matched, &mut spans);
    Line::from(spans)
}

#[cfg(test)]
#[path = "browser_tests.rs"]
mod tests;
