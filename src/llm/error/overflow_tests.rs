//! The bodies servers really send when a request does not fit the model's
//! window, each of which must read as a context-length error (so cairn
//! compacts and retries) and nothing else.

use super::*;
use serde_json::json;

fn is_context(status: u16, body: &str) -> bool {
    matches!(
        LlmError::from_status(status, None, body),
        LlmError::ContextLength { .. }
    )
}

#[test]
fn openai_context_length_exceeded() {
    let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    assert!(is_context(400, body));
}

#[test]
fn anthropic_prompt_is_too_long() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208213 tokens > 200000 maximum"}}"#;
    assert!(is_context(400, body));
}

#[test]
fn gemini_input_token_count() {
    let body = r#"{"error":{"code":400,"message":"The input token count (1100342) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
    assert!(is_context(400, body));
}

#[test]
fn llama_cpp_exceed_context_size_error() {
    let body = r#"{"error":{"code":400,"message":"request (10976 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":10976,"n_ctx":8192}}"#;
    assert!(is_context(400, body));
    // Inside a 200 stream, as llama-server sends it once streaming began.
    let in_stream = LlmError::from_stream_error(&json!({
        "code": 400,
        "message": "request (10976 tokens) exceeds the available context size (8192 tokens), try increasing it",
        "type": "exceed_context_size_error"
    }));
    assert!(
        matches!(in_stream, LlmError::ContextLength { .. }),
        "{in_stream:?}"
    );
}

#[test]
fn vllm_maximum_context_length() {
    let body = r#"{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 10976 tokens (8928 in the messages, 2048 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;
    assert!(is_context(400, body));
    let newer = r#"{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 8192 tokens and your request has 5120 input tokens (4096 > 8192 - 5120). None","type":"BadRequestError","param":null,"code":400}}"#;
    assert!(is_context(400, newer));
}

#[test]
fn lm_studio_context_overflow() {
    let body = r#"{"error":"Trying to keep the first 10976 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#;
    assert!(is_context(400, body));
}

#[test]
fn ollama_prompt_too_long() {
    let body = r#"{"error":"prompt too long; exceeded max context length by 2784 tokens"}"#;
    assert!(is_context(500, body));
    assert!(is_context(
        400,
        r#"{"error":"the input length exceeds the context length"}"#
    ));
}

#[test]
fn litellm_wrapped_forms() {
    let body = r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - Error code: 400 - {'error': {'message': \"This model's maximum context length is 8192 tokens.\", 'type': 'invalid_request_error', 'code': 'context_length_exceeded'}}","type":null,"param":null,"code":"400"}}"#;
    assert!(is_context(400, body));
    let bare = r#"{"error":{"message":"litellm.ContextWindowExceededError: vertex_ai - input too large","type":"ContextWindowExceededError","param":null,"code":"400"}}"#;
    assert!(is_context(400, bare));
}

#[test]
fn other_refusals_are_not_context_errors() {
    assert!(!is_context(
        400,
        r#"{"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error","code":"invalid_value"}}"#
    ));
    assert!(!is_context(
        500,
        r#"{"error":{"code":500,"message":"failed to load model","type":"server_error"}}"#
    ));
}
