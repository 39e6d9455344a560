//! The models a provider serves, from its models endpoint, cached.

#[path = "support/mock_model.rs"]
mod mock_model;
#[path = "support/provider_harness.rs"]
mod provider_harness;

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
