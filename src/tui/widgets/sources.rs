//! A search the provider ran itself (`web search "rust 2026" · 3 pages`)
//! with the pages it found, and under an answer the sources it cites:
//! numbered titles and their addresses. Everything shown here came from
//! the provider and the web, so it is escaped when the cell is made.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::conversation::{Source, WebSearch};
use crate::term_safe::escape;
use crate::tui::styles::Styles;
use crate::tui::wrap::wrap_plain;

/// Sources listed before the rest wait for Enter.
const FOLDED_SOURCES: usize = 8;

#[derive(Debug, Clone, PartialEq)]
pub struct SourcesCell {
    /// The search's queries; `None` for an answer's citations.
    pub query: Option<String>,
    /// Why the provider says the search failed.
    pub error: Option<String>,
    pub sources: Vec<Source>,
}

/// One line of provider text, escaped: no terminal control reaches the
/// screen and no newline breaks the pane's shape.
fn clean(text: &str) -> String {
    escape(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn cleaned(sources: &[Source]) -> Vec<Source> {
    sources
        .iter()
        .map(|s| Source {
            title: clean(&s.title),
            url: clean(&s.url),
        })
        .collect()
}

impl SourcesCell {
    pub fn search(search: &WebSearch) -> SourcesCell {
        SourcesCell {
            query: Some(clean(&search.query_line())),
            error: search.error.as_deref().map(clean),
            sources: cleaned(&search.sources),
        }
    }

    pub fn citations(sources: &[Source]) -> SourcesCell {
        SourcesCell {
            query: None,
            error: None,
            sources: cleaned(sources),
        }
    }

    /// What `y` copies: the heading and one `title url` a line.
    pub fn copy_text(&self) -> String {
        let mut out = self.heading();
        for (i, s) in self.sources.iter().enumerate() {
            out.push_str(&format!("\n{}. {} {}", i + 1, s.title, s.url));
        }
        out
    }

    fn heading(&self) -> String {
        let n = self.sources.len();
        let pages = crate::text::plural(n, "page", "pages");
        match (&self.query, &self.error) {
            (Some(q), Some(why)) => format!("web search \"{q}\" failed: {why}"),
            (Some(q), None) => format!("web search \"{q}\" · {n} {pages}"),
            (None, _) => format!("sources cited · {n}"),
        }
    }

    pub fn lines(&self, width: u16, expanded: bool, s: &Styles) -> Vec<Line<'static>> {
        let head = if self.error.is_some() {
            s.warning
        } else {
            s.accent.add_modifier(Modifier::BOLD)
        };
        let mut out = wrap_plain(&self.heading(), width, head);
        let shown = if expanded {
            self.sources.len()
        } else {
            self.sources.len().min(FOLDED_SOURCES)
        };
        for (i, src) in self.sources.iter().take(shown).enumerate() {
            let title = src.label();
            out.extend(wrap_plain(&format!("{:>2}. {title}", i + 1), width, s.text));
            if title != src.url {
                out.extend(wrap_plain(&format!("    {}", src.url), width, s.dim));
            }
        }
        if shown < self.sources.len() {
            let more = self.sources.len() - shown;
            out.push(Line::from(Span::styled(
                format!("    … {more} more (Enter shows them)"),
                s.dim,
            )));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_shows_its_query_and_numbered_sources_escaped() {
        let search = WebSearch {
            id: "s1".into(),
            queries: vec!["rust\x1b[2J 2026".into()],
            sources: vec![
                Source {
                    title: "Rust \x1b]0;pwned\x07blog\nnext".into(),
                    url: "https://blog.rust-lang.org/".into(),
                },
                Source {
                    title: String::new(),
                    url: "https://example.com/".into(),
                },
            ],
            error: None,
            format: "anthropic".into(),
            wire: Vec::new(),
        };
        let cell = SourcesCell::search(&search);
        let text: Vec<String> = cell
            .lines(60, false, &Styles::default())
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(
            !text
                .iter()
                .any(|l| l.contains('\x1b') || l.contains('\x07'))
        );
        assert!(text[0].starts_with("web search \"rust"), "{text:?}");
        assert!(text[0].ends_with("· 2 pages"), "{text:?}");
        assert!(text[1].starts_with(" 1. Rust") && text[1].contains("blog next"));
        assert_eq!(text[2], "    https://blog.rust-lang.org/");
        assert_eq!(text[3], " 2. https://example.com/");
    }
}
