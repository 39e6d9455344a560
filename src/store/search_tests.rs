//! Full-text search behaviour: what is indexed, awkward input, ranking.

use std::path::Path;

use super::tests::{meta, new_session, tool_exchange};
use super::*;
use crate::conversation::Message;

#[test]
fn word_only_in_tool_output_is_found_with_markers() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    store
        .append_message(&id, &Message::user_text("please build it"), &meta(1))
        .unwrap();
    let (call, result) = tool_exchange("error[E0425]: cannot find value `frobnicator` in scope");
    store.append_message(&id, &call, &meta(1)).unwrap();
    let rid = store.append_message(&id, &result, &meta(1)).unwrap();
    let hits = store
        .search("frobnicator", &SearchFilter::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message_id, rid);
    assert_eq!(hits[0].session_id, id);
    assert_eq!(hits[0].title.as_deref(), Some("please build it"));
    assert!(
        hits[0].snippet.contains("\u{1}frobnicator\u{2}"),
        "{:?}",
        hits[0].snippet
    );
    // Prefix matching on the last word.
    assert_eq!(
        store
            .search("frobni", &SearchFilter::default())
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .search("frobni ", &SearchFilter::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn awkward_queries_never_fail() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    let (call, result) = tool_exchange("cargo build failed: error: linker `cc` not found");
    store.append_message(&id, &call, &meta(1)).unwrap();
    store.append_message(&id, &result, &meta(1)).unwrap();
    for q in [
        "cargo build failed",
        "\"cargo",
        "build\"",
        "cargo-build",
        "error: linker",
        "NOT cargo",
        "cargo AND OR",
        "(cc)",
        "*",
        "^cargo",
        "col:umn",
        "",
        "   ",
        "\"\"\"",
        "NEAR(a b)",
        "ünïcödé",
    ] {
        store
            .search(q, &SearchFilter::default())
            .unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
    assert_eq!(
        store
            .search("cargo build failed", &SearchFilter::default())
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .search("error: linker", &SearchFilter::default())
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .search("(cc)", &SearchFilter::default())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn common_word_search_ranks_only_the_newest_window() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    // The best possible match is the oldest message; thousands of weaker
    // matches come after it.
    store
        .append_message(&id, &Message::user_text("walrus"), &meta(0))
        .unwrap();
    let filler = Message::user_text("walrus and a long sentence of many other words here");
    let tx = store.conn.transaction().unwrap();
    for seq in 2..(search::RANK_WINDOW as i64 + 12) {
        tx.execute(
            "INSERT INTO messages (session_id, seq, role, parts, created_at, body)
             VALUES (?1, ?2, 'user', ?3, 0, ?4)",
            rusqlite::params![
                id.0,
                seq,
                serde_json::to_string(&filler.parts).unwrap(),
                filler.text()
            ],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    let newest = store
        .append_message(&id, &Message::user_text("walrus walrus"), &meta(0))
        .unwrap();
    let hits = store
        .search(
            "walrus",
            &SearchFilter {
                project_root: None,
                limit: 3,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(
        hits[0].message_id, newest,
        "best match within the window first"
    );
    let in_project = store
        .search(
            "walrus",
            &SearchFilter {
                project_root: Some(Path::new("/p")),
                limit: 3,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(in_project[0].message_id, newest);
    // A rare word is still found however old.
    store
        .append_message(&id, &Message::user_text("x"), &meta(0))
        .unwrap();
    assert_eq!(
        store
            .search("long sentence", &SearchFilter::default())
            .unwrap()
            .len(),
        50
    );
}

#[test]
fn updated_message_is_found_by_its_new_words_only() {
    let mut store = Store::open_in_memory().unwrap();
    let id = new_session(&mut store, "/p");
    let m = store
        .append_message(&id, &Message::assistant_text("partial answer"), &meta(1))
        .unwrap();
    store
        .update_message(m, &Message::assistant_text("complete walrus answer"))
        .unwrap();
    assert_eq!(
        store
            .search("walrus", &SearchFilter::default())
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .search("partial", &SearchFilter::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn one_hit_per_session_keeps_a_busy_session_from_crowding_out_the_rest() {
    let mut store = Store::open_in_memory().unwrap();
    let busy = new_session(&mut store, "/p");
    for i in 0..30 {
        store
            .append_message(
                &busy,
                &Message::user_text(format!("tarpaulin again {i}")),
                &meta(i + 1),
            )
            .unwrap();
    }
    let quiet = new_session(&mut store, "/p");
    let best = store
        .append_message(
            &quiet,
            &Message::user_text("tarpaulin tarpaulin tarpaulin"),
            &meta(1),
        )
        .unwrap();
    let filter = SearchFilter {
        limit: 5,
        ..Default::default()
    };
    let all = store.search("tarpaulin", &filter).unwrap();
    assert_eq!(all.len(), 5);
    let grouped = store
        .search(
            "tarpaulin",
            &SearchFilter {
                one_per_session: true,
                ..filter
            },
        )
        .unwrap();
    let mut sessions: Vec<_> = grouped.iter().map(|h| h.session_id.clone()).collect();
    sessions.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected = vec![busy.clone(), quiet.clone()];
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(sessions, expected);
    // The session's best message is the one shown.
    let q = grouped.iter().find(|h| h.session_id == quiet).unwrap();
    assert_eq!(q.message_id, best);
}
