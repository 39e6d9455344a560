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
