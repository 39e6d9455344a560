//! `kind = "openai-responses"` against the scripted Responses server.

use crate::{mock_model, provider_harness};
use cairn::conversation::{Message, Part, ResultContent, Role};
use cairn::llm::{ProviderKind, StopReason, StreamEvent};
use mock_model::{Format, MockModel, Reply};
use provider_harness::*;
use serde_json::json;

#[tokio::test]
async fn responses_kind_passes_the_provider_conformance_suite() {
    conformance(Format::Responses, |m| {
        settings(ProviderKind::OpenaiResponses, &m.url())
    })
    .await;
}

#[tokio::test]
async fn encrypted_reasoning_goes_back_unstored_with_the_calls_it_led_to() {
    let mock = MockModel::start(
        Format::Responses,
        vec![
            Reply::default()
                .reasoning("I should read a.rs first.")
                .tool_call("call_1", "view", json!({"file_path": "a.rs"})),
            Reply::text("Read it."),
        ],
    )
    .await;
    let p = build(settings(ProviderKind::OpenaiResponses, &mock.url()));
    let mut req = request();
    req.reasoning = true;
    let events = collect(p.as_ref(), &req).await.unwrap();
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "I should read a.rs first.");
    let (format, item) = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::ProviderData { format, data } => Some((format.clone(), data.clone())),
            _ => None,
        })
        .expect("the reasoning item is kept");
    assert_eq!(item["encrypted_content"], "gAAAA-enc-0");
    let first = &mock.requests()[0];
    assert_eq!(first["store"], false);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["instructions"], "You are a test.");

    req.messages.push(Message {
        role: Role::Assistant,
        parts: vec![
            Part::Reasoning {
                text: reasoning,
                signature: None,
            },
            Part::ProviderData { format, data: item },
            Part::ToolCall {
                id: "call_1".into(),
                name: "view".into(),
                input: json!({"file_path": "a.rs"}),
            },
        ],
    });
    req.messages.push(Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: "call_1".into(),
            content: vec![ResultContent::text("fn a() {}")],
            is_error: false,
        }],
    });
    collect(p.as_ref(), &req).await.unwrap();
    let input = mock.requests()[1]["input"].as_array().unwrap().clone();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], "gAAAA-enc-0");
    assert!(
        input[1].get("id").is_none(),
        "an unstored item's id is not sent"
    );
    assert_eq!(input[3]["call_id"], "call_1");
    assert_eq!(input[3]["output"], "fn a() {}");
}

#[tokio::test]
async fn an_answer_cut_by_max_output_tokens_stops_as_such() {
    let mock = MockModel::start(
        Format::Responses,
        vec![Reply::text("Half an ans").stop_reason("max_output_tokens")],
    )
    .await;
    let p = build(settings(ProviderKind::OpenaiResponses, &mock.url()));
    let events = collect(p.as_ref(), &request()).await.unwrap();
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done(StopReason::MaxTokens))
    );
}

#[tokio::test]
async fn azure_responses_endpoint_gets_its_key_header_and_api_version() {
    let mock = MockModel::start(Format::Responses, vec![Reply::text("hi")]).await;
    let mut s = settings(
        ProviderKind::OpenaiResponses,
        &format!("{}/openai/v1", mock.url().trim_end_matches("/v1")),
    );
    s.azure = true;
    s.query = vec![("api-version".into(), "preview".into())];
    let events = collect(build(s).as_ref(), &request()).await.unwrap();
    assert_eq!(text_of(&events), "hi");
    let h = &mock.request_headers()[0];
    assert!(h.iter().any(|(k, v)| k == "api-key" && v == "test-key"));
    assert!(!h.iter().any(|(k, _)| k == "authorization"));
    assert_eq!(
        mock.request_paths(),
        ["/openai/v1/responses?api-version=preview"]
    );
}

#[tokio::test]
async fn the_openai_preset_uses_responses_for_marked_models_only() {
    let mock = MockModel::start(Format::Responses, vec![Reply::text("codex here")]).await;
    let p = build(settings(ProviderKind::OpenaiAuto, &mock.url()));
    let mut req = request();
    req.model = "gpt-5-codex".into();
    let events = collect(p.as_ref(), &req).await.unwrap();
    assert_eq!(text_of(&events), "codex here");
    assert_eq!(mock.request_paths(), ["/v1/responses"]);

    let chat = MockModel::start(Format::OpenAi, vec![Reply::text("chat here")]).await;
    let p = build(settings(ProviderKind::OpenaiAuto, &chat.url()));
    req.model = "gpt-4.1".into();
    let events = collect(p.as_ref(), &req).await.unwrap();
    assert_eq!(text_of(&events), "chat here");
    assert_eq!(chat.request_paths(), ["/v1/chat/completions"]);
}
