//! The providers' own web search in each wire format: what a request
//! offers, what a response's search and citations become, and how a stored
//! search goes back on the next request.

use serde_json::{Value, json};

use super::stream::{Stream, WireFormat};
use super::transport::Decoder as _;
use super::{Request, StreamEvent, ToolSpec};
use crate::conversation::{Message, Part, Role, Source, WebSearch};

fn request(web_search: Option<u32>, tools: bool, messages: Vec<Message>) -> Request {
    let tools = if tools {
        vec![ToolSpec {
            name: "view".into(),
            description: "read".into(),
            input_schema: json!({"type": "object"}),
        }]
    } else {
        Vec::new()
    };
    Request {
        model: "m".into(),
        system: "sys".into(),
        messages,
        tools,
        max_tokens: 1000,
        temperature: None,
        reasoning: false,
        effort: None,
        web_search,
    }
}

fn decode<W: WireFormat>(events: &[Value]) -> Vec<StreamEvent> {
    let mut d = Stream::<W>::default();
    let mut out = Vec::new();
    for v in events {
        let kind = v["type"].as_str().unwrap_or_default().to_string();
        out.extend(
            d.message(&kind, &v.to_string())
                .into_iter()
                .map(Result::unwrap),
        );
    }
    out
}

fn searches(out: &[StreamEvent]) -> Vec<WebSearch> {
    out.iter()
        .filter_map(|e| match e {
            StreamEvent::WebSearch(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

fn cited(out: &[StreamEvent]) -> Vec<String> {
    out.iter()
        .filter_map(|e| match e {
            StreamEvent::Citation(s) => Some(s.url.clone()),
            _ => None,
        })
        .collect()
}

fn answered_with(search: WebSearch, extra: Vec<Part>) -> Vec<Message> {
    let mut parts = extra;
    parts.push(Part::WebSearch(search));
    parts.push(Part::Text {
        text: "It shipped.".into(),
    });
    parts.push(Part::Citations {
        sources: vec![Source {
            title: "t".into(),
            url: "https://a.example/".into(),
        }],
    });
    vec![
        Message::user_text("news?"),
        Message {
            role: Role::Assistant,
            parts,
        },
        Message::user_text("more"),
    ]
}

#[test]
fn anthropic_offers_its_search_and_sends_the_blocks_back_in_order() {
    let none = super::anthropic::request_body(&request(None, true, vec![]));
    assert_eq!(none["tools"].as_array().map(Vec::len), Some(1));
    let search = WebSearch {
        id: "srvtoolu_1".into(),
        queries: vec!["q".into()],
        sources: vec![],
        error: None,
        format: "anthropic".into(),
        wire: vec![
            json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}),
            json!({"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a.example/","title":"t","encrypted_content":"ENC"}]}),
        ],
    };
    let body =
        super::anthropic::request_body(&request(Some(3), true, answered_with(search, vec![])));
    assert_eq!(body["tools"][0]["type"], "web_search_20250305");
    assert_eq!(body["tools"][0]["max_uses"], 3);
    assert_eq!(body["tools"][1]["name"], "view");
    let content = &body["messages"][1]["content"];
    assert_eq!(content[0]["type"], "server_tool_use");
    assert_eq!(content[1]["content"][0]["encrypted_content"], "ENC");
    assert_eq!(content[2]["type"], "text");
    assert_eq!(content.as_array().map(Vec::len), Some(3), "{content}");
}

#[test]
fn responses_reads_a_search_call_and_its_citations() {
    use super::openai_responses::ResponseEvents;
    let out = decode::<ResponseEvents>(&[
        json!({"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws_1","status":"in_progress"}}),
        json!({"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","id":"ws_1","status":"completed",
            "action":{"type":"search","query":"rust 2026","sources":[{"type":"url","url":"https://blog.rust-lang.org/"}]}}}),
        json!({"type":"response.output_text.delta","output_index":1,"delta":"Rust shipped."}),
        json!({"type":"response.output_text.annotation.added","output_index":1,"annotation":{"type":"url_citation","url":"https://blog.rust-lang.org/","title":"Rust blog","start_index":0,"end_index":5}}),
        json!({"type":"response.completed","response":{"usage":{"input_tokens":5,"output_tokens":3}}}),
    ]);
    let found = searches(&out);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].queries, vec!["rust 2026".to_string()]);
    assert_eq!(found[0].sources[0].url, "https://blog.rust-lang.org/");
    assert_eq!(cited(&out), vec!["https://blog.rust-lang.org/".to_string()]);
    assert!(
        !out.iter()
            .any(|e| matches!(e, StreamEvent::ToolCallStart { .. }))
    );
    assert_eq!(
        out.last(),
        Some(&StreamEvent::Done(super::StopReason::EndTurn))
    );
}

#[test]
fn responses_offers_its_search_and_sends_the_call_back_after_its_reasoning() {
    let body = super::openai_responses::request_body(&request(None, true, vec![]));
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
    let reasoning = Part::ProviderData {
        format: "openai-responses".into(),
        data: json!({"type":"reasoning","id":"rs_1","encrypted_content":"E","summary":[]}),
    };
    let search = WebSearch {
        id: "ws_1".into(),
        queries: vec!["q".into()],
        sources: vec![],
        error: None,
        format: "openai-responses".into(),
        wire: vec![
            json!({"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}),
        ],
    };
    let body = super::openai_responses::request_body(&request(
        Some(5),
        true,
        answered_with(search, vec![reasoning]),
    ));
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    assert!(
        tools.iter().any(|t| t == &json!({"type": "web_search"})),
        "{tools:?}"
    );
    let include = body["include"].as_array().cloned().unwrap_or_default();
    assert!(include.contains(&json!("web_search_call.action.sources")));
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = input.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "web_search_call",
            "message",
            "message"
        ]
    );
    assert!(input[2].get("id").is_none(), "never stored: {}", input[2]);
    assert_eq!(input[2]["action"]["query"], "q");
}

#[test]
fn gemini_grounding_becomes_one_search_with_its_citations() {
    use super::gemini::Chunks;
    let meta = json!({
        "webSearchQueries": ["rust 2026", "rust release"],
        "groundingChunks": [
            {"web": {"uri": "https://vertexaisearch.example/a", "title": "rust-lang.org"}},
            {"web": {"uri": "https://vertexaisearch.example/b", "title": "lwn.net"}}
        ],
        "groundingSupports": [{"segment": {"text": "Rust shipped."}, "groundingChunkIndices": [1, 0]}]
    });
    let out = decode::<Chunks>(&[
        json!({"candidates":[{"content":{"parts":[{"text":"Rust shipped."}],"role":"model"}}]}),
        json!({"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","groundingMetadata":meta}],
            "usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":3}}),
        json!({"candidates":[{"groundingMetadata":meta}]}),
    ]);
    let found = searches(&out);
    assert_eq!(found.len(), 1, "a repeated grounding is reported once");
    assert_eq!(found[0].queries.len(), 2);
    assert_eq!(found[0].sources[1].title, "lwn.net");
    assert!(found[0].wire.is_empty(), "Gemini needs nothing sent back");
    assert_eq!(
        cited(&out),
        vec![
            "https://vertexaisearch.example/b".to_string(),
            "https://vertexaisearch.example/a".to_string()
        ]
    );
}

#[test]
fn gemini_offers_google_search_only_without_function_declarations() {
    let alone = super::gemini::request_body(&request(Some(5), false, vec![]));
    assert_eq!(alone["tools"], json!([{"google_search": {}}]));
    let with_tools = super::gemini::request_body(&request(Some(5), true, vec![]));
    assert!(
        !with_tools["tools"].to_string().contains("google_search"),
        "{}",
        with_tools["tools"]
    );
    let off = super::gemini::request_body(&request(None, false, vec![]));
    assert!(off.get("tools").is_none());
}

#[test]
fn other_formats_leave_a_stored_search_out() {
    let search = WebSearch {
        id: "x".into(),
        queries: vec!["q".into()],
        sources: vec![],
        error: None,
        format: "anthropic".into(),
        wire: vec![json!({"type":"server_tool_use","id":"x","name":"web_search","input":{}})],
    };
    let messages = answered_with(search, vec![]);
    let responses = super::openai_responses::request_body(&request(None, false, messages.clone()));
    assert!(!responses.to_string().contains("server_tool_use"));
    let gemini = super::gemini::request_body(&request(None, false, messages));
    assert!(!gemini.to_string().contains("server_tool_use"));
}

#[test]
fn a_search_goes_back_as_text_when_the_request_no_longer_offers_it() {
    let search = WebSearch {
        id: "srvtoolu_1".into(),
        queries: vec!["rust 2026".into()],
        sources: vec![Source {
            title: "Rust blog".into(),
            url: "https://blog.rust-lang.org/".into(),
        }],
        error: None,
        format: "anthropic".into(),
        wire: vec![
            json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"rust 2026"}}),
        ],
    };
    let body = super::anthropic::request_body(&request(None, true, answered_with(search, vec![])));
    let said = &body["messages"][1]["content"];
    assert_eq!(said[0]["type"], "text", "{said}");
    let text = said[0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("web search: rust 2026"), "{text}");
    assert!(text.contains("https://blog.rust-lang.org/"), "{text}");
    assert!(!body.to_string().contains("server_tool_use"));
}
