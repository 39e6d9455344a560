//! Both wire formats against the scripted model server.

use crate::mock_model;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn::conversation::{Message, Part, ResultContent, Role};
use cairn::llm::retry::{RetryNotice, RetryPolicy, Retrying};
use cairn::llm::{
    LlmError, Provider, ProviderKind, ProviderSettings, Request, StreamEvent, ToolSpec,
    build_provider,
};
use futures::StreamExt;
use mock_model::{Format, MockModel, Reply};
use serde_json::json;

const FORMATS: [Format; 2] = [Format::OpenAi, Format::Anthropic];

fn provider(mock: &MockModel, format: Format) -> Arc<dyn Provider> {
    let kind = match format {
        Format::OpenAi => ProviderKind::Openai,
        Format::Anthropic => ProviderKind::Anthropic,
        Format::Responses => ProviderKind::OpenaiResponses,
        Format::Gemini => ProviderKind::Gemini,
        Format::Ollama => ProviderKind::Ollama,
        Format::Bedrock => ProviderKind::Bedrock,
    };
    Arc::from(
        build_provider(ProviderSettings {
            name: "mock".into(),
            kind,
            base_url: mock.url(),
            api_key: Some("test-key".into()),
            headers: vec![],
            query: vec![],
            azure: false,
            request_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(10),
            cloud: Default::default(),
            wire: Default::default(),
        })
        .unwrap(),
    )
}

fn retrying(p: Arc<dyn Provider>, notices: Arc<Mutex<Vec<RetryNotice>>>) -> Retrying {
    Retrying::new(
        p,
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(400),
        },
    )
    .with_listener(Arc::new(move |n| notices.lock().unwrap().push(n)))
}

fn request() -> Request {
    Request {
        model: "claude-sonnet-4-5".into(),
        system: "You are a test.".into(),
        messages: vec![Message::user_text("hello")],
        tools: vec![ToolSpec {
            name: "view".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
        }],
        max_tokens: 1024,
        temperature: None,
        reasoning: false,
        effort: None,
        web_search: None,
    }
}

async fn collect(p: &dyn Provider, r: &Request) -> Result<Vec<StreamEvent>, LlmError> {
    let mut s = p.stream(r).await?;
    let mut out = Vec::new();
    while let Some(item) = s.next().await {
        out.push(item?);
    }
    Ok(out)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plain_answer_streams_in_pieces_with_usage() {
    for f in FORMATS {
        let mock =
            MockModel::start(f, vec![Reply::text("Hello there, friend.").usage(42, 7)]).await;
        let events = collect(provider(&mock, f).as_ref(), &request())
            .await
            .unwrap();
        assert_eq!(text_of(&events), "Hello there, friend.", "{f:?}");
        let deltas = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count();
        assert!(deltas >= 3, "{f:?}: text must arrive in pieces");
        let usage = events.iter().rev().find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        });
        assert_eq!(
            usage.map(|u| (u.input_tokens, u.output_tokens)),
            Some((42, 7)),
            "{f:?}"
        );
        assert!(matches!(events.last(), Some(StreamEvent::Done(_))));
        let headers = &mock.request_headers()[0];
        let has = |k: &str, v: &str| headers.iter().any(|(hk, hv)| hk == k && hv == v);
        match f {
            Format::OpenAi
            | Format::Responses
            | Format::Gemini
            | Format::Ollama
            | Format::Bedrock => {
                assert!(has("authorization", "Bearer test-key"))
            }
            Format::Anthropic => {
                assert!(has("x-api-key", "test-key") && has("anthropic-version", "2023-06-01"))
            }
        }
    }
}

#[tokio::test]
async fn tool_call_arguments_in_fragments_are_reassembled() {
    for f in FORMATS {
        let args =
            json!({"file_path": "src/very/long/path/to/the/module.rs", "offset": 10, "limit": 200});
        let mock = MockModel::start(
            f,
            vec![Reply::text("Let me look.").tool_call("call_7", "view", args.clone())],
        )
        .await;
        let events = collect(provider(&mock, f).as_ref(), &request())
            .await
            .unwrap();
        let mut raw = String::new();
        let mut start = None;
        let mut fragments = 0;
        for e in &events {
            match e {
                StreamEvent::ToolCallStart { id, name, .. } => {
                    start = Some((id.clone(), name.clone()))
                }
                StreamEvent::ToolCallDelta { fragment, .. } => {
                    fragments += 1;
                    raw.push_str(fragment)
                }
                _ => {}
            }
        }
        assert_eq!(start, Some(("call_7".into(), "view".into())), "{f:?}");
        assert!(fragments >= 3, "{f:?}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&raw).unwrap(),
            args
        );
    }
}

#[tokio::test]
async fn reasoning_is_streamed_separately() {
    for f in FORMATS {
        let mock = MockModel::start(
            f,
            vec![
                Reply::default()
                    .reasoning("think think")
                    .and_text("Answer."),
            ],
        )
        .await;
        let events = collect(provider(&mock, f).as_ref(), &request())
            .await
            .unwrap();
        let reasoning: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning, "think think", "{f:?}");
        assert_eq!(text_of(&events), "Answer.");
    }
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_delay_it_asks() {
    for f in FORMATS {
        let mock = MockModel::start(
            f,
            vec![Reply::status(429).retry_after(0.3), Reply::text("ok")],
        )
        .await;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let p = retrying(provider(&mock, f), notices.clone());
        let started = Instant::now();
        let events = collect(&p, &request()).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300), "{f:?}");
        assert_eq!(text_of(&events), "ok");
        assert_eq!(mock.requests().len(), 2);
        let n = notices.lock().unwrap();
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].delay, Duration::from_millis(300));
    }
}

#[tokio::test]
async fn server_errors_back_off_and_retry() {
    for f in FORMATS {
        let mock = MockModel::start(
            f,
            vec![
                Reply::status(500),
                Reply::status(503),
                Reply::text("finally"),
            ],
        )
        .await;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let p = retrying(provider(&mock, f), notices.clone());
        let events = collect(&p, &request()).await.unwrap();
        assert_eq!(text_of(&events), "finally");
        assert_eq!(mock.requests().len(), 3);
        let n = notices.lock().unwrap();
        assert_eq!(n.len(), 2);
        assert!(n[1].delay >= n[0].delay / 2, "backoff grows (with jitter)");
    }
}

#[tokio::test]
async fn bad_key_stops_at_once_with_a_message_about_the_key() {
    for f in FORMATS {
        let mock = MockModel::start(f, vec![Reply::status(401), Reply::text("never")]).await;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let p = retrying(provider(&mock, f), notices.clone());
        let err = collect(&p, &request()).await.unwrap_err();
        assert!(matches!(err, LlmError::Auth { .. }), "{f:?}: {err:?}");
        assert!(err.to_string().contains("API key"));
        assert_eq!(mock.requests().len(), 1, "no retry for a bad key");
        assert!(notices.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_retried_and_shown_once() {
    for f in FORMATS {
        let answer = "The quick brown fox jumps over the lazy dog, twice over.";
        let mock = MockModel::start(
            f,
            vec![Reply::text(answer).cut_after(5), Reply::text(answer)],
        )
        .await;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let p = retrying(provider(&mock, f), notices.clone());
        let events = collect(&p, &request()).await.unwrap();
        assert_eq!(text_of(&events), answer, "{f:?}");
        assert!(!events.iter().any(|e| matches!(e, StreamEvent::Reset)));
        assert_eq!(mock.requests().len(), 2);
    }
}

#[tokio::test]
async fn context_length_errors_are_classified() {
    for f in FORMATS {
        let mock = MockModel::start(f, vec![Reply::context_length_error()]).await;
        let err = collect(provider(&mock, f).as_ref(), &request())
            .await
            .unwrap_err();
        assert!(
            matches!(err, LlmError::ContextLength { .. }),
            "{f:?}: {err:?}"
        );
    }
}

#[tokio::test]
async fn requests_carry_system_tools_and_tool_results_in_each_wire_shape() {
    let mut r = request();
    r.messages = vec![
        Message::user_text("read a"),
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall {
                id: "c1".into(),
                name: "view".into(),
                input: json!({"file_path": "a"}),
            }],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "c1".into(),
                content: vec![ResultContent::text("contents of a")],
                is_error: false,
            }],
        },
    ];
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text("ok")]).await;
    collect(provider(&mock, Format::OpenAi).as_ref(), &r)
        .await
        .unwrap();
    let body = &mock.requests()[0];
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][0]["content"], "You are a test.");
    assert_eq!(body["messages"][2]["tool_calls"][0]["id"], "c1");
    assert_eq!(body["messages"][3]["role"], "tool");
    assert_eq!(body["messages"][3]["content"], "contents of a");
    assert_eq!(body["tools"][0]["function"]["name"], "view");
    assert_eq!(body["stream"], true);

    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    collect(provider(&mock, Format::Anthropic).as_ref(), &r)
        .await
        .unwrap();
    let body = &mock.requests()[0];
    assert_eq!(mock_model::system_text(body), "You are a test.");
    assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "c1");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}
