//! One sub-agent's transcript, kept from its tagged events, for the
//! read-only panel its pane opens.

use crate::protocol::{AgentEvent, ToolStatus};

/// One sub-agent's transcript, as it happened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubTranscript {
    pub agent: String,
    pub description: String,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Task(String),
    Text(String),
    Call(String),
    Result(ToolStatus, String),
    End(String),
}

impl SubTranscript {
    pub fn add(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ResponseStarted => self.entries.push(Entry::Text(String::new())),
            AgentEvent::TextDelta(t) => match self.entries.last_mut() {
                Some(Entry::Text(text)) => text.push_str(t),
                _ => self.entries.push(Entry::Text(t.clone())),
            },
            AgentEvent::ToolCallStarted { summary, .. } => {
                self.entries.push(Entry::Call(summary.clone()))
            }
            AgentEvent::ToolCallFinished { status, output, .. } => {
                let output = crate::ansi::strip(output);
                self.entries.push(Entry::Result(*status, output))
            }
            AgentEvent::SubagentStarted {
                agent, description, ..
            } => self
                .entries
                .push(Entry::Call(format!("sub-agent {agent}: {description}"))),
            AgentEvent::Subagent { event, .. } => {
                if let AgentEvent::ToolCallStarted { summary, .. } = &**event {
                    self.entries
                        .push(Entry::Call(format!("  (its sub-agent) {summary}")));
                }
            }
            _ => {}
        }
    }

    /// The transcript as text for a read-only panel. Everything in it
    /// came from a model or a tool: it is shown escaped.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            let piece = match e {
                Entry::Task(t) => format!("Task:\n{t}\n"),
                Entry::Text(t) if t.trim().is_empty() => continue,
                Entry::Text(t) => format!("\n{}\n", t.trim_end()),
                Entry::Call(s) => format!("\n→ {s}\n"),
                Entry::Result(status, output) => {
                    let lines: Vec<&str> = output.lines().collect();
                    let mut shown: String = lines
                        .iter()
                        .take(12)
                        .map(|l| format!("  │ {l}\n"))
                        .collect();
                    if lines.len() > 12 {
                        let more = lines.len() - 12;
                        shown.push_str(&format!(
                            "  │ … {more} more {}\n",
                            crate::text::plural(more, "line", "lines")
                        ));
                    }
                    format!("  {}\n{shown}", status_word(*status))
                }
                Entry::End(s) => format!("\n[{s}]\n"),
            };
            out.push_str(&piece);
        }
        crate::term_safe::escape(&out)
    }
}

fn status_word(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Done => "✓ done",
        ToolStatus::Failed => "✗ failed",
        ToolStatus::Denied => "denied",
        ToolStatus::Blocked => "blocked",
        ToolStatus::Cancelled => "cancelled",
    }
}
