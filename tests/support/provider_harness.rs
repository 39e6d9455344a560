//! Building a provider against the scripted server and collecting what it
//! streams, for the provider tests.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn::conversation::Message;
use cairn::llm::retry::{RetryNotice, RetryPolicy, Retrying};
use cairn::llm::{
    LlmError, Provider, ProviderKind, ProviderSettings, Request, StreamEvent, ToolSpec,
    build_provider,
};
use futures::StreamExt;
use serde_json::json;

pub fn settings(kind: ProviderKind, base_url: &str) -> ProviderSettings {
    ProviderSettings {
        name: "mock".into(),
        kind,
        base_url: base_url.to_string(),
        api_key: Some("test-key".into()),
        headers: vec![],
        query: vec![],
        azure: false,
        request_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        cloud: Default::default(),
        wire: Default::default(),
    }
}

pub fn build(s: ProviderSettings) -> Arc<dyn Provider> {
    Arc::from(build_provider(s).unwrap())
}

/// A retrying provider that records its retry notices.
pub fn retrying(p: Arc<dyn Provider>) -> (Retrying, Arc<Mutex<Vec<RetryNotice>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let n = notices.clone();
    let r = Retrying::new(
        p,
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(400),
        },
    )
    .with_listener(Arc::new(move |x| n.lock().unwrap().push(x)));
    (r, notices)
}

pub fn request_with(messages: Vec<Message>) -> Request {
    Request {
        model: "claude-sonnet-4-5".into(),
        system: "You are a test.".into(),
        messages,
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

pub fn request() -> Request {
    request_with(vec![Message::user_text("hello")])
}

/// Every event up to the end, or the first error.
pub async fn collect(p: &dyn Provider, r: &Request) -> Result<Vec<StreamEvent>, LlmError> {
    let mut s = p.stream(r).await?;
    let mut out = Vec::new();
    while let Some(item) = s.next().await {
        out.push(item?);
    }
    Ok(out)
}

pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// The tool calls of a response: (id, name, arguments as sent).
pub fn calls_of(events: &[StreamEvent]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(usize, String, String, String)> = Vec::new();
    for e in events {
        match e {
            StreamEvent::ToolCallStart { index, id, name } => {
                calls.push((*index, id.clone(), name.clone(), String::new()))
            }
            StreamEvent::ToolCallDelta { index, fragment } => {
                if let Some(c) = calls.iter_mut().rev().find(|c| c.0 == *index) {
                    c.3.push_str(fragment);
                }
            }
            _ => {}
        }
    }
    calls.into_iter().map(|(_, i, n, a)| (i, n, a)).collect()
}

use crate::mock_model::{Format, MockModel, Reply};
use cairn::conversation::{Part, ResultContent, Role};

/// The provider kind that speaks a scripted server's format.
pub fn kind_for(f: Format) -> ProviderKind {
    match f {
        Format::OpenAi => ProviderKind::Openai,
        Format::Anthropic => ProviderKind::Anthropic,
        Format::Responses => ProviderKind::OpenaiResponses,
        Format::Gemini => ProviderKind::Gemini,
        Format::Ollama => ProviderKind::Ollama,
        Format::Bedrock => ProviderKind::Bedrock,
    }
}

/// What every provider kind must do against its scripted server: a plain
/// answer, a tool call whose result is in the next request, parallel tool
/// calls, a 429 retried, and a cut stream retried without repeating text.
/// `settings` builds the provider for a started server.
pub async fn conformance(format: Format, settings: impl Fn(&MockModel) -> ProviderSettings) {
    conformance_with_model(format, "claude-sonnet-4-5", settings).await
}

/// One kind's run of the conformance suite.
struct Case<'a> {
    format: Format,
    model: &'a str,
    settings: &'a dyn Fn(&MockModel) -> ProviderSettings,
}

impl Case<'_> {
    fn request(&self) -> Request {
        let mut r = request();
        r.model = self.model.to_string();
        r
    }
    fn request_with(&self, m: Vec<Message>) -> Request {
        let mut r = request_with(m);
        r.model = self.model.to_string();
        r
    }
}

/// [`conformance`] asking for `model`.
pub async fn conformance_with_model(
    format: Format,
    model: &str,
    settings: impl Fn(&MockModel) -> ProviderSettings,
) {
    let c = Case {
        format,
        model,
        settings: &settings,
    };
    plain_answer(&c).await;
    tool_round_trip(&c).await;
    parallel_calls(&c).await;
    rate_limit_retried(&c).await;
    cut_stream_retried(&c).await;
}

async fn plain_answer(c: &Case<'_>) {
    let (format, settings) = (c.format, c.settings);
    let request = || c.request();
    let start = |replies: Vec<Reply>| MockModel::start(format, replies);
    // A plain answer, streamed in pieces, with usage.
    let mock = start(vec![Reply::text("Hello there, friend.").usage(42, 7)]).await;
    let p = build(settings(&mock));
    let events = collect(p.as_ref(), &request()).await.unwrap();
    assert_eq!(text_of(&events), "Hello there, friend.", "{format:?}");
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .count();
    assert!(deltas >= 3, "{format:?}: text must arrive in pieces");
    let usage = events.iter().rev().find_map(|e| match e {
        StreamEvent::Usage(u) => Some(*u),
        _ => None,
    });
    assert_eq!(
        usage.map(|u| (u.input_tokens, u.output_tokens)),
        Some((42, 7)),
        "{format:?}"
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done(cairn::llm::StopReason::EndTurn))
    );
}

async fn tool_round_trip(c: &Case<'_>) {
    let (format, settings) = (c.format, c.settings);
    let request = || c.request();
    let request_with = |m: Vec<Message>| c.request_with(m);
    let start = |replies: Vec<Reply>| MockModel::start(format, replies);
    // A tool call, and its result in the next request.
    let mock = start(vec![
        Reply::text("Looking.").tool_call("call_7", "view", json!({"file_path": "src/a.rs"})),
        Reply::text("It says hi."),
    ])
    .await;
    let p = build(settings(&mock));
    let events = collect(p.as_ref(), &request()).await.unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1, "{format:?}");
    assert_eq!(calls[0].1, "view");
    let args: serde_json::Value = serde_json::from_str(&calls[0].2).unwrap();
    assert_eq!(args["file_path"], "src/a.rs");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done(cairn::llm::StopReason::ToolUse))
    );
    let mut history = vec![Message::user_text("hello")];
    history.push(Message {
        role: Role::Assistant,
        parts: vec![
            Part::Text {
                text: "Looking.".into(),
            },
            Part::ToolCall {
                id: calls[0].0.clone(),
                name: "view".into(),
                input: args,
            },
        ],
    });
    history.push(Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: calls[0].0.clone(),
            content: vec![ResultContent::text("fn a() { hi() } // RESULT-42")],
            is_error: false,
        }],
    });
    let events = collect(p.as_ref(), &request_with(history)).await.unwrap();
    assert_eq!(text_of(&events), "It says hi.");
    let second = mock.requests()[1].to_string();
    assert!(second.contains("RESULT-42"), "{format:?}: {second}");
    // Gemini and Ollama do not number their calls; cairn's own ids stay home.
    let generated = ["gemini_call_", "ollama_call_"];
    if !generated.iter().any(|g| calls[0].0.starts_with(g)) {
        assert!(second.contains(&calls[0].0), "{format:?}: the call id");
    }
}

async fn parallel_calls(c: &Case<'_>) {
    let (format, settings) = (c.format, c.settings);
    let request = || c.request();
    let start = |replies: Vec<Reply>| MockModel::start(format, replies);
    // Parallel tool calls.
    let mock = start(vec![
        Reply::tool("call_a", "view", json!({"file_path": "a"})).tool_call(
            "call_b",
            "view",
            json!({"file_path": "b"}),
        ),
    ])
    .await;
    let events = collect(build(settings(&mock)).as_ref(), &request())
        .await
        .unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 2, "{format:?}: {calls:?}");
    for (c, f) in calls.iter().zip(["a", "b"]) {
        let v: serde_json::Value = serde_json::from_str(&c.2).unwrap();
        assert_eq!(v["file_path"], f, "{format:?}");
    }
}

async fn rate_limit_retried(c: &Case<'_>) {
    let (format, settings) = (c.format, c.settings);
    let request = || c.request();
    let start = |replies: Vec<Reply>| MockModel::start(format, replies);
    // A 429 is retried after the delay asked.
    let mock = start(vec![Reply::status(429).retry_after(0.2), Reply::text("ok")]).await;
    let (r, notices) = retrying(build(settings(&mock)));
    let events = collect(&r, &request()).await.unwrap();
    assert_eq!(text_of(&events), "ok", "{format:?}");
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(notices.lock().unwrap()[0].delay, Duration::from_millis(200));
}

async fn cut_stream_retried(c: &Case<'_>) {
    let (format, settings) = (c.format, c.settings);
    let request = || c.request();
    let start = |replies: Vec<Reply>| MockModel::start(format, replies);
    // A cut stream is retried and its text shown once.
    let long = "One two three four five six seven eight nine ten.";
    let mock = start(vec![Reply::text(long).cut_after(5), Reply::text(long)]).await;
    let (r, notices) = retrying(build(settings(&mock)));
    let events = collect(&r, &request()).await.unwrap();
    assert_eq!(text_of(&events), long, "{format:?}");
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(notices.lock().unwrap().len(), 1);
}
