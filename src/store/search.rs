//! Full-text search over what was said and done in sessions.

use rusqlite::params;
use serde::Serialize;

use super::{MessageId, SearchFilter, SessionId, Store, StoreError, path_text};
use crate::conversation::{Part, result_text};

/// The most text one part contributes to the index. A tool that read a
/// 200 KB file would otherwise store it twice; the beginning is what people
/// search for.
const MAX_PART_TEXT: usize = 16 * 1024;

/// How many of the newest matches a search ranks (see [`Store::search`]).
pub(crate) const RANK_WINDOW: usize = 1_000;

/// Marks the start of a matched word in [`SearchHit::snippet`].
pub const MATCH_START: char = '\u{1}';
/// Marks the end of a matched word in [`SearchHit::snippet`].
pub const MATCH_END: char = '\u{2}';

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub session_id: SessionId,
    pub message_id: MessageId,
    /// The session's title, else its first prompt.
    pub title: Option<String>,
    /// A short excerpt around the match; matched words are wrapped in
    /// [`MATCH_START`] … [`MATCH_END`].
    pub snippet: String,
    /// BM25 score; lower is a better match.
    pub rank: f64,
    /// The session's last activity, unix ms.
    pub updated_at: i64,
}

fn push_capped(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let mut end = text.len().min(MAX_PART_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(&text[..end]);
}

fn json_strings(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push(' ');
            out.push_str(s);
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| json_strings(i, out)),
        serde_json::Value::Object(map) => map.values().for_each(|i| json_strings(i, out)),
        serde_json::Value::Number(n) => {
            out.push(' ');
            out.push_str(&n.to_string());
        }
        _ => {}
    }
}

/// The searchable text of a message: prompts and answers, each tool call as
/// its name and argument values, and tool results' text. Reasoning and
/// images are left out.
pub fn message_search_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Text { text } => push_capped(&mut out, text),
            Part::ToolCall { name, input, .. } => {
                let mut call = name.clone();
                json_strings(input, &mut call);
                push_capped(&mut out, &call);
            }
            Part::ToolResult { content, .. } => push_capped(&mut out, &result_text(content)),
            Part::WebSearch(search) => push_capped(&mut out, &search.text()),
            Part::Citations { sources } => {
                push_capped(&mut out, &crate::conversation::sources_text(sources))
            }
            Part::ProviderData { .. } => {}
            Part::Reasoning { .. } | Part::Image { .. } => {}
        }
    }
    out
}

/// Turns what a person typed into an FTS5 query that cannot be a syntax
/// error: each word becomes a quoted string (so `-`, `:`, `*`, `(`, `AND`
/// mean nothing special) and all must match; the last word matches as a
/// prefix unless the input ends in a space. `None` when nothing searchable
/// was typed.
pub fn build_match_query(input: &str) -> Option<String> {
    let words: Vec<&str> = input
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    if words.is_empty() {
        return None;
    }
    let prefix_last = !input.ends_with(char::is_whitespace);
    let mut query = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            query.push(' ');
        }
        query.push('"');
        query.push_str(&word.replace('"', "\"\""));
        query.push('"');
        if prefix_last && i + 1 == words.len() {
            query.push('*');
        }
    }
    Some(query)
}

/// Lower-cased words of the query, split as the index splits text.
fn query_terms(query: &str) -> Vec<String> {
    words(query).map(|(_, w)| w.to_lowercase()).collect()
}

/// Runs of letters and digits with their byte offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// About SNIPPET_WORDS words of `body` around the first matched word, with
/// every matched word wrapped in MATCH_START … MATCH_END.
fn snippet(body: &str, terms: &[String], prefix_last: bool) -> String {
    const SNIPPET_WORDS: usize = 24;
    let matches = |w: &str| {
        let w = w.to_lowercase();
        terms.iter().enumerate().any(|(i, t)| {
            w == *t || (prefix_last && i + 1 == terms.len() && w.starts_with(t.as_str()))
        })
    };
    let all: Vec<(usize, &str)> = words(body).collect();
    let first = all.iter().position(|(_, w)| matches(w)).unwrap_or(0);
    let from = first.saturating_sub(SNIPPET_WORDS / 3);
    let to = (from + SNIPPET_WORDS).min(all.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut cursor = all.get(from).map(|(at, _)| *at).unwrap_or(0);
    for (at, w) in &all[from..to] {
        out.push_str(&body[cursor..*at]);
        if matches(w) {
            out.push(MATCH_START);
            out.push_str(w);
            out.push(MATCH_END);
        } else {
            out.push_str(w);
        }
        cursor = at + w.len();
    }
    if to < all.len() {
        out.push('…');
    }
    out
}

/// How many of the newest matches a search within one project looks at to
/// find its window of that project's matches.
pub(crate) const PROJECT_SCAN: usize = 10_000;

/// A window row before ranking.
struct Candidate {
    id: i64,
    session_id: String,
    title: Option<String>,
    updated_at: i64,
    body: String,
}

/// BM25 over the window itself, for the project path (SQLite's `bm25()`
/// cannot be limited to a chosen set of rows cheaply). Terms weigh by how
/// rare they are within the window; longer bodies are damped. Higher is
/// better.
fn window_scores(cands: &[Candidate], terms: &[String], prefix_last: bool) -> Vec<f64> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let matches = |w: &str, i: usize, t: &str| {
        w == t || (prefix_last && i + 1 == terms.len() && w.starts_with(t))
    };
    let mut tfs: Vec<Vec<f64>> = Vec::with_capacity(cands.len());
    let mut lens = Vec::with_capacity(cands.len());
    let mut df = vec![0f64; terms.len()];
    for c in cands {
        let mut tf = vec![0f64; terms.len()];
        let mut len = 0usize;
        for (_, w) in words(&c.body) {
            len += 1;
            let w = w.to_lowercase();
            for (i, t) in terms.iter().enumerate() {
                if matches(&w, i, t) {
                    tf[i] += 1.0;
                }
            }
        }
        for (i, n) in tf.iter().enumerate() {
            if *n > 0.0 {
                df[i] += 1.0;
            }
        }
        tfs.push(tf);
        lens.push(len.max(1) as f64);
    }
    let n = cands.len().max(1) as f64;
    let avg = lens.iter().sum::<f64>() / n;
    let idf: Vec<f64> = df
        .iter()
        .map(|d| (1.0 + (n - d + 0.5) / (d + 0.5)).ln())
        .collect();
    tfs.iter()
        .zip(&lens)
        .map(|(tf, len)| {
            tf.iter()
                .zip(&idf)
                .map(|(f, w)| w * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg)))
                .sum()
        })
        .collect()
}

impl Store {
    /// Messages matching `query`, best first. When more than 1,000 messages
    /// match, only the newest 1,000 of them are ranked, which keeps a
    /// one-word search of a huge history fast and favours recent work.
    /// Within one project, the window is the project's newest matches among
    /// the newest [`PROJECT_SCAN`] matches overall.
    pub fn search(
        &self,
        query: &str,
        filter: &SearchFilter<'_>,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let Some(fts) = build_match_query(query) else {
            return Ok(Vec::new());
        };
        let limit = if filter.limit == 0 { 50 } else { filter.limit };
        let terms = query_terms(query);
        let prefix_last = !query.ends_with(char::is_whitespace);
        let mut hits = match filter.project_root {
            None => self.search_all(&fts, &terms, prefix_last, limit, filter.one_per_session)?,
            Some(root) => self.search_project(
                &fts,
                root,
                &terms,
                prefix_last,
                limit,
                filter.one_per_session,
            )?,
        };
        hits.truncate(limit);
        Ok(hits)
    }

    /// Every project: SQLite ranks the newest window with `bm25()`.
    fn search_all(
        &self,
        fts: &str,
        terms: &[String],
        prefix_last: bool,
        limit: usize,
        one_per_session: bool,
    ) -> Result<Vec<SearchHit>, StoreError> {
        // Ranking every match of common words in a million messages is far
        // too slow for search-as-you-type, so one pass walks the matches
        // newest first and scores at most RANK_WINDOW of them; snippets are
        // cut in Rust for the kept few, which saves a second index pass.
        let window = format!(
            "SELECT rowid AS id, bm25(messages_fts) AS score
             FROM messages_fts WHERE messages_fts MATCH ?1
             ORDER BY rowid DESC LIMIT {RANK_WINDOW}"
        );
        // For the browser, the best message of each session: a session with
        // many matches must not crowd the others out of the list.
        let ranked = if one_per_session {
            format!(
                "SELECT w0.id AS id, min(w0.score) AS score FROM ({window}) AS w0
                 JOIN messages AS m0 ON m0.id = w0.id GROUP BY m0.session_id"
            )
        } else {
            window
        };
        let sql = format!(
            "SELECT w.id, w.score, m.session_id, coalesce(s.title, s.first_prompt),
                 s.updated_at, m.body
             FROM (SELECT id, score FROM ({ranked}) ORDER BY score LIMIT ?2) AS w
             JOIN messages AS m ON m.id = w.id
             JOIN sessions AS s ON s.id = m.session_id
             ORDER BY w.score"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let hits = stmt
            .query_map(params![fts, limit as i64], |r| {
                let body: String = r.get(5)?;
                Ok(SearchHit {
                    session_id: SessionId(r.get(2)?),
                    message_id: MessageId(r.get(0)?),
                    title: r.get(3)?,
                    snippet: snippet(&body, terms, prefix_last),
                    rank: r.get(1)?,
                    updated_at: r.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(hits)
    }

    /// One project: the newest matches are walked (no scoring in SQLite)
    /// until the project's window is full, then ranked here.
    fn search_project(
        &self,
        fts: &str,
        root: &std::path::Path,
        terms: &[String],
        prefix_last: bool,
        limit: usize,
        one_per_session: bool,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let sql = format!(
            "SELECT w.rowid, m.session_id, coalesce(s.title, s.first_prompt), s.updated_at,
                 m.body
             FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1
                   ORDER BY rowid DESC LIMIT {PROJECT_SCAN}) AS w
             CROSS JOIN messages AS m ON m.id = w.rowid
             CROSS JOIN sessions AS s ON s.id = m.session_id
             WHERE s.project_root = ?2
             LIMIT {RANK_WINDOW}"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let cands = stmt
            .query_map(params![fts, path_text(root)], |r| {
                Ok(Candidate {
                    id: r.get(0)?,
                    session_id: r.get(1)?,
                    title: r.get(2)?,
                    updated_at: r.get(3)?,
                    body: r.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let scores = window_scores(&cands, terms, prefix_last);
        let mut order: Vec<usize> = (0..cands.len()).collect();
        // Best first; among equals, newest first (the window is newest first).
        order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
        let mut seen = std::collections::HashSet::new();
        let mut hits = Vec::new();
        for i in order {
            let c = &cands[i];
            if one_per_session && !seen.insert(c.session_id.as_str()) {
                continue;
            }
            hits.push(SearchHit {
                session_id: SessionId(c.session_id.clone()),
                message_id: MessageId(c.id),
                title: c.title.clone(),
                snippet: snippet(&c.body, terms, prefix_last),
                // Lower is better, as with bm25().
                rank: -scores[i],
                updated_at: c.updated_at,
            });
            if hits.len() >= limit {
                break;
            }
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn awkward_input_becomes_quoted_words() {
        assert_eq!(
            build_match_query("cargo build failed").as_deref(),
            Some("\"cargo\" \"build\" \"failed\"*")
        );
        assert_eq!(
            build_match_query("say \"hi\" -x: NOT ").as_deref(),
            Some("\"say\" \"\"\"hi\"\"\" \"-x:\" \"NOT\"")
        );
        assert_eq!(build_match_query("  -- : \" "), None);
    }

    #[test]
    fn search_text_takes_calls_and_results_but_not_reasoning() {
        let parts = vec![
            Part::Reasoning {
                text: "secretthought".into(),
                signature: None,
            },
            Part::ToolCall {
                id: "c".into(),
                name: "bash".into(),
                input: serde_json::json!({"command": "cargo test", "timeout": 30}),
            },
            Part::ToolResult {
                call_id: "c".into(),
                content: vec![crate::conversation::ResultContent::text("zebra ok")],
                is_error: false,
            },
        ];
        let text = message_search_text(&parts);
        assert!(text.contains("bash cargo test 30"), "{text}");
        assert!(text.contains("zebra ok"));
        assert!(!text.contains("secretthought"));
    }

    #[test]
    fn snippet_centres_on_the_match_and_marks_every_hit() {
        let body = format!(
            "{} Connection refused by host: connection REFUSED again {}",
            "lead ".repeat(40),
            "tail ".repeat(40)
        );
        let terms = query_terms("connection refus");
        let s = snippet(&body, &terms, true);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s:?}");
        assert!(
            s.contains("\u{1}Connection\u{2} \u{1}refused\u{2} by host: \u{1}connection\u{2} \u{1}REFUSED\u{2}"),
            "{s:?}"
        );
        // Without prefix matching a partial word is not marked.
        assert!(!snippet(&body, &terms, false).contains("\u{1}refused"));
        // Nothing matched (e.g. a diacritic folded by the index): the start.
        assert!(snippet("short text", &["zzz".to_string()], false) == "short text");
    }

    #[test]
    fn long_part_is_capped_on_a_char_boundary() {
        let text = "é".repeat(MAX_PART_TEXT);
        let out = message_search_text(&[Part::Text { text }]);
        assert!(out.len() <= MAX_PART_TEXT && out.len() >= MAX_PART_TEXT - 1);
    }
}
