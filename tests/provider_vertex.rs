//! `kind = "vertex"`: Gemini and Anthropic models on Vertex AI, signed in
//! through `google-cloud-auth`: a service-account key (a self-signed JWT)
//! and gcloud user credentials refreshed at a token endpoint on 127.0.0.1.

use crate::{mock_model, provider_harness};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use cairn::llm::{CloudSettings, ProviderKind, ProviderSettings};
use mock_model::{Format, MockModel, Reply};
use provider_harness::*;
use serde_json::json;

const KEY: &str = include_str!("fixtures/test-service-account-key.pem");
const PUBLIC: &[u8] = include_bytes!("fixtures/test-service-account-key.pub.der");

/// A service-account key file (its `token_uri` is the scripted server, though
/// a self-signed token needs none).
fn key_file(dir: &Path, mock: &MockModel) -> std::path::PathBuf {
    let root = mock.url();
    let root = root.trim_end_matches("/v1beta");
    let path = dir.join("sa.json");
    std::fs::write(
        &path,
        json!({"type": "service_account", "project_id": "proj-1", "private_key_id": "kid-1",
            "private_key": KEY, "client_email": "cairn@proj-1.iam.gserviceaccount.com",
            "token_uri": format!("{root}/token")})
        .to_string(),
    )
    .unwrap();
    path
}

fn vertex(mock: &MockModel, creds: &Path) -> ProviderSettings {
    let root = mock.url();
    let mut s = settings(ProviderKind::Vertex, root.trim_end_matches("/v1beta"));
    s.api_key = None;
    s.cloud = CloudSettings {
        project: Some("proj-1".into()),
        location: Some("us-east5".into()),
        google_credentials: Some(creds.to_path_buf()),
        ..CloudSettings::default()
    };
    s
}

#[tokio::test]
async fn vertex_gemini_passes_the_provider_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    conformance_with_model(Format::Gemini, "gemini-2.5-pro", move |m| {
        let creds = key_file(&d, m);
        vertex(m, &creds)
    })
    .await;
}

#[tokio::test]
async fn vertex_anthropic_passes_the_provider_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    conformance_with_model(Format::Anthropic, "claude-sonnet-4-5", move |m| {
        let creds = key_file(&d, m);
        vertex(m, &creds)
    })
    .await;
}

/// The bearer token of each request the model server was sent.
fn bearers(mock: &MockModel) -> Vec<String> {
    mock.request_headers()
        .iter()
        .filter_map(|h| {
            h.iter()
                .find(|(k, _)| k == "authorization")
                .and_then(|(_, v)| v.strip_prefix("Bearer "))
                .map(str::to_string)
        })
        .collect()
}

#[tokio::test]
async fn the_service_account_signs_its_own_token_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("a"), Reply::text("b")]).await;
    let creds = key_file(dir.path(), &mock);
    let p = build(vertex(&mock, &creds));
    collect(p.as_ref(), &request()).await.unwrap();
    collect(p.as_ref(), &request()).await.unwrap();
    // A self-signed JWT (Google's way for service accounts): no exchange,
    // and one token serves both requests while it is fresh.
    assert!(mock.token_requests().is_empty());
    let tokens = bearers(&mock);
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0], tokens[1]);
    let (input, sig) = tokens[0].rsplit_once('.').unwrap();
    aws_lc_rs::signature::UnparsedPublicKey::new(
        &aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256,
        PUBLIC,
    )
    .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
    .expect("signed with the service account's key");
    let part = |n: usize| -> serde_json::Value {
        serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(input.split('.').nth(n).unwrap())
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(part(0)["kid"], "kid-1");
    let claims = part(1);
    assert_eq!(claims["iss"], "cairn@proj-1.iam.gserviceaccount.com");
    assert!(
        claims["scope"]
            .as_str()
            .unwrap()
            .contains("https://www.googleapis.com/auth/cloud-platform"),
        "{claims}"
    );
    assert_eq!(
        mock.request_paths()[0],
        "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict"
    );
    let body = &mock.requests()[0];
    assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
    assert!(body.get("model").is_none());
}

#[tokio::test]
async fn an_expired_user_token_is_refreshed_before_use() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::Gemini, vec![Reply::text("a"), Reply::text("b")]).await;
    // Tokens that expire at once: each request needs a fresh one.
    mock.token_lifetime(1);
    let path = user_file(dir.path(), &mock);
    let p = build(vertex(&mock, &path));
    let mut req = request();
    req.model = "gemini-2.5-flash".into();
    collect(p.as_ref(), &req).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;
    collect(p.as_ref(), &req).await.unwrap();
    assert!(mock.token_requests().len() >= 2);
    let tokens = bearers(&mock);
    assert_eq!(tokens.len(), 2);
    assert_ne!(tokens[0], tokens[1], "the second request got a new token");
    assert!(tokens.iter().all(|t| t.starts_with("ya29.test-token-")));
    assert_eq!(
        mock.request_paths()[0],
        "/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
}

/// gcloud's user credentials file, its `token_uri` the scripted server.
fn user_file(dir: &Path, mock: &MockModel) -> std::path::PathBuf {
    let root = mock.url();
    let path = dir.join("application_default_credentials.json");
    std::fs::write(
        &path,
        json!({"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
            "client_secret": "csecret", "refresh_token": "1//refresh",
            "token_uri": format!("{}/token", root.trim_end_matches("/v1beta"))})
        .to_string(),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn gcloud_user_credentials_are_refreshed_with_their_refresh_token() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::Gemini, vec![Reply::text("hi")]).await;
    let path = user_file(dir.path(), &mock);
    let p = build(vertex(&mock, &path));
    let mut req = request();
    req.model = "gemini-2.5-pro".into();
    let events = collect(p.as_ref(), &req).await.unwrap();
    assert_eq!(text_of(&events), "hi");
    let sent: serde_json::Value = serde_json::from_str(&mock.token_requests()[0]).unwrap();
    assert_eq!(sent["grant_type"], "refresh_token");
    assert_eq!(sent["refresh_token"], "1//refresh");
    assert_eq!(sent["client_id"], "cid.apps.googleusercontent.com");
    assert_eq!(bearers(&mock), ["ya29.test-token-1"]);
}

/// A prompt with a picture, asked to think hard, through Vertex: each
/// model family's body carries both in its own fields, as the direct
/// providers' do (`tests/media_run.rs`).
#[tokio::test]
async fn a_picture_and_the_effort_reach_vertex_in_each_familys_fields() {
    use cairn::config::effort::Effort;
    use cairn::conversation::{ImageData, Message, Part, Role};
    let dir = tempfile::tempdir().unwrap();
    let picture = ImageData {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    };
    let prompt = Message {
        role: Role::User,
        parts: vec![
            Part::Text {
                text: "what is wrong here?".into(),
            },
            Part::Image {
                image: picture.clone(),
            },
        ],
    };
    for (format, model) in [
        (Format::Gemini, "gemini-2.5-pro"),
        (Format::Anthropic, "claude-sonnet-4-5"),
    ] {
        let mock = MockModel::start(format, vec![Reply::text("It overlaps.")]).await;
        let creds = key_file(dir.path(), &mock);
        let provider = build(vertex(&mock, &creds));
        let mut r = request_with(vec![prompt.clone()]);
        r.model = model.into();
        r.reasoning = true;
        r.max_tokens = 64_000;
        r.effort = Some(Effort::High);
        let events = collect(provider.as_ref(), &r).await.unwrap();
        assert_eq!(text_of(&events), "It overlaps.");
        let body = &mock.requests()[0];
        match format {
            Format::Gemini => {
                let parts = &body["contents"][0]["parts"];
                assert_eq!(parts[1]["inlineData"]["mimeType"], "image/png", "{body}");
                assert_eq!(parts[1]["inlineData"]["data"], picture.data);
                assert_eq!(
                    body["generationConfig"]["thinkingConfig"]["thinkingBudget"], 24_000,
                    "{body}"
                );
            }
            _ => {
                let content = &body["messages"][0]["content"];
                assert_eq!(content[1]["type"], "image", "{body}");
                assert_eq!(content[1]["source"]["data"], picture.data);
                assert_eq!(body["thinking"]["budget_tokens"], 24_000, "{body}");
            }
        }
    }
}
