//! The session browser: this project's sessions (or all), filtered by full
//! text as you type, with a preview of the selected one.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::keys::{Action, KeyMap};
use ratatui::style::Style;

/// One row of the list.
pub use crate::protocol::SessionEntry as BrowserEntry;
use crate::sessions::SessionId;

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
    /// The session this cairn records, marked in the list.
    pub current: Option<SessionId>,
    /// What the last action did (renamed, forked, failed), shown inside
    /// the browser until the next key.
    message: Option<(String, bool)>,
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
            current: None,
            message: None,
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
                let selected = self.selected_id().cloned();
                let mut all = std::mem::take(&mut self.entries);
                all.extend(entries);
                self.entries = under_parents(all);
                if let Some(i) =
                    selected.and_then(|id| self.entries.iter().position(|e| e.id == id))
                {
                    self.selected = i;
                }
            }
            self.loading_more = false;
            return BrowserAction::None;
        }
        self.loading_more = false;
        let entries = under_parents(entries);
        // A reload (after a rename, a fork, a delete) keeps the selection.
        let kept = self
            .selected_id()
            .and_then(|id| entries.iter().position(|e| &e.id == id));
        self.entries = entries;
        self.selected = kept.unwrap_or(0);
        if kept.is_none() {
            self.scroll = 0;
        }
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

    /// Says `text` inside the browser (an error when `error`).
    pub fn tell(&mut self, text: String, error: bool) {
        self.message = Some((text, error));
    }

    pub fn handle_key(&mut self, key: KeyEvent, keys: &KeyMap) -> BrowserAction {
        self.message = None;
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
                    _ => {
                        crate::tui::widgets::text_field::edit(title, &key, keys);
                    }
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
}

mod view;

/// The entries in their order, each sub-agent's session moved to just
/// under the session that started it when that one is listed too.
fn under_parents(entries: Vec<BrowserEntry>) -> Vec<BrowserEntry> {
    let listed: Vec<SessionId> = entries.iter().map(|e| e.id.clone()).collect();
    let (mut children, top): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| {
        e.subagent_of
            .as_ref()
            .is_some_and(|p| listed.contains(p) && *p != e.id)
    });
    let mut out = Vec::with_capacity(listed.len());
    for e in top {
        push_with_children(e, &mut children, &mut out);
    }
    // A cycle no store should hold still loses nothing.
    out.append(&mut children);
    out
}

fn push_with_children(
    e: BrowserEntry,
    children: &mut Vec<BrowserEntry>,
    out: &mut Vec<BrowserEntry>,
) {
    let id = e.id.clone();
    out.push(e);
    while let Some(i) = children
        .iter()
        .position(|c| c.subagent_of.as_ref() == Some(&id))
    {
        let child = children.remove(i);
        push_with_children(child, children, out);
    }
}

#[cfg(test)]
mod tests;
