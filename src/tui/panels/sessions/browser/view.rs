//! Drawing the session browser: the list (the current session marked),
//! the preview beside it when wide, below it when tall enough, and the
//! keys, shortened to fit 80 columns.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::{BrowserStyles, Prompt, SessionBrowser};
use crate::sessions::age;

impl SessionBrowser {
    /// How a sub-agent's row names its parent: the parent's title when it
    /// is listed, else the start of its id.
    fn parent_name(&self, parent: &crate::sessions::SessionId) -> String {
        match self.entries.iter().find(|e| &e.id == parent) {
            Some(p) if !p.title.trim().is_empty() => {
                format!("“{}”", crate::text::truncate_chars(p.title.trim(), 30))
            }
            Some(p) if !p.first_prompt.trim().is_empty() => format!(
                "“{}”",
                crate::text::truncate_chars(&crate::text::one_line(&p.first_prompt), 30)
            ),
            _ => parent.to_string().chars().take(8).collect(),
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
                Span::styled(
                    format!(
                        "  {n} {}",
                        crate::text::plural(self.entries.len(), "session", "sessions"),
                        n = self.entries.len()
                    ),
                    st.dim,
                ),
            ]),
        };
        Paragraph::new(search_line).render(search, buf);

        let keys = match self.prompt {
            Prompt::Rename(_) => RENAME_KEYS.to_string(),
            _ => key_help(help.width as usize),
        };
        Paragraph::new(Line::styled(keys, st.dim)).render(help, buf);
        let body = self.render_message(body, buf, st);
        let (list_area, preview_area) = split(body);
        self.render_list(list_area, buf, st);
        if let Some(p) = preview_area {
            self.render_preview(p, buf, st, body.width >= 90);
        }
    }

    /// The last action's outcome on the bottom row of `body`; what is left.
    fn render_message(&self, body: Rect, buf: &mut Buffer, st: &BrowserStyles) -> Rect {
        let Some((text, error)) = &self.message else {
            return body;
        };
        if body.height < 4 {
            return body;
        }
        let [rest, row] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(body);
        let style = if *error { st.warning } else { st.matched };
        let text = crate::text::clip(&crate::text::one_line(text), row.width as usize);
        Paragraph::new(Line::styled(text, style)).render(row, buf);
        rest
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
            let current = self.current.as_ref() == Some(&e.id);
            let title = if e.title.trim().is_empty() {
                "(untitled)"
            } else {
                e.title.as_str()
            };
            let meta = format!(
                "  {} · {} msgs{}",
                age(self.now_ms, e.updated_at),
                e.message_count,
                if current { " · current" } else { "" }
            );
            let mark = match (current, &e.subagent_of) {
                (true, _) => "● ",
                (false, Some(_)) => "↳ ",
                (false, None) => "",
            };
            let room = width.saturating_sub(crate::text::width(&meta) + 2 + mark.len().min(2));
            lines.push(Line::from(vec![
                Span::styled(marker, base),
                Span::styled(mark, st.matched),
                Span::styled(
                    crate::text::clip(title, room),
                    base.add_modifier(Modifier::BOLD),
                ),
                Span::styled(meta, st.dim),
            ]));
            let second = match &e.snippet {
                Some(snip) => highlight_snippet(snip, width.saturating_sub(4), st),
                None => {
                    let prompt = crate::text::one_line(&e.first_prompt);
                    let text = match &e.subagent_of {
                        Some(p) => format!("sub-agent of {} · {prompt}", self.parent_name(p)),
                        None => prompt,
                    };
                    let mut l =
                        Line::styled(crate::text::clip(&text, width.saturating_sub(4)), st.dim);
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

    /// The preview, `beside` the list or below it.
    fn render_preview(&self, area: Rect, buf: &mut Buffer, st: &BrowserStyles, beside: bool) {
        let block = Block::default()
            .borders(if beside { Borders::LEFT } else { Borders::TOP })
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

/// Where the list and the preview go: side by side when wide, the
/// preview below when tall enough, no preview on a small screen.
fn split(body: Rect) -> (Rect, Option<Rect>) {
    if body.width >= 90 {
        let [l, p] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(body);
        (l, Some(p))
    } else if body.height >= 14 {
        let [l, p] =
            Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(body);
        (l, Some(p))
    } else {
        (body, None)
    }
}

/// The keys while a new title is typed.
const RENAME_KEYS: &str = "Enter save the title · Esc keep the old one · Ctrl+U clear";

/// The keys, most useful first, as many as fit in `width`: written out
/// when there is room, abbreviated (`^R rename`) at 80 columns; "Esc
/// close" always ends the line.
fn key_help(width: usize) -> String {
    const KEYS: &[(&str, &str)] = &[
        ("Enter resume", "⏎ resume"),
        ("↑↓ move", ""),
        ("Ctrl+R rename", "^R rename"),
        ("Ctrl+D delete", "^D delete"),
        ("Ctrl+F fork", "^F fork"),
        ("Ctrl+W rewind", "^W rewind"),
        ("Ctrl+E export", "^E export"),
    ];
    let long: Vec<&str> = KEYS.iter().map(|k| k.0).collect();
    let short: Vec<&str> = KEYS.iter().map(|k| k.1).filter(|k| !k.is_empty()).collect();
    let full = |keys: &[&str], sep: &str| format!("{}{sep}Esc close", keys.join(sep));
    let wide = full(&long, " · ");
    if crate::text::width(&wide) <= width {
        return wide;
    }
    let mut keys = short;
    loop {
        let line = full(&keys, "  ");
        if crate::text::width(&line) <= width || keys.is_empty() {
            return line;
        }
        keys.pop();
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
