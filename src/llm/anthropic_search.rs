//! Anthropic's server-side web search as a response carries it: the
//! `server_tool_use` / `web_search_tool_result` pair (the request's tool
//! entry is `anthropic_request::search_tool`). The provider runs the search mid-answer; cairn shows it and
//! sends both blocks back unchanged (the results hold encrypted content the
//! model needs to read them again on the next request).

use serde_json::{Value, json};

use super::StreamEvent;
use super::anthropic_request::FORMAT;
use super::transport::Events;
use crate::conversation::{Source, WebSearch};

/// A `server_tool_use` block as it streams: its input arrives in
/// fragments like a tool call's.
#[derive(Debug)]
pub(crate) struct ServerCall {
    pub index: usize,
    block: Value,
    pub args: String,
}

impl ServerCall {
    pub fn new(index: usize, block: &Value) -> ServerCall {
        ServerCall {
            index,
            block: block.clone(),
            args: String::new(),
        }
    }

    /// The block with its whole input, as it goes back to the provider.
    fn whole_block(&self) -> Value {
        let mut block = self.block.clone();
        if !self.args.trim().is_empty() {
            // A fragment stream that does not read as JSON is kept as the
            // provider's own start block said; the search still shows.
            if let Ok(input) = serde_json::from_str::<Value>(&self.args) {
                block["input"] = input;
            }
        }
        if !block["input"].is_object() {
            block["input"] = json!({});
        }
        block
    }

    fn search(&self, result: Option<&Value>) -> WebSearch {
        let block = self.whole_block();
        let query = block["input"]["query"].as_str().unwrap_or_default();
        let mut search = WebSearch {
            id: block["id"].as_str().unwrap_or_default().to_string(),
            queries: vec![query.to_string()],
            sources: Vec::new(),
            error: None,
            format: FORMAT.to_string(),
            wire: vec![block],
        };
        if let Some(result) = result {
            read_result(&mut search, &result["content"]);
            search.wire.push(result.clone());
        }
        search
    }
}

fn read_result(search: &mut WebSearch, content: &Value) {
    match content {
        Value::Array(results) => {
            for r in results {
                let source = Source {
                    title: r["title"].as_str().unwrap_or_default().to_string(),
                    url: r["url"].as_str().unwrap_or_default().to_string(),
                };
                Source::add_unique(&mut search.sources, source);
            }
        }
        other => {
            let code = other["error_code"].as_str().unwrap_or("unknown_error");
            search.error = Some(code.to_string());
        }
    }
}

/// The result block `result` answers one of the waiting server calls: the
/// search, whole. A result without its call is kept as it came.
pub(crate) fn finish(server: &mut Vec<ServerCall>, result: &Value) -> Option<WebSearch> {
    let id = result["tool_use_id"].as_str().unwrap_or_default();
    match server.iter().position(|c| c.block["id"] == id) {
        Some(at) => Some(server.remove(at).search(Some(result))),
        None => {
            tracing::warn!(id, "a server tool result without its call");
            None
        }
    }
}

/// Server calls the response ended without results for (it paused, or
/// was cut): shown, and sent back so the provider can go on.
pub(crate) fn unanswered(server: &mut Vec<ServerCall>, out: &mut Events) {
    for call in server.drain(..) {
        out.push(Ok(StreamEvent::WebSearch(call.search(None))));
    }
}

/// The web sources a text block's `citations` name.
pub(crate) fn citations(list: &Value, out: &mut Events) {
    for c in list.as_array().into_iter().flatten() {
        if let Some(url) = c["url"].as_str().filter(|u| !u.is_empty()) {
            out.push(Ok(StreamEvent::Citation(Source {
                title: c["title"].as_str().unwrap_or_default().to_string(),
                url: url.to_string(),
            })));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;
    use crate::llm::anthropic::Messages;
    use crate::llm::stream::Stream;
    use crate::llm::transport::Decoder as _;

    fn feed(d: &mut Stream<Messages>, v: Value) -> Vec<StreamEvent> {
        let kind = v["type"].as_str().unwrap_or_default().to_string();
        d.message(&kind, &v.to_string())
            .into_iter()
            .map(Result::unwrap)
            .collect()
    }

    /// A search the provider ran is shown and kept, never turned into a
    /// call for cairn to run: no ToolCallStart, no ToolCallDelta, and the
    /// response ends as a plain answer.
    #[test]
    fn server_tool_use_is_never_a_local_call() {
        let mut d = Stream::<Messages>::default();
        let mut out = Vec::new();
        for v in [
            json!({"type":"message_start","message":{"usage":{"input_tokens":9}}}),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"rust "}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"2026\"}"}}),
            json!({"type":"content_block_stop","index":0}),
            json!({"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[
                {"type":"web_search_result","title":"Rust blog","url":"https://blog.rust-lang.org/","encrypted_content":"ENC1","page_age":"1 day"}]}}),
            json!({"type":"content_block_stop","index":1}),
            json!({"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}),
            json!({"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://blog.rust-lang.org/","title":"Rust blog","cited_text":"x","encrypted_index":"EI"}}}),
            json!({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Rust shipped."}}),
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}),
            json!({"type":"message_stop"}),
        ] {
            out.extend(feed(&mut d, v));
        }
        assert!(
            !out.iter().any(|e| matches!(
                e,
                StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. }
            )),
            "{out:?}"
        );
        let search = out
            .iter()
            .find_map(|e| match e {
                StreamEvent::WebSearch(s) => Some(s.clone()),
                _ => None,
            })
            .expect("a search");
        assert_eq!(search.queries, vec!["rust 2026".to_string()]);
        assert_eq!(search.sources[0].url, "https://blog.rust-lang.org/");
        assert_eq!(search.wire[0]["input"]["query"], "rust 2026");
        assert_eq!(search.wire[1]["content"][0]["encrypted_content"], "ENC1");
        assert!(out.contains(&StreamEvent::Citation(Source {
            title: "Rust blog".into(),
            url: "https://blog.rust-lang.org/".into()
        })));
        assert_eq!(
            out.last(),
            Some(&StreamEvent::Done(crate::llm::StopReason::EndTurn))
        );
        let _ = Usage::default();
    }

    #[test]
    fn an_error_result_and_an_unanswered_call_still_show() {
        let mut d = Stream::<Messages>::default();
        let mut out = Vec::new();
        for v in [
            json!({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"a","name":"web_search","input":{"query":"q1"}}}),
            json!({"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"a","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}}),
            json!({"type":"content_block_start","index":2,"content_block":{"type":"server_tool_use","id":"b","name":"web_search","input":{"query":"q2"}}}),
            json!({"type":"message_delta","delta":{"stop_reason":"pause_turn"}}),
            json!({"type":"message_stop"}),
        ] {
            out.extend(feed(&mut d, v));
        }
        let searches: Vec<WebSearch> = out
            .iter()
            .filter_map(|e| match e {
                StreamEvent::WebSearch(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(searches.len(), 2);
        assert_eq!(searches[0].error.as_deref(), Some("max_uses_exceeded"));
        assert_eq!(searches[1].queries, vec!["q2".to_string()]);
        assert_eq!(searches[1].wire.len(), 1, "no result to send back");
    }
}
