//! What each sub-agent did, kept from its tagged events, so its pane opens
//! its whole transcript (read-only) with Enter.

use crate::protocol::AgentEvent;
use crate::tui::model::Model;
use crate::tui::widgets::sub_transcript::{Entry, SubTranscript};

/// Keeps what a sub-agent event says; false for other events.
pub fn record(model: &mut Model, ev: &AgentEvent) -> bool {
    match ev {
        AgentEvent::SubagentStarted {
            call_id,
            agent,
            description,
            prompt,
        } => {
            model.subagents.insert(
                call_id.clone(),
                SubTranscript {
                    agent: agent.clone(),
                    description: description.clone(),
                    entries: vec![Entry::Task(prompt.clone())],
                },
            );
        }
        AgentEvent::Subagent { call_id, event } => {
            if let Some(t) = model.subagents.get_mut(call_id) {
                t.add(event);
            }
            // Its pane lists its calls when expanded (the pane is looked
            // up only for these two events, not for each streamed delta).
            match &**event {
                AgentEvent::ToolCallStarted {
                    call_id: id,
                    summary,
                    ..
                } => {
                    if let Some(pane) = super::tool_mut(model, call_id) {
                        pane.steps.push(crate::tui::widgets::tool_cell::Step {
                            call_id: id.clone(),
                            summary: summary.clone(),
                            status: None,
                        });
                    }
                }
                AgentEvent::ToolCallFinished {
                    call_id: id,
                    status,
                    ..
                } => {
                    let pane = super::tool_mut(model, call_id);
                    let step = pane.and_then(|p| p.steps.iter_mut().find(|s| s.call_id == *id));
                    if let Some(step) = step {
                        step.status = Some(*status);
                    }
                }
                _ => {}
            }
        }
        AgentEvent::SubagentFinished {
            call_id, summary, ..
        } => {
            if let Some(t) = model.subagents.get_mut(call_id) {
                t.entries.push(Entry::End(summary.clone()));
            }
        }
        _ => return false,
    }
    true
}

/// Enter on an `agent` pane: its sub-agent's transcript; false when the
/// selected cell is not one.
pub fn open(model: &mut Model, call_id: &str) -> bool {
    let Some(t) = model.subagents.get(call_id) else {
        return false;
    };
    let panel = crate::tui::panels::Panel::Text {
        title: format!("sub-agent {}: {} (read-only)", t.agent, t.description),
        text: t.text(),
        scroll: 0,
    };
    model.open_panel(panel);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AgentEvent as E;
    use crate::protocol::ToolStatus;
    use crate::tui::test_support::{agent, model};

    #[test]
    fn a_sub_agents_events_make_its_transcript() {
        let mut m = model();
        let tag = |event: E| E::Subagent {
            call_id: "t1".into(),
            event: Box::new(event),
        };
        agent(
            &mut m,
            E::SubagentStarted {
                call_id: "t1".into(),
                agent: "explore".into(),
                description: "find alpha".into(),
                prompt: "where is alpha?".into(),
            },
        );
        agent(&mut m, tag(E::ResponseStarted));
        agent(&mut m, tag(E::TextDelta("Looking".into())));
        agent(&mut m, tag(E::TextDelta(" \u{1b}[2Jnow.".into())));
        agent(
            &mut m,
            tag(E::ToolCallStarted {
                call_id: "a".into(),
                name: "grep".into(),
                input: serde_json::json!({}),
                summary: "grep alpha".into(),
            }),
        );
        agent(
            &mut m,
            tag(E::ToolCallFinished {
                call_id: "a".into(),
                status: ToolStatus::Done,
                output: "alpha.rs:1: fn alpha".into(),
                display: None,
            }),
        );
        let text = m.subagents["t1"].text();
        assert!(text.starts_with("Task:\nwhere is alpha?"), "{text}");
        assert!(text.contains("Looking"), "{text}");
        assert!(!text.contains('\u{1b}'), "escaped: {text:?}");
        assert!(
            text.contains("→ grep alpha\n  ✓ done\n  │ alpha.rs:1: fn alpha"),
            "{text}"
        );
        assert!(open(&mut m, "t1"));
        assert!(!open(&mut m, "t2"));
    }
}
