//! Finding stored sessions: the list, full-text search and a plain-text
//! preview, as rows a front end can show.

use std::collections::HashSet;

use crate::conversation::{Message, Part, Role, result_text};
use crate::protocol::SessionEntry;
use crate::store::{ListFilter, SearchFilter, SearchHit, SessionSummary, Store, StoreError};

/// Rows per page of the session list.
pub const PAGE: usize = 200;

/// Sessions by last activity, newest first: those of `root` (or all).
pub fn list(
    store: &Store,
    root: Option<&std::path::Path>,
    limit: usize,
    offset: usize,
) -> Result<Vec<SessionSummary>, StoreError> {
    store.list_sessions(&ListFilter {
        project_root: root,
        limit,
        offset,
    })
}

/// Messages matching `text`, best first; `one_per_session` keeps only the
/// best hit of each session.
pub fn search(
    store: &Store,
    text: &str,
    root: Option<&std::path::Path>,
    limit: usize,
    one_per_session: bool,
) -> Result<Vec<SearchHit>, StoreError> {
    store.search(
        text,
        &SearchFilter {
            project_root: root,
            limit,
            one_per_session,
        },
    )
}

/// A page of the list (an empty `text`) or the ranked search results for
/// `text` (one page: a later `offset` finds nothing more).
pub fn query(
    store: &Store,
    text: &str,
    root: Option<&std::path::Path>,
    offset: usize,
) -> Result<Vec<SessionEntry>, StoreError> {
    if text.trim().is_empty() {
        return Ok(list(store, root, PAGE, offset)?
            .iter()
            .map(|s| SessionEntry::new(s, None))
            .collect());
    }
    if offset > 0 {
        return Ok(Vec::new());
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for h in search(store, text, root, 200, true)? {
        if seen.insert(h.session_id.clone()) {
            let s = store.session(&h.session_id)?;
            out.push(SessionEntry::new(&s, Some(h.snippet)));
        }
    }
    Ok(out)
}

/// A plain-text look at a session: its prompts, answers, tool calls and
/// failed results, one line each, at most `max` lines.
pub fn preview_lines<'a>(messages: impl Iterator<Item = &'a Message>, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let tools = crate::tools::Registry::builtin();
    let first = |s: &str| crate::text::take_chars(crate::text::first_line(s), 200);
    for m in messages {
        for p in &m.parts {
            let line = match (m.role, p) {
                (Role::User, Part::Text { text }) => format!("› {}", first(text)),
                (Role::Assistant, Part::Text { text }) => first(text),
                (_, Part::ToolCall { name, input, .. }) => format!(
                    "  ⚙ {}",
                    first(&super::load::summary_of(&tools, name, input))
                ),
                (
                    _,
                    Part::ToolResult {
                        content,
                        is_error: true,
                        ..
                    },
                ) => format!("    ✗ {}", first(&result_text(content))),
                _ => continue,
            };
            out.push(line);
            if out.len() >= max {
                return out;
            }
        }
    }
    out
}

/// "5m ago", "3d ago": how long before `now_ms` `then_ms` was.
pub fn age(now_ms: i64, then_ms: i64) -> String {
    let secs = ((now_ms - then_ms).max(0) / 1000) as u64;
    match secs {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        86_400..=2_591_999 => format!("{}d ago", secs / 86_400),
        _ => format!("{}mo ago", secs / 2_592_000),
    }
}
