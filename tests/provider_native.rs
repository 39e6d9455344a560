//! `kind = "gemini"` and `kind = "ollama"` against their scripted servers.

use crate::{mock_model, provider_harness};
use cairn::conversation::{Message, Part, ResultContent, Role};
use cairn::llm::{ProviderKind, StopReason, StreamEvent};
use mock_model::{Format, MockModel, Reply};
use provider_harness::*;
use serde_json::json;

#[tokio::test]
async fn gemini_kind_passes_the_provider_conformance_suite() {
    conformance(Format::Gemini, |m| settings(ProviderKind::Gemini, &m.url())).await;
}

#[tokio::test]
async fn ollama_kind_passes_the_provider_conformance_suite() {
    conformance(Format::Ollama, |m| settings(ProviderKind::Ollama, &m.url())).await;
}

#[tokio::test]
async fn gemini_thoughts_and_signatures_go_back_with_their_calls() {
    let mock = MockModel::start(
        Format::Gemini,
        vec![
            Reply::default()
                .reasoning("Check the file.")
                .tool_call("x", "view", json!({"file_path": "a.rs"}))
                .usage(50, 9)
                .cache_usage(30, 0),
            Reply::text("Done."),
        ],
    )
    .await;
    let p = build(settings(ProviderKind::Gemini, &mock.url()));
    let mut req = request();
    req.model = "gemini-2.5-pro".into();
    let events = collect(p.as_ref(), &req).await.unwrap();
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "Check the file.");
    let usage = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .unwrap();
    assert_eq!((usage.input_tokens, usage.cache_read_tokens), (50, 30));
    let calls = calls_of(&events);
    let sig = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::ProviderData { format, data } => Some((format.clone(), data.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(sig.1["thoughtSignature"], "sig-view");
    req.messages.push(Message {
        role: Role::Assistant,
        parts: vec![
            Part::ProviderData {
                format: sig.0,
                data: sig.1,
            },
            Part::ToolCall {
                id: calls[0].0.clone(),
                name: "view".into(),
                input: json!({"file_path": "a.rs"}),
            },
        ],
    });
    req.messages.push(Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: calls[0].0.clone(),
            content: vec![ResultContent::text("fn a() {}")],
            is_error: false,
        }],
    });
    collect(p.as_ref(), &req).await.unwrap();
    let second = &mock.requests()[1];
    let model_turn = &second["contents"][1];
    assert_eq!(model_turn["role"], "model");
    assert_eq!(model_turn["parts"][0]["functionCall"]["name"], "view");
    assert_eq!(model_turn["parts"][0]["thoughtSignature"], "sig-view");
    let response = &second["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "view");
    assert_eq!(response["response"]["content"], "fn a() {}");
    assert_eq!(
        second["systemInstruction"]["parts"][0]["text"],
        "You are a test."
    );
    assert_eq!(
        mock.request_paths()[0],
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    let h = &mock.request_headers()[0];
    assert!(
        h.iter()
            .any(|(k, v)| k == "x-goog-api-key" && v == "test-key")
    );
}

#[tokio::test]
async fn gemini_finish_reasons_are_stop_reasons() {
    for (reason, want) in [
        ("MAX_TOKENS", StopReason::MaxTokens),
        ("SAFETY", StopReason::Refusal),
    ] {
        let mock =
            MockModel::start(Format::Gemini, vec![Reply::text("Hal").stop_reason(reason)]).await;
        let events = collect(
            build(settings(ProviderKind::Gemini, &mock.url())).as_ref(),
            &request(),
        )
        .await
        .unwrap();
        assert_eq!(events.last(), Some(&StreamEvent::Done(want)));
    }
}

#[tokio::test]
async fn ollama_gets_the_models_real_context_length_and_tool_names() {
    let mock = MockModel::start(
        Format::Ollama,
        vec![
            Reply::tool("x", "view", json!({"file_path": "a"})),
            Reply::text("ok"),
        ],
    )
    .await;
    let p = build(settings(ProviderKind::Ollama, &mock.url()));
    let events = collect(p.as_ref(), &request()).await.unwrap();
    let calls = calls_of(&events);
    let mut req = request();
    req.messages.push(Message {
        role: Role::Assistant,
        parts: vec![Part::ToolCall {
            id: calls[0].0.clone(),
            name: "view".into(),
            input: json!({"file_path": "a"}),
        }],
    });
    req.messages.push(Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: calls[0].0.clone(),
            content: vec![ResultContent::text("contents")],
            is_error: false,
        }],
    });
    collect(p.as_ref(), &req).await.unwrap();
    let reqs = mock.requests();
    assert_eq!(reqs[0]["options"]["num_ctx"], 40960);
    assert_eq!(reqs[0]["options"]["num_predict"], 1024);
    let tool = &reqs[1]["messages"][3];
    assert_eq!(tool["role"], "tool");
    assert_eq!(tool["tool_name"], "view");
    assert_eq!(tool["content"], "contents");
    assert_eq!(mock.request_paths(), ["/api/chat", "/api/chat"]);
}

#[tokio::test]
async fn a_local_ollama_is_detected_and_spoken_to_natively() {
    let mock = MockModel::start(Format::Ollama, vec![]).await;
    let host = mock.url().trim_start_matches("http://").to_string();
    let env = move |k: &str| (k == "OLLAMA_HOST").then(|| host.clone());
    let r = cairn::llm::resolve_provider(&cairn::config::Config::default(), None, None, &env)
        .await
        .unwrap()
        .expect("detected");
    assert_eq!(r.settings.kind, ProviderKind::Ollama);
    assert_eq!(r.model, "qwen3:8b");
    assert_eq!(r.settings.base_url, mock.url());
}
