use super::*;
use proptest::prelude::*;
use serde_json::json;

fn call(id: &str) -> Part {
    Part::ToolCall {
        id: id.into(),
        name: "view".into(),
        input: json!({"file_path": "a"}),
    }
}

fn result(id: &str, text: &str) -> Part {
    Part::ToolResult {
        call_id: id.into(),
        content: vec![ResultContent::text(text)],
        is_error: false,
    }
}

fn turn(n: usize, output: &str) -> Vec<Message> {
    let id = format!("c{n}");
    vec![
        Message::user_text(format!("prompt {n}")),
        Message {
            role: Role::Assistant,
            parts: vec![call(&id)],
        },
        Message {
            role: Role::User,
            parts: vec![result(&id, output)],
        },
        Message::assistant_text(format!("answer {n}")),
    ]
}

/// Every call has exactly one result in the next message, and no result
/// lacks its call.
fn assert_paired(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        let calls: Vec<&str> = m.tool_calls().map(|c| c.0).collect();
        if m.role == Role::Assistant && !calls.is_empty() {
            let next = &messages[i + 1];
            let results: Vec<&str> = next
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolResult { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(calls, results, "at message {i}");
        }
        if m.role == Role::User {
            let prev_calls: Vec<&str> = if i > 0 {
                messages[i - 1].tool_calls().map(|c| c.0).collect()
            } else {
                vec![]
            };
            for p in &m.parts {
                if let Part::ToolResult { call_id, .. } = p {
                    assert!(prev_calls.contains(&call_id.as_str()), "orphan {call_id}");
                }
            }
        }
    }
}

#[test]
fn split_falls_on_a_prompt_and_keeps_the_last_turn() {
    let mut h = Vec::new();
    for n in 0..5 {
        h.extend(turn(n, &"x".repeat(400)));
    }
    let split = split_point(&h, 150).unwrap();
    assert_eq!(h[split], Message::user_text("prompt 4"));
    let split = split_point(&h, 10).unwrap();
    assert_eq!(split, 16, "the last turn stays even when it alone is over");
    assert_eq!(split_point(&turn(0, "x"), 10_000), None);
}

#[test]
fn elision_replaces_old_outputs_first() {
    let mut h = Vec::new();
    for n in 0..3 {
        h.extend(turn(n, &"y".repeat(4_000)));
    }
    let before = estimate_messages(&h);
    let saved = elide_tool_outputs(&mut h, 8, 0);
    assert!(saved > 1_500, "{saved}");
    assert_eq!(estimate_messages(&h), before - saved);
    let text = crate::conversation::result_text(match &h[2].parts[0] {
        Part::ToolResult { content, .. } => content,
        _ => unreachable!(),
    });
    assert!(text.starts_with("[output elided"), "{text}");
    // The last turn's output is untouched.
    assert!(matches!(&h[10].parts[0], Part::ToolResult { content, .. }
        if crate::conversation::result_text(content).len() == 4_000));
    assert_paired(&h);
}

#[test]
fn compacted_history_starts_with_the_summary_and_alternates() {
    let mut h = Vec::new();
    for n in 0..3 {
        h.extend(turn(n, "out"));
    }
    let split = split_point(&h, 30).unwrap();
    let new = compacted("We built X.", &h[split..]);
    assert_eq!(new[0].role, Role::User);
    assert!(new[0].text().contains(SUMMARY_TAG));
    assert!(new[0].text().contains("We built X."));
    assert!(new[0].text().contains("prompt 2"));
    for w in new.windows(2) {
        assert_ne!(w[0].role, w[1].role);
    }
    assert_paired(&new);
}

#[test]
fn summary_request_holds_the_transcript_and_focus() {
    let msgs = summary_messages(&turn(0, "file body"), Some("the parser"));
    let text = msgs[0].text();
    assert!(text.contains("USER: prompt 0"));
    assert!(text.contains("TOOL CALL view"));
    assert!(text.contains("TOOL RESULT: file body"));
    assert!(text.contains("focus on: the parser"));
}

#[test]
fn tracker_adds_estimates_to_the_reported_figure() {
    let mut t = Tracker::default();
    let h = turn(0, &"z".repeat(400));
    assert!(t.estimate(estimate_tokens("sys"), &h) > 100);
    t.report(5_000, 2);
    let est = t.estimate(estimate_tokens("sys"), &h);
    assert!(est > 5_000 && est < 5_200, "{est}");
}

/// What can happen to a history, in any order.
#[derive(Debug, Clone)]
enum Step {
    /// A full turn with `k` tool calls.
    Turn(usize),
    /// A turn cut off after the assistant asked for `k` calls and `r` of
    /// the results arrived.
    Cancelled(usize, usize),
    /// Compaction keeping about this many tokens.
    Compact(u64),
    /// Elision of old tool outputs.
    Elide,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0usize..3).prop_map(Step::Turn),
        (1usize..4, 0usize..4).prop_map(|(k, r)| Step::Cancelled(k, r.min(k))),
        (0u64..300).prop_map(Step::Compact),
        Just(Step::Elide),
    ]
}

proptest! {
    #[test]
    fn no_sequence_of_cancels_and_compactions_orphans_a_call(steps in proptest::collection::vec(step(), 1..30)) {
        let mut h: Vec<Message> = Vec::new();
        let mut next = 0usize;
        for s in steps {
            match s {
                Step::Turn(k) | Step::Cancelled(k, _) => {
                    h.push(Message::user_text(format!("prompt {next}")));
                    let ids: Vec<String> = (0..k).map(|i| format!("t{next}_{i}")).collect();
                    next += 1;
                    if k > 0 {
                        h.push(Message { role: Role::Assistant, parts: ids.iter().map(|i| call(i)).collect() });
                        let got = if let Step::Cancelled(_, r) = s { r } else { k };
                        let parts: Vec<Part> = ids.iter().take(got).map(|i| result(i, &"o".repeat(300))).collect();
                        if !parts.is_empty() {
                            h.push(Message { role: Role::User, parts });
                        }
                    }
                    if matches!(s, Step::Turn(_)) {
                        h.push(Message::assistant_text("done"));
                    }
                    // What the agent does at the end of every turn.
                    repair_tool_pairs(&mut h);
                }
                Step::Compact(keep) => {
                    if let Some(split) = split_point(&h, keep) {
                        h = compacted("summary", &h[split..]);
                    }
                }
                Step::Elide => {
                    let upto = h.len();
                    elide_tool_outputs(&mut h, upto, 0);
                }
            }
            assert_paired(&h);
        }
    }
}

#[test]
fn an_unreported_estimate_counts_the_fixed_part() {
    // A resumed or just-compacted session has no reported figure: the
    // system prompt and tool specifications must still be counted.
    let t = Tracker::default();
    let h = turn(0, "short");
    assert_eq!(t.estimate(4_000, &h), 4_000 + estimate_messages(&h));
}
