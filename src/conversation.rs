//! The conversation as the model sees it: messages made of parts.
//!
//! Tool results travel in user messages (the Anthropic shape); the OpenAI
//! provider splits them into `tool` role messages when it serialises.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

/// Base64 image data with its media type (`image/png`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageData {
    pub media_type: String,
    pub data: String,
}

/// One block of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultContent {
    Text { text: String },
    Image { image: ImageData },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    /// Model reasoning. `signature` is what Anthropic needs echoed back.
    Reasoning {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    Image {
        image: ImageData,
    },
    ToolCall {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    ToolResult {
        call_id: String,
        content: Vec<ResultContent>,
        is_error: bool,
    },
    /// Something a provider needs sent back unchanged, which cairn neither
    /// shows nor reads: Anthropic's `redacted_thinking`, an encrypted
    /// reasoning item of the Responses API. `format` names the wire format
    /// it belongs to; other formats leave it out.
    ProviderData {
        format: String,
        data: serde_json::Value,
    },
    /// A web search the provider ran itself while answering (Anthropic's
    /// web search tool, the Responses API's `web_search`, Gemini's
    /// grounding): shown as a pane, never run by cairn.
    WebSearch(WebSearch),
    /// The sources the answer's text cites, in the order first cited.
    Citations {
        sources: Vec<Source>,
    },
}

/// A page a search found or an answer cites. Both come from the provider
/// (and the web): hostile text, escaped before it reaches a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    #[serde(default)]
    pub title: String,
    pub url: String,
}

impl Source {
    /// What names it: its title, or its address when it has none.
    pub fn label(&self) -> &str {
        if self.title.trim().is_empty() {
            &self.url
        } else {
            &self.title
        }
    }

    /// Sources as numbered `N. label <url>` lines, each text made safe by
    /// `clean` (provider text: escaped for a terminal, kept to one line).
    pub fn numbered(sources: &[Source], clean: impl Fn(&str) -> String) -> Vec<String> {
        (sources.iter().enumerate())
            .map(|(i, s)| format!("{}. {} <{}>", i + 1, clean(s.label()), clean(&s.url)))
            .collect()
    }
}

/// One provider-side search: what was asked, what came back, and the wire
/// blocks the provider wants sent back unchanged with the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebSearch {
    /// The provider's id of the search (empty where it has none).
    #[serde(default)]
    pub id: String,
    pub queries: Vec<String>,
    #[serde(default)]
    pub sources: Vec<Source>,
    /// Why the provider says it failed (`max_uses_exceeded`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The wire format it came from; only that format sends `wire` back.
    pub format: String,
    /// The provider's own blocks, in order, as they must be resent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wire: Vec<serde_json::Value>,
}

impl WebSearch {
    /// The queries as one line.
    pub fn query_line(&self) -> String {
        self.queries.join(" · ")
    }

    /// The search as plain text: its queries and the pages it found, for
    /// search indexes and summaries.
    pub fn text(&self) -> String {
        let mut out = format!("web search: {}", self.query_line());
        for s in &self.sources {
            out.push_str(&format!("\n{} {}", s.title, s.url));
        }
        out
    }
}

/// Sources as plain text, one `title url` a line.
pub fn sources_text(sources: &[Source]) -> String {
    let lines: Vec<String> = sources
        .iter()
        .map(|s| format!("{} {}", s.title, s.url))
        .collect();
    lines.join("\n")
}

impl Source {
    /// Adds `source` unless its URL is listed already.
    pub fn add_unique(list: &mut Vec<Source>, source: Source) {
        if !source.url.is_empty() && !list.iter().any(|s| s.url == source.url) {
            list.push(source);
        }
    }
}

/// Tokens one exchange used, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
    /// Tokens the context window holds after this exchange.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens
    }
}

/// How a tool call ended: what the transcript shows and the store keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Done,
    Failed,
    Denied,
    Blocked,
    Cancelled,
}

impl ToolStatus {
    pub const ALL: [ToolStatus; 5] = [
        ToolStatus::Done,
        ToolStatus::Failed,
        ToolStatus::Denied,
        ToolStatus::Blocked,
        ToolStatus::Cancelled,
    ];

    /// The word stored for it (the same as its serialised form).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Done => "done",
            ToolStatus::Failed => "failed",
            ToolStatus::Denied => "denied",
            ToolStatus::Blocked => "blocked",
            ToolStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<ToolStatus> {
        ToolStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// How a part attached to a prompt (a file, a directory, a server's
/// resource) begins: `<attached path="…">`.
pub const ATTACHED_TAG: &str = "<attached ";

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    pub fn assistant_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    /// The person's own words (or the model's), joined: for titles, the
    /// first prompt, rewinding and copying. What `@` mentions attached is
    /// left out.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let Part::Text { text } = p
                && !text.starts_with(ATTACHED_TAG)
            {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &serde_json::Value)> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolCall { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

impl ResultContent {
    pub fn text(text: impl Into<String>) -> Self {
        ResultContent::Text { text: text.into() }
    }
}

/// Joins the text blocks of a tool result.
pub fn result_text(content: &[ResultContent]) -> String {
    let mut out = String::new();
    for c in content {
        match c {
            ResultContent::Text { text } => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
            ResultContent::Image { image } => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("[image {}]", image.media_type));
            }
        }
    }
    out
}

/// Makes a history valid to send: every tool call is followed (in the next
/// user message) by exactly one result, and no result lacks its call.
/// Missing results are filled with a "cancelled" error; orphan results are
/// dropped. Returns how many repairs were made.
pub fn repair_tool_pairs(messages: &mut Vec<Message>) -> usize {
    let mut repairs = 0;
    let mut i = 0;
    while i < messages.len() {
        match messages[i].role {
            Role::Assistant => {
                let calls: Vec<String> = messages[i]
                    .tool_calls()
                    .map(|(id, _, _)| id.to_string())
                    .collect();
                if calls.is_empty() {
                    i += 1;
                    continue;
                }
                let next_is_user = messages
                    .get(i + 1)
                    .map(|m| m.role == Role::User)
                    .unwrap_or(false);
                if !next_is_user {
                    messages.insert(
                        i + 1,
                        Message {
                            role: Role::User,
                            parts: vec![],
                        },
                    );
                }
                repairs += pair_results(&calls, &mut messages[i + 1]);
                i += 2;
            }
            Role::User => {
                // A user message not preceded by an assistant with calls must
                // hold no tool results.
                let before = messages[i].parts.len();
                messages[i]
                    .parts
                    .retain(|p| !matches!(p, Part::ToolResult { .. }));
                repairs += before - messages[i].parts.len();
                if messages[i].parts.is_empty() {
                    messages.remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }
    repairs
}

/// Makes `next` hold exactly one result for each of `calls`, in call order,
/// ahead of any other content. Returns how many repairs were made.
fn pair_results(calls: &[String], next: &mut Message) -> usize {
    use std::collections::HashSet;
    let mut repairs = 0;
    let call_set: HashSet<&String> = calls.iter().collect();
    let before = next.parts.len();
    let mut seen = HashSet::new();
    next.parts.retain(|p| match p {
        Part::ToolResult { call_id, .. } => {
            call_set.contains(call_id) && seen.insert(call_id.clone())
        }
        _ => true,
    });
    repairs += before - next.parts.len();
    // Results first, in call order, then any other user content.
    let mut results = Vec::new();
    let mut others = Vec::new();
    for p in next.parts.drain(..) {
        match p {
            Part::ToolResult { .. } => results.push(p),
            other => others.push(other),
        }
    }
    let mut ordered = Vec::new();
    for id in calls {
        let pos = results
            .iter()
            .position(|p| matches!(p, Part::ToolResult { call_id, .. } if call_id == id));
        match pos {
            Some(pos) => ordered.push(results.remove(pos)),
            None => {
                repairs += 1;
                ordered.push(Part::ToolResult {
                    call_id: id.clone(),
                    content: vec![ResultContent::text(
                        "The tool call was cancelled before it produced a result.",
                    )],
                    is_error: true,
                });
            }
        }
    }
    ordered.extend(others);
    next.parts = ordered;
    repairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Part {
        Part::ToolCall {
            id: id.into(),
            name: "view".into(),
            input: json!({}),
        }
    }
    fn result(id: &str) -> Part {
        Part::ToolResult {
            call_id: id.into(),
            content: vec![ResultContent::text("ok")],
            is_error: false,
        }
    }

    #[test]
    fn missing_result_is_filled_as_cancelled() {
        let mut msgs = vec![
            Message::user_text("hi"),
            Message {
                role: Role::Assistant,
                parts: vec![call("a"), call("b")],
            },
            Message {
                role: Role::User,
                parts: vec![result("b")],
            },
        ];
        assert_eq!(repair_tool_pairs(&mut msgs), 1);
        let ids: Vec<_> = msgs[2]
            .parts
            .iter()
            .map(|p| match p {
                Part::ToolResult {
                    call_id, is_error, ..
                } => (call_id.clone(), *is_error),
                _ => panic!(),
            })
            .collect();
        assert_eq!(ids, vec![("a".into(), true), ("b".into(), false)]);
    }

    #[test]
    fn orphan_result_is_dropped_and_trailing_call_answered() {
        let mut msgs = vec![
            Message {
                role: Role::User,
                parts: vec![result("zz")],
            },
            Message::user_text("hi"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::Text { text: "x".into() }, call("a")],
            },
        ];
        repair_tool_pairs(&mut msgs);
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[0], Message::user_text("hi"));
        assert!(matches!(&msgs[2].parts[0], Part::ToolResult { call_id, .. } if call_id == "a"));
    }
}
