//! `kind = "bedrock"`: the Converse stream, event-stream frames encoded in
//! the test with the same crate cairn decodes them with, SigV4 signed.

use crate::{mock_model, provider_harness};
use cairn::llm::{
    AwsAuth, AwsCredentials, CloudSettings, LlmError, ProviderKind, ProviderSettings, StreamEvent,
};
use mock_model::{Format, MockModel, Reply};
use provider_harness::*;
use serde_json::json;

fn bedrock(mock: &MockModel) -> ProviderSettings {
    let mut s = settings(ProviderKind::Bedrock, &mock.url());
    s.api_key = None;
    s.cloud = CloudSettings {
        region: Some("eu-west-3".into()),
        aws: Some(AwsAuth::Keys(AwsCredentials {
            access_key_id: "AKIATESTKEY".into(),
            secret_access_key: "secret".into(),
            session_token: Some("session-tok".into()),
        })),
        ..CloudSettings::default()
    };
    s
}

#[tokio::test]
async fn bedrock_passes_the_provider_conformance_suite() {
    conformance_with_model(
        Format::Bedrock,
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        bedrock,
    )
    .await;
}

#[tokio::test]
async fn requests_are_signed_for_the_region_with_the_session_token() {
    let mock = MockModel::start(Format::Bedrock, vec![Reply::text("hi")]).await;
    let mut req = request();
    req.model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0".into();
    let events = collect(build(bedrock(&mock)).as_ref(), &req).await.unwrap();
    assert_eq!(text_of(&events), "hi");
    let h = &mock.request_headers()[0];
    let get = |k: &str| h.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let auth = get("authorization").expect("signed");
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIATESTKEY/")
            && auth.contains("/eu-west-3/bedrock/aws4_request")
            && auth.contains("x-amz-security-token"),
        "{auth}"
    );
    assert_eq!(get("x-amz-security-token").as_deref(), Some("session-tok"));
    assert_eq!(
        mock.request_paths()[0],
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    let body = &mock.requests()[0];
    assert_eq!(body["system"][0]["text"], "You are a test.");
    assert_eq!(body["toolConfig"]["tools"][0]["toolSpec"]["name"], "view");
    assert_eq!(body["inferenceConfig"]["maxTokens"], 1024);
}

#[tokio::test]
async fn exceptions_in_the_stream_are_classified() {
    let mock = MockModel::start(
        Format::Bedrock,
        vec![
            Reply::stream_error(
                json!({"type": "throttlingException", "message": "Too many requests"}),
            ),
            Reply::text("ok"),
        ],
    )
    .await;
    let (r, notices) = retrying(build(bedrock(&mock)));
    let events = collect(&r, &request()).await.unwrap();
    assert_eq!(text_of(&events), "ok");
    assert!(notices.lock().unwrap()[0].error.contains("rate limited"));

    let mock = MockModel::start(
        Format::Bedrock,
        vec![Reply::stream_error(
            json!({"type": "validationException", "message": "Input is too long for requested model."}),
        )],
    )
    .await;
    let (r, _) = retrying(build(bedrock(&mock)));
    let err = collect(&r, &request()).await.unwrap_err();
    assert!(matches!(err, LlmError::ContextLength { .. }), "{err:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn redacted_reasoning_and_cache_usage_come_through() {
    let mock = MockModel::start(
        Format::Bedrock,
        vec![
            Reply::default()
                .reasoning("hidden?")
                .redacted_thinking("cmVkYWN0ZWQ=")
                .and_text("Answer.")
                .usage(10, 5)
                .cache_usage(200, 30),
        ],
    )
    .await;
    let events = collect(build(bedrock(&mock)).as_ref(), &request())
        .await
        .unwrap();
    assert!(events.contains(&StreamEvent::ReasoningSignature("c2ln".into())));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ProviderData { data, .. }
        if data["reasoningContent"]["redactedContent"] == "cmVkYWN0ZWQ="))
    );
    let u = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens),
        (10, 200, 30)
    );
}
