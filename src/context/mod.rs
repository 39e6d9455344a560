//! Context management: how full the model's window is, and compaction
//! before it overflows.
//!
//! Compaction keeps the most recent turns verbatim, first elides old tool
//! outputs, and if that is not enough replaces the older turns with a
//! summary the model writes. The split always falls on a user prompt, so no
//! tool call is separated from its result.

use crate::conversation::{Message, Part, ResultContent, Role, repair_tool_pairs};

pub const COMPACT_PROMPT: &str = include_str!("../../assets/prompts/compact.md");

/// Marks the message that carries a summary of earlier turns.
pub const SUMMARY_TAG: &str = "<summary of the earlier conversation>";

/// A rough token count: about four characters per token for prose and code.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

pub fn estimate_message(m: &Message) -> u64 {
    let mut n = 4;
    for p in &m.parts {
        n += match p {
            Part::Text { text } | Part::Reasoning { text, .. } => estimate_tokens(text),
            Part::Image { .. } => 1_000,
            Part::ProviderData { data, .. } => estimate_tokens(&data.to_string()),
            // What goes back to the provider is its own blocks (results
            // with encrypted page text, which it counts).
            Part::WebSearch(search) => search
                .wire
                .iter()
                .map(|w| estimate_tokens(&w.to_string()))
                .sum::<u64>()
                .max(estimate_tokens(&search.text())),
            Part::Citations { .. } => 0,
            Part::ToolCall { name, input, .. } => {
                estimate_tokens(name) + estimate_tokens(&input.to_string()) + 8
            }
            Part::ToolResult { content, .. } => content
                .iter()
                .map(|c| match c {
                    ResultContent::Text { text } => estimate_tokens(text),
                    ResultContent::Image { .. } => 1_000,
                })
                .sum::<u64>()
                .saturating_add(8),
        };
    }
    n
}

pub fn estimate_messages(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message).sum()
}

/// Tracks the context size: the provider's reported figure when there is
/// one, plus an estimate for what was added since.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    /// Tokens reported for the conversation up to `at_len` messages.
    reported: Option<(u64, usize)>,
}

impl Tracker {
    pub fn report(&mut self, tokens: u64, message_count: usize) {
        self.reported = Some((tokens, message_count));
    }

    pub fn reset(&mut self) {
        self.reported = None;
    }

    /// Estimated tokens of a request whose fixed part (system prompt and
    /// tool specifications) costs `fixed`, with this history. A reported
    /// figure already holds the fixed part; an estimate adds it, so a
    /// resumed or just-compacted session is not counted short.
    pub fn estimate(&self, fixed: u64, messages: &[Message]) -> u64 {
        match self.reported {
            Some((tokens, at)) if at <= messages.len() => {
                tokens.max(fixed) + estimate_messages(&messages[at..])
            }
            _ => fixed + estimate_messages(messages),
        }
    }
}

/// Where a history can be cut: indices of user messages that carry a
/// prompt (not only tool results).
pub fn turn_starts(messages: &[Message]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.role == Role::User
                && m.parts
                    .iter()
                    .any(|p| !matches!(p, Part::ToolResult { .. }))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The index from which messages stay verbatim: the earliest turn start
/// (after the first) such that the kept tail fits in `keep_tokens`, and at
/// least the last turn. `None` when there is only one turn.
pub fn split_point(messages: &[Message], keep_tokens: u64) -> Option<usize> {
    let starts = turn_starts(messages);
    if starts.len() < 2 {
        return None;
    }
    let mut split = *starts.last()?;
    for &s in starts[1..].iter().rev() {
        if estimate_messages(&messages[s..]) > keep_tokens {
            break;
        }
        split = s;
    }
    Some(split)
}

/// Replaces the text of tool results before `upto` with a short note, oldest
/// first, until the estimate drops to `target`. Returns tokens saved.
pub fn elide_tool_outputs(messages: &mut [Message], upto: usize, target: u64) -> u64 {
    let mut total = estimate_messages(messages);
    let start = total;
    let upto = upto.min(messages.len());
    for m in messages[..upto].iter_mut() {
        if total <= target {
            break;
        }
        for p in m.parts.iter_mut() {
            if let Part::ToolResult { content, .. } = p {
                let before: u64 = content
                    .iter()
                    .map(|c| match c {
                        ResultContent::Text { text } => estimate_tokens(text),
                        ResultContent::Image { .. } => 1_000,
                    })
                    .sum();
                if before < 50 {
                    continue;
                }
                let chars: usize = content
                    .iter()
                    .map(|c| match c {
                        ResultContent::Text { text } => text.len(),
                        ResultContent::Image { .. } => 0,
                    })
                    .sum();
                let first_line = content
                    .iter()
                    .find_map(|c| match c {
                        ResultContent::Text { text } => text.lines().next(),
                        _ => None,
                    })
                    .unwrap_or("")
                    .chars()
                    .take(120)
                    .collect::<String>();
                let note = format!(
                    "[output elided to save context: {chars} characters; it began: {first_line}]"
                );
                let after = estimate_tokens(&note);
                *content = vec![ResultContent::text(note)];
                total = total.saturating_sub(before.saturating_sub(after));
            }
        }
    }
    start.saturating_sub(total)
}

/// The conversation to send for summarising `older` in one request.
pub fn summary_messages(older: &[Message], focus: Option<&str>) -> Vec<Message> {
    summary_request(&transcript_entries(older).concat(), focus, None)
}

/// `older` as lines of a transcript, one entry per part worth keeping.
fn transcript_entries(older: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for m in older {
        let who = match m.role {
            Role::User => "USER",
            Role::Assistant => "ASSISTANT",
        };
        for p in &m.parts {
            match p {
                Part::Text { text } => out.push(format!("{who}: {text}\n\n")),
                Part::Reasoning { .. } | Part::Image { .. } | Part::ProviderData { .. } => {}
                Part::WebSearch(search) => out.push(format!("{who}: {}\n\n", search.text())),
                Part::Citations { sources } => out.push(format!(
                    "{who} CITED:\n{}\n\n",
                    crate::conversation::sources_text(sources)
                )),
                Part::ToolCall { name, input, .. } => {
                    let args = input.to_string();
                    let args: String = args.chars().take(2_000).collect();
                    out.push(format!("TOOL CALL {name} {args}\n\n"));
                }
                Part::ToolResult {
                    content, is_error, ..
                } => {
                    let text = crate::conversation::result_text(content);
                    let text: String = text.chars().take(4_000).collect();
                    let tag = if *is_error {
                        "TOOL ERROR"
                    } else {
                        "TOOL RESULT"
                    };
                    out.push(format!("{tag}: {text}\n\n"));
                }
            }
        }
    }
    out
}

/// `older` as transcript pieces of at most `budget` tokens each, in order,
/// so that no summary request is larger than the model's window. An entry
/// larger than a piece is cut to fit.
pub fn summary_pieces(older: &[Message], budget: u64) -> Vec<String> {
    let limit = (budget.max(64) * 4) as usize;
    let mut pieces = vec![String::new()];
    for mut entry in transcript_entries(older) {
        if entry.len() > limit {
            let mut cut = limit.saturating_sub(40);
            while !entry.is_char_boundary(cut) {
                cut -= 1;
            }
            entry.truncate(cut);
            entry.push_str(" […cut to fit the summary]\n\n");
        }
        let last = pieces.last_mut().expect("never empty");
        if !last.is_empty() && last.len() + entry.len() > limit {
            pieces.push(entry);
        } else {
            last.push_str(&entry);
        }
    }
    pieces
}

/// The request for summarising one piece of transcript; `so_far` is the
/// summary of the pieces before it.
pub fn summary_request(piece: &str, focus: Option<&str>, so_far: Option<&str>) -> Vec<Message> {
    let mut ask = String::from(COMPACT_PROMPT.trim_end());
    if let Some(f) = focus.filter(|f| !f.trim().is_empty()) {
        ask.push_str(&format!(
            "\n\nThe person asks that the summary focus on: {}",
            f.trim()
        ));
    }
    if let Some(so_far) = so_far {
        ask.push_str(
            "\n\nThe conversation was too long to read at once. Here is your summary of its \
             beginning; write one summary of the whole that also covers the part that follows.\n\n\
             <summary so far>\n",
        );
        ask.push_str(so_far.trim());
        ask.push_str("\n</summary so far>");
    }
    ask.push_str("\n\n<conversation>\n");
    ask.push_str(piece);
    ask.push_str("</conversation>");
    vec![Message::user_text(ask)]
}

/// The text that carries a summary in the conversation.
pub fn summary_note(summary: &str) -> String {
    format!(
        "{SUMMARY_TAG}\n{}\n</summary of the earlier conversation>\nThe conversation continues from here.",
        summary.trim()
    )
}

/// The history after compaction: the recent turns, with the summary put
/// before the first recent prompt (in the same user message, so roles keep
/// alternating for every provider).
pub fn compacted(summary: &str, recent: &[Message]) -> Vec<Message> {
    let note = Part::Text {
        text: summary_note(summary),
    };
    let mut out = recent.to_vec();
    match out.first_mut() {
        Some(first) if first.role == Role::User => first.parts.insert(0, note),
        _ => out.insert(
            0,
            Message {
                role: Role::User,
                parts: vec![note],
            },
        ),
    }
    repair_tool_pairs(&mut out);
    out
}

#[cfg(test)]
mod tests;
