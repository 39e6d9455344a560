//! The session browser: this project's sessions (or all), filtered by full
//! text as you type, with a preview of the selected one.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
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

    pub fn handle_key(&mut self, key: KeyEvent) -> BrowserAction {
        let action = self.handle_key_inner(key);
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

    fn handle_key_inner(&mut self, key: KeyEvent) -> BrowserAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match &mut self.prompt {
            Prompt::Rename(title) => {
                match key.code {
                    KeyCode::Esc => self.prompt = Prompt::None,
                    KeyCode::Enter => {
                        let title = title.trim().to_string();
                        self.prompt = Prompt::None;
                        if let Some(id) = self.selected_id()
                            && !title.is_empty()
                        {
                            let id = id.clone();
                            if let Some(e) = self.entries.get_mut(self.selected) {
                                e.title = title.clone();
                            }
                            return BrowserAction::Rename { id, title };
                        }
                    }
                    KeyCode::Backspace => {
                        title.pop();
                    }
                    KeyCode::Char(c) if !ctrl => title.push(c),
                    _ => {}
                }
                return BrowserAction::None;
            }
            Prompt::ExportFormat => {
                self.prompt = Prompt::None;
                let json = match key.code {
                    KeyCode::Char('m') | KeyCode::Char('M') | KeyCode::Enter => false,
                    KeyCode::Char('j') | KeyCode::Char('J') => true,
                    _ => return BrowserAction::None,
                };
                return match self.selected_id() {
                    Some(id) => BrowserAction::Export {
                        id: id.clone(),
                        json,
                    },
                    None => BrowserAction::None,
                };
            }
            Prompt::ConfirmDelete => {
                self.prompt = Prompt::None;
                if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y'))
                    && let Some(id) = self.selected_id().cloned()
                {
                    self.entries.remove(self.selected);
                    self.selected = self.selected.min(self.entries.len().saturating_sub(1));
                    return BrowserAction::Delete(id);
                }
                return BrowserAction::None;
            }
            Prompt::None => {}
        }
        match key.code {
            KeyCode::Esc => BrowserAction::Close,
            KeyCode::Char('c') if ctrl => BrowserAction::Close,
            KeyCode::Enter => self
                .selected_id()
                .map(|id| BrowserAction::Resume(id.clone()))
                .unwrap_or(BrowserAction::None),
            KeyCode::Up => {
                self.selected = self.selected.saturating_sub(1);
                self.preview_action()
            }
            KeyCode::Down => {
                if self.selected + 1 < self.entries.len() {
                    self.selected += 1;
                }
                self.preview_action()
            }
            KeyCode::PageUp => {
                self.selected = self.selected.saturating_sub(10);
                self.preview_action()
            }
            KeyCode::PageDown => {
                self.selected = (self.selected + 10).min(self.entries.len().saturating_sub(1));
                self.preview_action()
            }
            KeyCode::Tab => {
                self.all_projects = !self.all_projects;
                self.query_action()
            }
            KeyCode::Char('r') if ctrl => {
                if let Some(e) = self.entries.get(self.selected) {
                    self.prompt = Prompt::Rename(e.title.clone());
                }
                BrowserAction::None
            }
            KeyCode::Char('d') if ctrl => {
                if self.selected_id().is_some() {
                    self.prompt = Prompt::ConfirmDelete;
                }
                BrowserAction::None
            }
            KeyCode::Char('f') if ctrl => self
                .selected_id()
                .map(|id| BrowserAction::Fork(id.clone()))
                .unwrap_or(BrowserAction::None),
            KeyCode::Char('e') if ctrl => {
                if self.selected_id().is_some() {
                    self.prompt = Prompt::ExportFormat;
                }
                BrowserAction::None
            }
            KeyCode::Char('w') if ctrl => self
                .selected_id()
                .map(|id| BrowserAction::Rewind(id.clone()))
                .unwrap_or(BrowserAction::None),
            KeyCode::Backspace => {
                if self.query.pop().is_some() {
                    return self.query_action();
                }
                BrowserAction::None
            }
            KeyCode::Char('u') if ctrl => {
                self.query.clear();
                self.query_action()
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.query_action()
            }
            _ => BrowserAction::None,
        }
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

/// "3m ago", "2h ago", "5d ago".
#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn entry(id: &str, title: &str, snippet: Option<&str>) -> BrowserEntry {
        BrowserEntry {
            id: id.into(),
            title: title.into(),
            updated_at: 1_000_000 - 120_000,
            message_count: 12,
            first_prompt: format!("prompt of {title}"),
            project: "/p".into(),
            snippet: snippet.map(str::to_string),
        }
    }

    fn screen(b: &mut SessionBrowser, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| b.render(f.area(), f.buffer_mut(), &BrowserStyles::default()))
            .unwrap();
        let buf = t.backend().buffer().clone();
        let mut out = String::new();
        for y in 0..h {
            for x in 0..w {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn typing_queries_and_stale_results_are_ignored() {
        let (mut b, first) = SessionBrowser::open(1_000_000);
        assert_eq!(
            first,
            BrowserAction::Query {
                text: String::new(),
                all_projects: false,
                offset: 0,
            }
        );
        assert_eq!(
            b.handle_key(key(KeyCode::Char('x'))),
            BrowserAction::Query {
                text: "x".into(),
                all_projects: false,
                offset: 0,
            }
        );
        // Results for the old (empty) query arrive late: ignored.
        assert_eq!(
            b.set_entries("", vec![entry("a", "A", None)], 1_000_000, 0),
            BrowserAction::None
        );
        assert_eq!(b.selected_id().map(SessionId::as_str), None);
        assert_eq!(
            b.set_entries(
                "x",
                vec![entry("b", "B", Some("the \u{1}x\u{2} word"))],
                1_000_000,
                0
            ),
            BrowserAction::Preview("b".into())
        );
        assert_eq!(
            b.handle_key(key(KeyCode::Enter)),
            BrowserAction::Resume("b".into())
        );
        assert_eq!(
            b.handle_key(key(KeyCode::Tab)),
            BrowserAction::Query {
                text: "x".into(),
                all_projects: true,
                offset: 0,
            }
        );
    }

    #[test]
    fn the_next_page_loads_as_the_selection_nears_the_end() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        let page = |from: usize, n: usize| -> Vec<BrowserEntry> {
            (from..from + n)
                .map(|i| entry(&format!("s{i}"), &format!("S{i}"), None))
                .collect()
        };
        b.set_entries("", page(0, BROWSER_PAGE), 1_000_000, 0);
        // Far from the end: no paging.
        assert_eq!(
            b.handle_key(key(KeyCode::Down)),
            BrowserAction::Preview("s1".into())
        );
        b.selected = BROWSER_PAGE - 25;
        let action = b.handle_key(key(KeyCode::PageDown));
        assert_eq!(
            action,
            BrowserAction::Then(
                Box::new(BrowserAction::Preview(
                    format!("s{}", BROWSER_PAGE - 15).into()
                )),
                Box::new(BrowserAction::Query {
                    text: String::new(),
                    all_projects: false,
                    offset: BROWSER_PAGE,
                })
            )
        );
        // Only one request at a time.
        assert!(matches!(
            b.handle_key(key(KeyCode::Down)),
            BrowserAction::Preview(_)
        ));
        b.set_entries("", page(BROWSER_PAGE, 7), 1_000_000, BROWSER_PAGE);
        assert_eq!(b.entries.len(), BROWSER_PAGE + 7);
        assert!(!b.more, "a short page is the last one");
        b.selected = BROWSER_PAGE + 5;
        assert!(matches!(
            b.handle_key(key(KeyCode::Down)),
            BrowserAction::Preview(_)
        ));
    }

    #[test]
    fn export_asks_for_the_format() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        b.set_entries("", vec![entry("a", "A", None)], 1_000_000, 0);
        assert_eq!(b.handle_key(ctrl('e')), BrowserAction::None);
        assert!(screen(&mut b, 100, 8).contains("j JSON"));
        assert_eq!(
            b.handle_key(key(KeyCode::Char('j'))),
            BrowserAction::Export {
                id: "a".into(),
                json: true
            }
        );
        b.handle_key(ctrl('e'));
        assert_eq!(
            b.handle_key(key(KeyCode::Enter)),
            BrowserAction::Export {
                id: "a".into(),
                json: false
            }
        );
        b.handle_key(ctrl('e'));
        assert_eq!(b.handle_key(key(KeyCode::Esc)), BrowserAction::None);
        assert!(screen(&mut b, 100, 8).contains("search:"));
    }

    #[test]
    fn rename_and_confirmed_delete() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        b.set_entries(
            "",
            vec![entry("a", "Old", None), entry("b", "B", None)],
            1_000_000,
            0,
        );
        b.handle_key(ctrl('r'));
        for _ in 0..3 {
            b.handle_key(key(KeyCode::Backspace));
        }
        for c in "New".chars() {
            b.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(
            b.handle_key(key(KeyCode::Enter)),
            BrowserAction::Rename {
                id: "a".into(),
                title: "New".into()
            }
        );
        b.handle_key(ctrl('d'));
        assert_eq!(b.handle_key(key(KeyCode::Char('n'))), BrowserAction::None);
        b.handle_key(ctrl('d'));
        assert_eq!(
            b.handle_key(key(KeyCode::Char('y'))),
            BrowserAction::Delete("a".into())
        );
        assert_eq!(b.selected_id().map(SessionId::as_str), Some("b"));
    }

    #[test]
    fn renders_list_snippet_and_preview() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        b.set_entries("cargo", vec![], 1_000_000, 0);
        b.handle_key(key(KeyCode::Char('c')));
        b.set_entries(
            "c",
            vec![entry(
                "a",
                "Fix the build",
                Some("ran \u{1}cargo\u{2} build"),
            )],
            1_000_000,
            0,
        );
        b.set_preview(
            &SessionId::from("a"),
            vec!["> fix the build".into(), "Done.".into()],
        );
        let s = screen(&mut b, 120, 20);
        assert!(s.contains("Fix the build"), "{s}");
        assert!(s.contains("2m ago · 12 msgs"), "{s}");
        assert!(s.contains("ran cargo build"), "{s}");
        assert!(s.contains("> fix the build"), "{s}");
        for (w, h) in [(40, 12), (10, 3), (200, 60)] {
            screen(&mut b, w, h);
        }
    }

    /// The browser drawn with matched text marked `[like this]`, for
    /// snapshots that show where the highlight falls.
    fn marked(b: &mut SessionBrowser, w: u16, h: u16) -> String {
        use ratatui::style::{Modifier, Style};
        let styles = BrowserStyles {
            matched: Style::new().add_modifier(Modifier::UNDERLINED),
            ..BrowserStyles::default()
        };
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| b.render(f.area(), f.buffer_mut(), &styles))
            .unwrap();
        let buf = t.backend().buffer().clone();
        let mut out = String::new();
        for y in 0..h {
            let mut inside = false;
            for x in 0..w {
                let cell = &buf[(x, y)];
                let m = cell.modifier.contains(Modifier::UNDERLINED);
                if m != inside {
                    out.push(if m { '[' } else { ']' });
                    inside = m;
                }
                out.push_str(cell.symbol());
            }
            if inside {
                out.push(']');
            }
            out.push('\n');
        }
        out
    }

    fn three_sessions() -> Vec<BrowserEntry> {
        let mut older = entry("b", "Speed up the parser", None);
        older.updated_at = 1_000_000 - 3 * 86_400_000;
        older.message_count = 48;
        let mut oldest = entry("c", "", None);
        oldest.updated_at = 1_000_000 - 40 * 86_400_000;
        oldest.first_prompt = "why does CI fail on arm64?".into();
        vec![entry("a", "Fix the build", None), older, oldest]
    }

    #[test]
    fn snapshot_of_the_list() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        b.set_entries("", three_sessions(), 1_000_000, 0);
        insta::assert_snapshot!(marked(&mut b, 100, 12));
    }

    #[test]
    fn snapshot_of_a_search_with_its_highlight() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        for c in "linker".chars() {
            b.handle_key(key(KeyCode::Char(c)));
        }
        let mut hit = entry(
            "b",
            "Speed up the parser",
            Some("the \u{1}linker\u{2} ran out of memory; set \u{1}linker\u{2} = lld"),
        );
        hit.message_count = 48;
        b.set_entries("linker", vec![hit], 1_000_000, 0);
        insta::assert_snapshot!(marked(&mut b, 100, 10));
    }

    #[test]
    fn snapshot_of_the_preview() {
        let (mut b, _) = SessionBrowser::open(1_000_000);
        b.set_entries("", three_sessions(), 1_000_000, 0);
        b.set_preview(
            &SessionId::from("a"),
            vec![
                "› the build fails after the upgrade".into(),
                "  ⚙ bash cargo build".into(),
                "    ✗ error[E0432]: unresolved import `foo::bar`".into(),
                "The import moved; fixing it.".into(),
                "  ⚙ edit src/main.rs +1 −1".into(),
                "Fixed: the build passes.".into(),
            ],
        );
        insta::assert_snapshot!(marked(&mut b, 110, 14));
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(10_000, 9_000), "just now");
        assert_eq!(age(4_000_000, 0), "1h ago");
        assert_eq!(age(90_000_000_000, 0), "34mo ago");
    }
}
