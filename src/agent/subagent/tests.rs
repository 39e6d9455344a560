use super::*;
use crate::extensions::agents::builtin;

fn run_with(outcome: TurnOutcome, answer: &str) -> ChildRun {
    ChildRun {
        outcome,
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![Part::Text {
                    text: "task".into(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::ToolCall {
                        id: "a".into(),
                        name: "grep".into(),
                        input: serde_json::json!({}),
                    },
                    Part::ToolCall {
                        id: "b".into(),
                        name: "view".into(),
                        input: serde_json::json!({}),
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: answer.into(),
                    },
                    Part::ToolCall {
                        id: "c".into(),
                        name: "view".into(),
                        input: serde_json::json!({}),
                    },
                ],
            },
        ],
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 200,
            ..Usage::default()
        },
        cost: None,
    }
}

#[test]
fn the_account_counts_calls_by_tool_and_tokens() {
    let explore = &builtin()[0];
    let run = run_with(TurnOutcome::Completed, "found it");
    let line = account(explore, &run, std::time::Duration::from_millis(1500));
    assert_eq!(
        line,
        "sub-agent explore finished: 3 tool calls (grep, view ×2), 2 model responses, 1200 tokens, 1.5 s"
    );
}

#[test]
fn a_long_answer_is_cut_with_a_note_and_a_failure_is_an_error_result() {
    let explore = &builtin()[0];
    let long = "x".repeat(ANSWER_CAP + 10);
    let out = answer(explore, run_with(TurnOutcome::Completed, &long), "acct");
    assert!(!out.is_error);
    let text = out.text_content();
    assert!(text.contains(&format!(
        "cut at {ANSWER_CAP} of {} characters",
        ANSWER_CAP + 10
    )));
    assert!(text.len() < ANSWER_CAP + 200);
    let limit = answer(
        explore,
        run_with(TurnOutcome::TurnLimit { limit: 3 }, "half way"),
        "acct",
    );
    assert!(limit.is_error);
    assert!(limit.text_content().contains("stopped after 3 model calls"));
    assert!(limit.text_content().contains("half way"));
}

#[test]
fn a_task_needs_a_prompt_and_defaults_to_general() {
    let t = task(&serde_json::json!({"description": "d", "prompt": "do it"})).unwrap();
    assert_eq!(t.agent, "general");
    assert!(
        task(&serde_json::json!({"description": "d", "prompt": " "}))
            .err()
            .unwrap()
            .contains("empty")
    );
}
