//! The scripted server's provider-side web search, in each format that has
//! one: Anthropic's `server_tool_use` and `web_search_tool_result` blocks
//! and a `citations_delta`; a Responses `web_search_call` item and a
//! `url_citation` annotation; Gemini's `groundingMetadata`.

use serde_json::{Value, json};

/// One search the provider runs before it answers, and the pages it finds
/// (title, url); the answer's first text cites the first page.
#[derive(Debug, Clone)]
pub struct Search {
    pub query: String,
    pub pages: Vec<(String, String)>,
}

/// The encrypted page text Anthropic hands back, which must come back.
pub fn encrypted(n: usize) -> String {
    format!("ENC-PAGE-{n}")
}

fn sse(name: &str, v: Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

/// Blocks 0 and 1: the search call, its input in fragments, and its
/// results (whole, as the API sends them).
pub fn anthropic_blocks(s: &Search) -> Vec<String> {
    let id = "srvtoolu_mock1";
    let mut out = vec![sse(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "server_tool_use", "id": id, "name": "web_search", "input": {}}}),
    )];
    let input = json!({"query": s.query}).to_string();
    let half = input.len() / 2;
    for piece in [&input[..half], &input[half..]] {
        out.push(sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    out.push(sse(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    let results: Vec<Value> = s
        .pages
        .iter()
        .enumerate()
        .map(|(i, (title, url))| {
            json!({"type": "web_search_result", "title": title, "url": url,
                "encrypted_content": encrypted(i), "page_age": "2 days ago"})
        })
        .collect();
    out.push(sse(
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "web_search_tool_result", "tool_use_id": id, "content": results}}),
    ));
    out.push(sse(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    ));
    out
}

/// A citation of the first page inside text block `index`.
pub fn anthropic_citation(s: &Search, index: usize) -> Option<String> {
    let (title, url) = s.pages.first()?;
    Some(sse(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "citations_delta",
            "citation": {"type": "web_search_result_location", "url": url, "title": title,
                "cited_text": "cited words", "encrypted_index": "EIDX"}}}),
    ))
}

fn responses_call(s: &Search, status: &str) -> Value {
    let sources: Vec<Value> = s
        .pages
        .iter()
        .map(|(_, url)| json!({"type": "url", "url": url}))
        .collect();
    let mut item = json!({"type": "web_search_call", "id": "ws_mock1", "status": status});
    if status == "completed" {
        item["action"] = json!({"type": "search", "query": s.query, "sources": sources});
    }
    item
}

/// The `web_search_call` item at `output_index`, as it is added and done.
pub fn responses_item(s: &Search, output_index: usize) -> Vec<Value> {
    vec![
        json!({"type": "response.output_item.added", "output_index": output_index,
            "item": responses_call(s, "in_progress")}),
        json!({"type": "response.web_search_call.searching", "output_index": output_index,
            "item_id": "ws_mock1"}),
        json!({"type": "response.output_item.done", "output_index": output_index,
            "item": responses_call(s, "completed")}),
    ]
}

/// The first page cited by the text of item `output_index`.
pub fn responses_annotation(s: &Search, output_index: usize) -> Option<Value> {
    let (title, url) = s.pages.first()?;
    Some(
        json!({"type": "response.output_text.annotation.added", "output_index": output_index,
        "content_index": 0, "annotation_index": 0, "annotation":
            {"type": "url_citation", "url": url, "title": title, "start_index": 0, "end_index": 4}}),
    )
}

/// Gemini's grounding: the queries, the pages as chunks, the first cited.
pub fn gemini_grounding(s: &Search) -> Value {
    let chunks: Vec<Value> = s
        .pages
        .iter()
        .map(|(title, url)| json!({"web": {"uri": url, "title": title}}))
        .collect();
    json!({"webSearchQueries": [s.query], "groundingChunks": chunks,
        "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 4, "text": "cited"},
            "groundingChunkIndices": [0]}]})
}
