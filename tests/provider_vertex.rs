//! `kind = "vertex"`: Gemini and Anthropic models on Vertex AI, signed in
//! with a service-account key exchanged at a token endpoint on 127.0.0.1.

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

/// A service-account key file whose `token_uri` is the scripted server.
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

#[tokio::test]
async fn the_service_account_key_is_exchanged_at_its_token_uri() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("a"), Reply::text("b")]).await;
    let creds = key_file(dir.path(), &mock);
    let p = build(vertex(&mock, &creds));
    collect(p.as_ref(), &request()).await.unwrap();
    collect(p.as_ref(), &request()).await.unwrap();
    // One token serves both requests while it is fresh.
    let forms = mock.token_requests();
    assert_eq!(forms.len(), 1);
    let url = reqwest::Url::parse(&format!("http://x/?{}", forms[0])).unwrap();
    let pairs: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(
        pairs["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let jwt = &pairs["assertion"];
    let (input, sig) = jwt.rsplit_once('.').unwrap();
    aws_lc_rs::signature::UnparsedPublicKey::new(
        &aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256,
        PUBLIC,
    )
    .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
    .expect("signed with the service account's key");
    let claims: serde_json::Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(input.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["iss"], "cairn@proj-1.iam.gserviceaccount.com");
    assert!(claims["aud"].as_str().unwrap().ends_with("/token"));

    let headers = mock.request_headers();
    assert!(
        headers[0]
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer ya29.test-token-1")
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
async fn a_token_about_to_expire_is_refreshed_before_use() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::Gemini, vec![Reply::text("a"), Reply::text("b")]).await;
    mock.token_lifetime(120);
    let creds = key_file(dir.path(), &mock);
    let p = build(vertex(&mock, &creds));
    let mut req = request();
    req.model = "gemini-2.5-flash".into();
    collect(p.as_ref(), &req).await.unwrap();
    collect(p.as_ref(), &req).await.unwrap();
    assert_eq!(mock.token_requests().len(), 2);
    let tokens: Vec<String> = mock
        .request_headers()
        .iter()
        .filter_map(|h| {
            h.iter()
                .find(|(k, _)| k == "authorization")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(
        tokens,
        ["Bearer ya29.test-token-1", "Bearer ya29.test-token-2"]
    );
    assert_eq!(
        mock.request_paths()[0],
        "/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
}

#[tokio::test]
async fn gcloud_user_credentials_are_refreshed_with_their_refresh_token() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockModel::start(Format::Gemini, vec![Reply::text("hi")]).await;
    let root = mock.url();
    let path = dir.path().join("application_default_credentials.json");
    std::fs::write(
        &path,
        json!({"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
            "client_secret": "csecret", "refresh_token": "1//refresh",
            "token_uri": format!("{}/token", root.trim_end_matches("/v1beta"))})
        .to_string(),
    )
    .unwrap();
    let p = build(vertex(&mock, &path));
    let mut req = request();
    req.model = "gemini-2.5-pro".into();
    let events = collect(p.as_ref(), &req).await.unwrap();
    assert_eq!(text_of(&events), "hi");
    let form = &mock.token_requests()[0];
    assert!(form.contains("grant_type=refresh_token"), "{form}");
    assert!(form.contains("refresh_token=1%2F%2Frefresh"), "{form}");
}
