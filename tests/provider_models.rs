//! The models a provider serves, from its models endpoint, cached.

use crate::{mock_model, provider_harness, pty, test_home};
use cairn::llm::ProviderKind;
use cairn::llm::model_list::{cached_or_fetch, fetch, served};
use mock_model::{Format, MockModel};
use provider_harness::*;

#[tokio::test]
async fn each_kind_reads_its_own_models_endpoint() {
    for (format, path, want) in [
        (Format::OpenAi, "/v1/models", "mock-large"),
        (Format::Anthropic, "/v1/models?limit=1000", "mock-large"),
        (
            Format::Gemini,
            "/v1beta/models?pageSize=1000",
            "gemini-mock",
        ),
    ] {
        let mock = MockModel::start(format, vec![]).await;
        let list = fetch(&settings(kind_for(format), &mock.url()))
            .await
            .unwrap();
        assert!(list.contains(&want.to_string()), "{format:?}: {list:?}");
        assert_eq!(mock.request_paths(), [path], "{format:?}");
    }
    let mock = MockModel::start(Format::Ollama, vec![]).await;
    let list = fetch(&settings(ProviderKind::Ollama, &mock.url()))
        .await
        .unwrap();
    assert_eq!(list, ["qwen3:8b"]);
}

#[tokio::test]
async fn the_list_is_cached_and_a_single_model_server_offers_only_its_model() {
    let cache = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::OpenAi, vec![]).await;
    let s = settings(ProviderKind::Openai, &mock.url());
    let first = cached_or_fetch(&s, Some(cache.path())).await;
    assert_eq!(first, ["mock-large", "mock-small"]);
    drop(mock);
    // The server is gone: the cached list answers.
    let again = cached_or_fetch(&s, Some(cache.path())).await;
    assert_eq!(again, first);
    assert_eq!(served(ProviderKind::Openai, &again), first);
}

/// Through the front door: `/model` in the interface lists what the
/// provider's models endpoint serves, and nothing it does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_picker_lists_the_providers_own_models() {
    let home = test_home::TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = pty::PtyApp::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        36,
        120,
    );
    app.wait_for_text("Ask cairn");
    // The list is fetched in the background at start-up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !mock
        .request_paths()
        .iter()
        .any(|p| p.starts_with("/v1/models"))
    {
        assert!(std::time::Instant::now() < deadline, "no models request");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    app.type_text("/model");
    app.send(b"\r");
    let screen = app.wait_for("the model picker", |s| s.contains("mock-small"));
    assert!(screen.contains("mock-large"), "{screen}");
    assert!(!screen.contains("claude-opus"), "{screen}");
    app.send(b"\x1b");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(std::time::Duration::from_secs(10)).is_some());
}
