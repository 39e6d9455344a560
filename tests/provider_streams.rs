//! Streams as real servers send them, and network faults, against the
//! scripted server: OpenAI Chat Completions and Anthropic Messages.

use crate::{mock_model, provider_harness};
use std::time::{Duration, SystemTime};

use cairn::conversation::{Message, Part, Role};
use cairn::llm::{LlmError, Provider, ProviderKind, StopReason, StreamEvent};
use mock_model::{Format, MockModel, Reply, ToolIndex};
use provider_harness::*;
use serde_json::json;

async fn start(f: Format, replies: Vec<Reply>) -> (MockModel, std::sync::Arc<dyn Provider>) {
    let mock = MockModel::start(f, replies).await;
    let p = build(settings(kind_for(f), &mock.url()));
    (mock, p)
}

#[tokio::test]
async fn parallel_calls_that_repeat_or_omit_index_stay_apart() {
    for how in [ToolIndex::Repeated, ToolIndex::Omitted] {
        let reply = Reply::tool("call_a", "view", json!({"file_path": "a.rs"}))
            .tool_call("call_b", "view", json!({"file_path": "b.rs"}))
            .tool_index(how);
        let (_mock, p) = start(Format::OpenAi, vec![reply]).await;
        let events = collect(p.as_ref(), &request()).await.unwrap();
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 2, "{how:?}: {calls:?}");
        for (call, file) in calls.iter().zip(["a.rs", "b.rs"]) {
            let args: serde_json::Value = serde_json::from_str(&call.2).unwrap();
            assert_eq!(args["file_path"], file, "{how:?}");
        }
        assert_eq!(calls[0].0, "call_a");
        assert_eq!(calls[1].0, "call_b");
        assert_eq!(events.last(), Some(&StreamEvent::Done(StopReason::ToolUse)));
    }
}

#[tokio::test]
async fn a_stream_ending_after_its_stop_reason_is_complete_and_paid_once() {
    for f in [Format::OpenAi, Format::Anthropic] {
        let (mock, p) = start(f, vec![Reply::text("All there.").without_done()]).await;
        let (r, notices) = retrying(p);
        let events = collect(&r, &request()).await.unwrap();
        assert_eq!(text_of(&events), "All there.", "{f:?}");
        assert_eq!(events.last(), Some(&StreamEvent::Done(StopReason::EndTurn)));
        assert_eq!(mock.requests().len(), 1, "{f:?}: asked again");
        assert!(notices.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_whole_json_answer_to_a_streaming_request_is_read() {
    for f in [Format::OpenAi, Format::Anthropic] {
        let reply = Reply::text("Whole answer.")
            .tool_call("t1", "view", json!({"file_path": "x"}))
            .usage(33, 4)
            .whole_json_body();
        let (mock, p) = start(f, vec![reply]).await;
        let events = collect(p.as_ref(), &request()).await.unwrap();
        assert_eq!(text_of(&events), "Whole answer.", "{f:?}");
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 1, "{f:?}");
        assert_eq!(calls[0].2, r#"{"file_path":"x"}"#);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, StreamEvent::Usage(u) if u.input_tokens == 33))
        );
        assert_eq!(events.last(), Some(&StreamEvent::Done(StopReason::ToolUse)));
        assert_eq!(mock.requests().len(), 1);
    }
}

async fn stream_error(f: Format, error: serde_json::Value, then: Vec<Reply>) -> (LlmError, usize) {
    let mut replies = vec![Reply::stream_error(error)];
    replies.extend(then);
    let (mock, p) = start(f, replies).await;
    let (r, _) = retrying(p);
    let err = collect(&r, &request()).await.unwrap_err();
    (err, mock.requests().len())
}

#[tokio::test]
async fn in_stream_errors_with_string_codes_are_classified() {
    let (err, asked) = stream_error(
        Format::OpenAi,
        json!({"code": "invalid_api_key", "message": "Incorrect API key provided", "type": "invalid_request_error"}),
        vec![],
    )
    .await;
    assert!(matches!(err, LlmError::Auth { .. }), "{err:?}");
    assert!(err.to_string().contains("API key"));
    assert_eq!(asked, 1, "an authentication error is not retried");

    let (err, asked) = stream_error(
        Format::OpenAi,
        json!({"code": "insufficient_quota", "message": "You exceeded your current quota"}),
        vec![],
    )
    .await;
    assert!(matches!(err, LlmError::Quota { .. }), "{err:?}");
    assert!(err.to_string().contains("billing"), "{err}");
    assert_eq!(asked, 1);

    let (err, asked) = stream_error(
        Format::Anthropic,
        json!({"type": "authentication_error", "message": "invalid x-api-key"}),
        vec![],
    )
    .await;
    assert!(matches!(err, LlmError::Auth { .. }), "{err:?}");
    assert_eq!(asked, 1);

    // A rate limit is retried as one.
    for (f, e) in [
        (
            Format::OpenAi,
            json!({"code": "rate_limit_exceeded", "message": "slow down"}),
        ),
        (
            Format::Anthropic,
            json!({"type": "rate_limit_error", "message": "slow down"}),
        ),
    ] {
        let (mock, p) = start(f, vec![Reply::stream_error(e), Reply::text("ok")]).await;
        let (r, notices) = retrying(p);
        let events = collect(&r, &request()).await.unwrap();
        assert_eq!(text_of(&events), "ok");
        assert_eq!(mock.requests().len(), 2);
        assert!(notices.lock().unwrap()[0].error.contains("rate limited"));
    }
}

#[tokio::test]
async fn redacted_thinking_is_kept_and_sent_back_unchanged() {
    let (mock, p) = start(
        Format::Anthropic,
        vec![
            Reply::default()
                .redacted_thinking("EmwKAhgBEgy3va3pzix/LafPsn4a")
                .tool_call("t1", "view", json!({"file_path": "a"})),
            Reply::text("done"),
        ],
    )
    .await;
    let events = collect(p.as_ref(), &request()).await.unwrap();
    let data = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::ProviderData { format, data } => Some((format.clone(), data.clone())),
            _ => None,
        })
        .expect("the redacted block is kept");
    let history = vec![
        Message::user_text("hello"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::ProviderData {
                    format: data.0,
                    data: data.1,
                },
                Part::ToolCall {
                    id: "t1".into(),
                    name: "view".into(),
                    input: json!({"file_path": "a"}),
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "t1".into(),
                content: vec![cairn::conversation::ResultContent::text("x")],
                is_error: false,
            }],
        },
    ];
    collect(p.as_ref(), &request_with(history)).await.unwrap();
    let sent = &mock.requests()[1]["messages"][1]["content"][0];
    assert_eq!(
        sent,
        &json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
    );
}

#[tokio::test]
async fn stop_reasons_are_reported() {
    for (f, reason, want) in [
        (Format::OpenAi, "length", StopReason::MaxTokens),
        (Format::Anthropic, "max_tokens", StopReason::MaxTokens),
        (Format::Anthropic, "refusal", StopReason::Refusal),
    ] {
        let (_mock, p) = start(f, vec![Reply::text("Partial").stop_reason(reason)]).await;
        let events = collect(p.as_ref(), &request()).await.unwrap();
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Done(want)),
            "{f:?} {reason}"
        );
    }
}

#[tokio::test]
async fn reasoning_goes_back_with_the_calls_of_the_turn_under_way() {
    let (mock, p) = start(Format::OpenAi, vec![Reply::text("ok")]).await;
    let history = vec![
        Message::user_text("hello"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "I should look.".into(),
                    signature: None,
                },
                Part::ToolCall {
                    id: "t1".into(),
                    name: "view".into(),
                    input: json!({"file_path": "a"}),
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "t1".into(),
                content: vec![cairn::conversation::ResultContent::text("x")],
                is_error: false,
            }],
        },
    ];
    collect(p.as_ref(), &request_with(history)).await.unwrap();
    let assistant = &mock.requests()[0]["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["reasoning_content"], "I should look.");
}

#[tokio::test]
async fn cache_tokens_are_read_in_both_shapes() {
    for f in [Format::OpenAi, Format::Anthropic] {
        let (_mock, p) = start(f, vec![Reply::text("x").usage(10, 2).cache_usage(90, 5)]).await;
        let events = collect(p.as_ref(), &request()).await.unwrap();
        let u = events
            .iter()
            .rev()
            .find_map(|e| match e {
                StreamEvent::Usage(u) => Some(*u),
                _ => None,
            })
            .unwrap();
        assert_eq!((u.input_tokens, u.cache_read_tokens), (10, 90), "{f:?}");
    }
}

// ---- network faults (issue 11 §8) ----

async fn fails_once(base_url: &str) -> LlmError {
    let p = build(settings(ProviderKind::Openai, base_url));
    let (r, notices) = retrying(p);
    let err = collect(&r, &request()).await.unwrap_err();
    assert!(notices.lock().unwrap().is_empty(), "{base_url}: retried");
    err
}

#[tokio::test]
async fn permanent_network_errors_are_not_retried() {
    let err = fails_once("not a url at all").await;
    assert!(matches!(err, LlmError::Unreachable(_)), "{err:?}");
    assert!(err.to_string().contains("base_url"), "{err}");

    let err = fails_once("http://no-such-host.invalid/v1").await;
    assert!(matches!(err, LlmError::Unreachable(_)), "{err:?}");
    assert!(err.to_string().contains("could not be resolved"), "{err}");

    let mock = MockModel::start(Format::OpenAi, vec![]).await;
    let https = mock.url().replace("http://", "https://");
    let err = fails_once(&https).await;
    assert!(matches!(err, LlmError::Unreachable(_)), "{err:?}");
    assert!(err.to_string().contains("http://"), "{err}");
}

#[tokio::test]
async fn a_stalled_stream_is_given_up_after_the_idle_timeout_and_retried() {
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Hello there, friend.").stall_before(3, Duration::from_secs(5)),
            Reply::text("Hello there, friend."),
        ],
    )
    .await;
    let mut s = settings(ProviderKind::Anthropic, &mock.url());
    s.idle_timeout = Duration::from_millis(300);
    let (r, notices) = retrying(build(s));
    let started = std::time::Instant::now();
    let events = collect(&r, &request()).await.unwrap();
    assert_eq!(text_of(&events), "Hello there, friend.");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "waited out the stall"
    );
    let notices = notices.lock().unwrap();
    assert_eq!(notices.len(), 1);
    assert!(
        notices[0].error.contains("idle timeout"),
        "{}",
        notices[0].error
    );
}

/// Keep-alive comments say the connection lives, not that the answer
/// moves: a stream that sends only them is a stall all the same.
#[tokio::test]
async fn a_stream_of_keep_alives_only_is_a_stall() {
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Hello there, friend.")
                .stall_before(3, Duration::from_secs(6))
                .keep_alive(Duration::from_millis(50)),
            Reply::text("Hello there, friend."),
        ],
    )
    .await;
    let mut s = settings(ProviderKind::Anthropic, &mock.url());
    s.idle_timeout = Duration::from_millis(400);
    let (r, notices) = retrying(build(s));
    let events = collect(&r, &request()).await.unwrap();
    assert_eq!(text_of(&events), "Hello there, friend.");
    let notices = notices.lock().unwrap();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].error.contains("only keep-alive"),
        "{}",
        notices[0].error
    );
    assert_eq!(mock.requests().len(), 2);
}

/// An answer over the configured size is cut with a message naming the
/// size and the setting, and is not retried.
#[tokio::test]
async fn an_answer_over_the_size_limit_is_cut_and_says_so() {
    let long = "x".repeat(300_000);
    let mock = MockModel::start(Format::OpenAi, vec![Reply::text(&long).chunk_chars(10_000)]).await;
    let mut s = settings(ProviderKind::Openai, &mock.url());
    s.wire.limits.max_response = 100_000;
    let (r, _notices) = retrying(build(s));
    let err = collect(&r, &request()).await.unwrap_err();
    assert!(
        err.to_string().contains("cut at 0.1 MB") && err.to_string().contains("max_response_mb"),
        "{err}"
    );
    assert_eq!(mock.requests().len(), 1, "not retried");
}

/// A limit that lifts in an hour is said at once, with the wait, not
/// waited out five minutes at a time.
#[tokio::test]
async fn a_retry_after_of_an_hour_is_reported_at_once() {
    let (mock, p) = start(
        Format::OpenAi,
        vec![
            Reply::status(429).retry_after(3_900.0),
            Reply::text("never"),
        ],
    )
    .await;
    let (r, notices) = retrying(p);
    let started = std::time::Instant::now();
    let err = collect(&r, &request()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(err.to_string().contains("asks to wait 1 h 5 min"), "{err}");
    assert!(notices.lock().unwrap().is_empty());
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn retry_after_given_as_an_http_date_is_honoured() {
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(3));
    let (mock, p) = start(
        Format::OpenAi,
        vec![Reply::status(429).retry_after_raw(&when), Reply::text("ok")],
    )
    .await;
    let (r, notices) = retrying(p);
    let events = collect(&r, &request()).await.unwrap();
    assert_eq!(text_of(&events), "ok");
    assert_eq!(mock.requests().len(), 2);
    let delay = notices.lock().unwrap()[0].delay;
    assert!(
        delay >= Duration::from_millis(1500) && delay <= Duration::from_secs(3),
        "{delay:?}"
    );
}

#[tokio::test]
async fn an_html_page_with_status_200_is_reported_as_such() {
    for f in [Format::OpenAi, Format::Anthropic] {
        let (mock, p) = start(f, vec![Reply::html_page()]).await;
        let (r, _) = retrying(p);
        let err = collect(&r, &request()).await.unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("HTML page") && msg.contains("Corporate Proxy"),
            "{msg}"
        );
        assert!(msg.contains("base_url"), "{msg}");
        assert_eq!(mock.requests().len(), 1);
    }
}
