use super::*;
use serde_json::json;

fn json_of(u: &acp::SessionUpdate) -> Value {
    serde_json::to_value(u).unwrap()
}

fn started(tr: &mut Translator, id: &str, name: &str, input: Value, summary: &str) -> Value {
    let ups = tr.updates(&AgentEvent::ToolCallStarted {
        call_id: id.into(),
        name: name.into(),
        input,
        summary: summary.into(),
    });
    assert_eq!(ups.len(), 1);
    json_of(&ups[0])
}

#[test]
fn a_tool_call_has_kind_title_location_and_status_changes() {
    let mut tr = Translator::new("/w".into());
    let call = started(
        &mut tr,
        "c1",
        "edit",
        json!({"file_path": "src/a.rs"}),
        "edit src/a.rs",
    );
    assert_eq!(call["sessionUpdate"], "tool_call");
    assert_eq!(call["toolCallId"], "c1");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "edit src/a.rs");
    // Pending is the protocol's default, left out on the wire.
    assert!(call["status"] == "pending" || call["status"].is_null());
    assert_eq!(call["locations"][0]["path"], "/w/src/a.rs");

    let running = tr.updates(&AgentEvent::ToolCallRunning {
        call_id: "c1".into(),
    });
    assert_eq!(json_of(&running[0])["status"], "in_progress");

    let d = crate::diff::FileDiff::new("src/a.rs".into(), "".into(), "new\n".into());
    let done = tr.updates(&AgentEvent::ToolCallFinished {
        call_id: "c1".into(),
        status: ToolStatus::Done,
        output: "Created src/a.rs".into(),
        display: Some(ToolDisplay::Diff(d)),
    });
    let done = json_of(&done[0]);
    assert_eq!(done["sessionUpdate"], "tool_call_update");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["content"][0]["type"], "diff");
    // A new file has no old text.
    assert!(done["content"][0].get("oldText").is_none_or(Value::is_null));
}

#[test]
fn command_output_accumulates_without_colour_codes() {
    let mut tr = Translator::new("/w".into());
    started(&mut tr, "b1", "bash", json!({"command": "make"}), "make");
    tr.updates(&AgentEvent::ToolCallOutput {
        call_id: "b1".into(),
        chunk: "\x1b[32mone\x1b[0m\n".into(),
    });
    let second = tr.updates(&AgentEvent::ToolCallOutput {
        call_id: "b1".into(),
        chunk: "two\n".into(),
    });
    let v = json_of(&second[0]);
    assert_eq!(v["content"][0]["content"]["text"], "one\ntwo\n");
    let failed = tr.updates(&AgentEvent::ToolCallFinished {
        call_id: "b1".into(),
        status: ToolStatus::Failed,
        output: "exit 2".into(),
        display: None,
    });
    assert_eq!(json_of(&failed[0])["status"], "failed");
}

#[test]
fn long_output_keeps_its_tail() {
    let mut tr = Translator::new("/w".into());
    started(&mut tr, "b1", "bash", json!({}), "yes");
    let line = "y".repeat(1023) + "\n";
    let mut last = Value::Null;
    for _ in 0..200 {
        let ups = tr.updates(&AgentEvent::ToolCallOutput {
            call_id: "b1".into(),
            chunk: line.clone(),
        });
        last = json_of(&ups[0]);
    }
    let text = last["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.len() <= OUTPUT_CAP + 4, "{}", text.len());
    assert!(text.starts_with('…') && text.ends_with("y\n"));
}

#[test]
fn a_permission_request_finds_its_waiting_call() {
    let mut tr = Translator::new("/w".into());
    started(&mut tr, "a", "bash", json!({}), "ls");
    started(&mut tr, "b", "edit", json!({}), "edit x");
    for id in ["a", "b"] {
        tr.updates(&AgentEvent::ToolCallWaiting { call_id: id.into() });
    }
    assert_eq!(tr.call_for("edit", "edit x").as_deref(), Some("b"));
    assert_eq!(tr.call_for("bash", "ls").as_deref(), Some("a"));
    assert_eq!(tr.call_for("bash", "ls"), None);
}

#[test]
fn text_thoughts_plan_mode_title_and_usage() {
    let mut tr = Translator::new("/w".into());
    let kinds: Vec<String> = [
        AgentEvent::TextDelta("hi".into()),
        AgentEvent::ReasoningDelta("hmm".into()),
        AgentEvent::Todos(vec![Todo {
            content: "write tests".into(),
            status: TodoStatus::InProgress,
        }]),
        AgentEvent::ModeChanged(Mode::Auto),
        AgentEvent::TitleGenerated("Fix the parser".into()),
        AgentEvent::Usage {
            usage: Default::default(),
            context_tokens: 10,
            context_window: 100,
            cost: Some(0.5),
        },
    ]
    .iter()
    .flat_map(|e| tr.updates(e))
    .map(|u| json_of(&u)["sessionUpdate"].as_str().unwrap().to_string())
    .collect();
    assert_eq!(
        kinds,
        [
            "agent_message_chunk",
            "agent_thought_chunk",
            "plan",
            "current_mode_update",
            "session_info_update",
            "usage_update"
        ]
    );
}

#[test]
fn every_mode_is_offered_and_the_current_one_named() {
    let v = serde_json::to_value(modes(Mode::AlwaysAsk)).unwrap();
    assert_eq!(v["currentModeId"], "always-ask");
    let ids: Vec<&str> = v["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["smart", "always-ask", "auto", "chat", "plan"]);
}

#[test]
fn a_search_links_only_web_pages_and_its_titles_stay_text() {
    use crate::conversation::{Source, WebSearch};
    let search = WebSearch {
        id: String::new(),
        queries: vec!["q\u{1b}[2J".into()],
        sources: vec![
            Source {
                title: "[click](https://evil.example)".into(),
                url: "javascript:alert(1)".into(),
            },
            Source {
                title: "ok".into(),
                url: "https://example.org/a".into(),
            },
        ],
        error: None,
        format: "anthropic".into(),
        wire: vec![],
    };
    let call = serde_json::to_value(web_search(&search, 3)).unwrap();
    assert_eq!(call["toolCallId"], "web-search-3");
    assert_eq!(call["title"], "Web search: q [2J");
    assert_eq!(call["content"][0]["content"]["type"], "text", "{call}");
    assert_eq!(
        call["content"][1]["content"]["uri"],
        "https://example.org/a"
    );
    let text = citations(&search.sources);
    assert!(
        text.contains("1. \\[click\\]\\(https://evil.example\\) javascript:alert\\(1\\)"),
        "{text}"
    );
    assert!(text.contains("2. ok <https://example.org/a>"), "{text}");
}
