//! Markdown to styled terminal lines, wrapped to a width.
//!
//! One pass over pulldown-cmark's events. Containers (block quotes, list
//! items) contribute a prefix to every line they hold: a list item's marker on
//! its first line and a hanging indent after, a quote's bar on all. Inline
//! text collects into a paragraph buffer that is wrapped when the block ends,
//! so the cost is linear in the input.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

mod table;

use super::highlight;
use super::theme::Theme;
use super::wrap::{pad_to, spans_width, wrap_code, wrap_spans};
use crate::text::width as str_width;

/// A fenced or indented code block found in a markdown text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    pub lang: Option<String>,
    pub code: String,
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
}

fn fence_lang(kind: &CodeBlockKind) -> Option<String> {
    match kind {
        CodeBlockKind::Fenced(info) => info
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
            .next()
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        CodeBlockKind::Indented => None,
    }
}

/// The code blocks of `text`, in order (for "copy code block" actions).
pub fn code_blocks(text: &str) -> Vec<CodeBlock> {
    let mut out = Vec::new();
    let mut cur: Option<CodeBlock> = None;
    for ev in Parser::new_ext(text, options()) {
        match ev {
            Event::Start(Tag::CodeBlock(kind)) => {
                cur = Some(CodeBlock {
                    lang: fence_lang(&kind),
                    code: String::new(),
                })
            }
            Event::Text(t) => {
                if let Some(b) = cur.as_mut() {
                    b.code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(cur.take()),
            _ => {}
        }
    }
    out
}

#[derive(Clone)]
struct Container {
    first: Vec<Span<'static>>,
    rest: Vec<Span<'static>>,
    used: bool,
}

struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    head_rows: usize,
    in_head: bool,
}

struct Renderer<'a> {
    theme: &'a Theme,
    width: usize,
    out: Vec<Line<'static>>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    lists: Vec<Option<u64>>,
    links: Vec<(String, usize)>,
    code: Option<(Option<String>, String)>,
    table: Option<Table>,
    need_blank: bool,
}

const BULLETS: [&str; 3] = ["•", "◦", "▪"];

impl<'a> Renderer<'a> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        let span = Span::styled(text.replace('\t', "    "), style);
        match self.table.as_mut() {
            Some(t) => {
                if let Some(cell) = t.rows.last_mut().and_then(|r| r.last_mut()) {
                    cell.push(span);
                }
            }
            None => self.inline.push(span),
        }
    }

    /// The prefix for the next line, and its width. Containers are marked
    /// used unless the line is blank, so a list marker lands on real text.
    fn prefix(&mut self, blank: bool) -> (Vec<Span<'static>>, usize) {
        let mut spans = Vec::new();
        for c in &mut self.containers {
            if c.used {
                spans.extend(c.rest.iter().cloned());
            } else {
                spans.extend(c.first.iter().cloned());
                if !blank {
                    c.used = true;
                }
            }
        }
        let w = spans.iter().map(|s| str_width(&s.content)).sum();
        if w >= self.width {
            // Too deep for this width: drop the prefix rather than overflow.
            return (Vec::new(), 0);
        }
        (spans, w)
    }

    fn avail(&self) -> usize {
        let w: usize = self
            .containers
            .iter()
            .map(|c| {
                let spans = if c.used { &c.rest } else { &c.first };
                spans.iter().map(|s| str_width(&s.content)).sum::<usize>()
            })
            .sum();
        if w >= self.width {
            self.width
        } else {
            self.width - w
        }
    }

    fn emit(&mut self, content: Vec<Span<'static>>) {
        let (mut spans, _) = self.prefix(false);
        spans.extend(content);
        self.out.push(Line::from(spans));
    }

    fn blank(&mut self) {
        let (mut spans, _) = self.prefix(true);
        while let Some(last) = spans.last_mut() {
            let trimmed = last.content.trim_end().to_string();
            if trimmed.is_empty() {
                spans.pop();
            } else {
                last.content = trimmed.into();
                break;
            }
        }
        self.out.push(Line::from(spans));
    }

    fn start_block(&mut self) {
        self.flush();
        if self.need_blank && !self.out.is_empty() {
            self.blank();
        }
        self.need_blank = false;
    }

    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let avail = self.avail();
        for line in wrap_spans(spans, avail) {
            self.emit(line);
        }
    }

    fn start(&mut self, tag: Tag) {
        let t = self.theme;
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                // The level shows in the style, not as the source's `#`s:
                // bold and underlined, bold, then the heading colour only.
                let extra = match level as usize {
                    1 => Modifier::BOLD | Modifier::UNDERLINED,
                    2 => Modifier::BOLD,
                    _ => Modifier::ITALIC,
                };
                self.push_style(|s| s.patch(t.heading).add_modifier(extra));
            }
            Tag::BlockQuote(_) => self.start_quote(),
            Tag::CodeBlock(kind) => {
                self.start_block();
                self.code = Some((fence_lang(&kind), String::new()));
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Tag::Item => self.start_item(),
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let start = self.inline.len();
                self.links.push((dest_url.to_string(), start));
                self.push_style(|s| s.patch(t.link));
            }
            Tag::Image { dest_url, .. } => {
                let start = self.inline.len();
                self.links.push((dest_url.to_string(), start));
                self.push_text("[image: ", t.dim);
                self.push_style(|s| s.patch(t.link));
            }
            Tag::Table(aligns) => self.start_table(aligns),
            Tag::TableHead => {
                if let Some(tb) = self.table.as_mut() {
                    tb.in_head = true;
                    tb.rows.push(Vec::new());
                }
                self.push_style(|s| s.add_modifier(Modifier::BOLD));
            }
            Tag::TableRow => {
                if let Some(tb) = self.table.as_mut() {
                    tb.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|tb| tb.rows.last_mut()) {
                    row.push(Vec::new());
                }
            }
            Tag::FootnoteDefinition(label) => {
                self.start_block();
                self.push_text(&format!("[^{label}]: "), t.dim);
            }
            Tag::HtmlBlock => self.start_block(),
            _ => {}
        }
    }

    /// A list item: its marker (bullet or number) starts the first line.
    fn start_item(&mut self) {
        let t = self.theme;
        self.flush();
        if self.need_blank {
            self.blank();
            self.need_blank = false;
        }
        let depth = self.lists.len().saturating_sub(1);
        let marker = match self.lists.last_mut() {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => format!("{} ", BULLETS[depth % BULLETS.len()]),
        };
        let w = str_width(&marker);
        self.containers.push(Container {
            first: vec![Span::styled(marker, t.accent)],
            rest: vec![Span::raw(" ".repeat(w))],
            used: false,
        });
    }

    fn start_table(&mut self, aligns: Vec<Alignment>) {
        self.start_block();
        self.table = Some(Table {
            aligns,
            rows: Vec::new(),
            head_rows: 0,
            in_head: false,
        });
    }

    fn start_quote(&mut self) {
        let t = self.theme;
        self.start_block();
        let bar = vec![Span::styled(
            "│ ",
            t.quote.remove_modifier(Modifier::ITALIC),
        )];
        self.containers.push(Container {
            first: bar.clone(),
            rest: bar,
            used: false,
        });
        self.push_style(|s| s.patch(t.quote));
    }

    fn end(&mut self, tag: TagEnd) {
        let t = self.theme;
        match tag {
            TagEnd::Paragraph | TagEnd::FootnoteDefinition | TagEnd::HtmlBlock => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.pop_style();
                self.flush();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.pop_style();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(lang.as_deref(), &code);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.need_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if tag == TagEnd::Image {
                    self.push_text("]", t.dim);
                }
                if let Some((url, start)) = self.links.pop() {
                    let shown: String = self
                        .inline
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect();
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && shown.trim() != bare && self.table.is_none() {
                        self.push_text(&format!(" ({url})"), t.dim);
                    }
                }
            }
            TagEnd::TableHead => {
                if let Some(tb) = self.table.as_mut() {
                    tb.in_head = false;
                    tb.head_rows = tb.rows.len();
                }
                self.pop_style();
            }
            TagEnd::Table => {
                if let Some(tb) = self.table.take() {
                    self.render_table(tb);
                }
                self.need_blank = true;
            }
            _ => {}
        }
    }

    fn code_block(&mut self, lang: Option<&str>, code: &str) {
        let t = self.theme;
        // Complete lines keep their line ending for the highlighter, which
        // remembers them; only a line still being written has none.
        let code = code.replace('\t', "    ");
        let avail = self.avail();
        let label = lang.unwrap_or("");
        if !label.is_empty() {
            let label = Span::styled(format!(" {label}"), t.dim.add_modifier(Modifier::ITALIC));
            let first = wrap_code(vec![label], avail, None).swap_remove(0);
            self.emit(first);
        }
        let bg = t.code_bg;
        let mut rows = Vec::new();
        let mut push = |line: &[(Style, String)]| {
            let spans: Vec<Span<'static>> = line
                .iter()
                .map(|(s, text)| Span::styled(text.clone(), bg.patch(*s)))
                .collect();
            rows.extend(wrap_code(
                spans,
                avail,
                Some(Span::styled("↪ ", bg.patch(t.dim))),
            ));
        };
        match lang.and_then(|l| highlight::highlight_segments_cached(&code, l, t)) {
            Some(h) => h.lines().for_each(push),
            None => code
                .strip_suffix('\n')
                .unwrap_or(&code)
                .split('\n')
                .for_each(|l| push(&[(t.base(), l.to_string())])),
        }
        // The shaded box is as wide as the block's widest row and a space,
        // not the whole width: a screen of short code lines would otherwise
        // be mostly padding, drawn (and sent to the terminal) again with
        // every scroll.
        let box_width = rows.iter().map(|r| spans_width(r)).max().unwrap_or(0) + 1;
        for mut row in rows {
            pad_to(&mut row, box_width.min(avail), bg);
            self.emit(row);
        }
    }

    fn render_table(&mut self, tb: Table) {
        table::render(self, tb);
    }
}

/// Renders `text` as lines no wider than `width` columns.
pub fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut r = Renderer {
        theme,
        width: usize::from(width.max(1)),
        out: Vec::new(),
        inline: Vec::new(),
        styles: vec![theme.base().patch(theme.assistant)],
        containers: Vec::new(),
        lists: Vec::new(),
        links: Vec::new(),
        code: None,
        table: None,
        need_blank: false,
    };
    for ev in Parser::new_ext(text, options()) {
        match ev {
            Event::Start(tag) => r.start(tag),
            Event::End(tag) => r.end(tag),
            Event::Text(s) => match r.code.as_mut() {
                Some((_, code)) => code.push_str(&s),
                None => {
                    let st = r.style();
                    r.push_text(&s, st);
                }
            },
            Event::Code(s) => {
                let st = r.style().patch(theme.inline_code);
                r.push_text(&s, st);
            }
            Event::InlineMath(s) | Event::DisplayMath(s) => {
                let st = r.style().patch(theme.inline_code);
                r.push_text(&s, st);
            }
            Event::Html(s) | Event::InlineHtml(s) => {
                let st = theme.dim;
                r.push_text(s.trim_end_matches('\n'), st);
                if s.ends_with('\n') {
                    r.push_text("\n", st);
                }
            }
            Event::FootnoteReference(s) => {
                let st = theme.link;
                r.push_text(&format!("[^{s}]"), st);
            }
            Event::SoftBreak => {
                let st = r.style();
                r.push_text(" ", st);
            }
            Event::HardBreak => {
                let st = r.style();
                r.push_text("\n", st);
            }
            Event::Rule => {
                r.start_block();
                let w = r.avail();
                r.emit(vec![Span::styled("─".repeat(w), theme.border)]);
                r.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let (mark, st) = if done {
                    ("[x] ", theme.success)
                } else {
                    ("[ ] ", theme.dim)
                };
                r.push_text(mark, st);
            }
        }
    }
    if let Some((lang, code)) = r.code.take() {
        r.code_block(lang.as_deref(), &code);
    }
    r.flush();
    r.out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A code block's shaded box is as wide as its widest line and one
    /// space, not the whole width: short code on a wide screen is not
    /// mostly padding, drawn and sent to the terminal with every scroll.
    #[test]
    fn a_code_box_is_as_wide_as_its_widest_line() {
        let theme = Theme::dark();
        let lines = render("```\nab\nabcd\n```\n", 80, &theme);
        let widths: Vec<usize> = (lines.iter())
            .filter(|l| l.spans.iter().any(|s| s.content.contains("ab")))
            .map(|l| spans_width(&l.spans))
            .collect();
        assert_eq!(widths, [5, 5], "{lines:?}");
        // A line longer than the screen wraps within it.
        let long = format!("```\n{}\n```\n", "x".repeat(100));
        let lines = render(&long, 40, &theme);
        assert!(
            lines.iter().all(|l| spans_width(&l.spans) <= 40),
            "{lines:?}"
        );
    }
}
