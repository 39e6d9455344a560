//! Session store speed on a heavy user's history (see
//! `support/store_fixture.rs`): opening the session browser, full-text
//! search, loading a long session, and appending a message.
//!
//! Targets: the browser's list (200 rows of a project) ≤ 50 ms, search median ≤ 50 ms, append median
//! ≤ 1 ms, loading 5,000 messages well under 150 ms.

#[path = "support/store_fixture.rs"]
mod store_fixture;

use std::time::Duration;

use cairn::conversation::Message;
use cairn::store::{ListFilter, MessageMeta, NewSession, SearchFilter, SessionId, Store};
use criterion::{Criterion, criterion_group, criterion_main};

fn store_benches(c: &mut Criterion) {
    let path = store_fixture::ensure_fixture();
    let mut store = Store::open(&path).expect("open fixture");

    let mut open = c.benchmark_group("store_open");
    open.sample_size(20);
    open.bench_function("open_existing_1m", |b| {
        b.iter(|| Store::open(&path).expect("reopen fixture"))
    });
    open.finish();

    let first = store
        .list_sessions(&ListFilter {
            limit: 1,
            ..Default::default()
        })
        .expect("list");
    let project = first[0]
        .project_root
        .clone()
        .expect("fixture sessions have a project");
    c.bench_function("list_sessions_first_page", |b| {
        b.iter(|| {
            store
                .list_sessions(&ListFilter {
                    project_root: None,
                    limit: 50,
                    offset: 0,
                })
                .expect("list")
        })
    });
    c.bench_function("browser_list_200_of_project", |b| {
        b.iter(|| {
            store
                .list_sessions(&ListFilter {
                    project_root: Some(&project),
                    limit: 200,
                    offset: 0,
                })
                .expect("list")
        })
    });

    let mut search = c.benchmark_group("search");
    search
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    for query in [
        "cargo build failed",
        "borrow checker lifetime",
        "connection refus",
        "panicked at src",
        "kaloru",
        "error",
    ] {
        let hits = store
            .search(query, &SearchFilter::default())
            .expect("search");
        eprintln!("search {query:?}: {} hits on the first page", hits.len());
        search.bench_function(query, |b| {
            b.iter(|| {
                store
                    .search(query, &SearchFilter::default())
                    .expect("search")
            })
        });
        // What the session browser asks as the person types: this
        // project's sessions, the best message of each.
        let browser = SearchFilter {
            project_root: Some(&project),
            limit: 200,
            one_per_session: true,
        };
        search.bench_function(format!("browser: {query}"), |b| {
            b.iter(|| store.search(query, &browser).expect("search"))
        });
    }
    search.finish();

    let big: SessionId = store
        .list_sessions(&ListFilter::default())
        .expect("list all")
        .into_iter()
        .max_by_key(|s| s.message_count)
        .map(|s| s.id)
        .expect("a session");
    let mut load = c.benchmark_group("load");
    load.sample_size(20);
    load.bench_function("load_messages_5000", |b| {
        b.iter(|| {
            let m = store.load_messages(&big).expect("load");
            assert_eq!(m.len(), store_fixture::BIG_SESSION);
            m
        })
    });
    load.finish();

    let bench_session = store
        .create_session(&NewSession {
            cwd: "/bench".into(),
            project_root: Some("/bench".into()),
            provider: "bench".into(),
            model: "bench".into(),
            parent_id: None,
        })
        .expect("bench session");
    let message = Message::assistant_text(
        "Ran cargo build: the linker could not find libssl; installing the dev package fixed it.",
    );
    c.bench_function("append_message", |b| {
        b.iter(|| {
            store
                .append_message(&bench_session, &message, &MessageMeta::default())
                .expect("append")
        })
    });
    // Leave the cached fixture as it was generated.
    store
        .delete_session(&bench_session)
        .expect("remove bench session");
}

criterion_group!(benches, store_benches);
criterion_main!(benches);
