//! Cloud credentials end to end through the real binary (`cairn run`).
//! Bedrock, through the AWS SDK's chain: Converse requests signed with keys
//! from a `credential_process` profile, and from an assume-role profile
//! whose source profile has static keys, the role's keys coming from a
//! scripted STS endpoint on 127.0.0.1 (every AWS file and variable is the
//! test's own, and instance metadata is never probed). Vertex, through
//! `google-cloud-auth`: a metadata server (`GCE_METADATA_HOST`) and
//! workload identity federation (`external_account`), both scripted.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::cli_providers::run_configured;
use crate::mock_model::{Format, METADATA_TOKEN, MockModel};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A header of the `n`th request the model server was sent.
fn header(mock: &MockModel, n: usize, name: &str) -> Option<String> {
    mock.request_headers()[n]
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// The environment that points the SDK at `dir`'s files only.
fn aws_env(dir: &Path, profile: &str) -> Vec<(String, String)> {
    vec![
        (
            "AWS_CONFIG_FILE".into(),
            dir.join("config").display().to_string(),
        ),
        (
            "AWS_SHARED_CREDENTIALS_FILE".into(),
            dir.join("credentials").display().to_string(),
        ),
        ("AWS_PROFILE".into(), profile.into()),
        ("AWS_EC2_METADATA_DISABLED".into(), "true".into()),
    ]
}

#[tokio::test]
async fn bedrock_signs_with_keys_a_credential_process_prints() {
    let aws = tempfile::tempdir().unwrap();
    let script = aws.path().join("issue-keys.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"AKIAPROCESS\", \"SecretAccessKey\": \"ps\", \"SessionToken\": \"process-token\", \"Expiration\": \"2099-01-01T00:00:00Z\"}'\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    std::fs::write(
        aws.path().join("config"),
        format!(
            "[profile tool]\ncredential_process = {}\n",
            script.display()
        ),
    )
    .unwrap();
    let dir = aws.path().to_path_buf();
    let mock = run_configured("bedrock", Format::Bedrock, move |mock| {
        let env = aws_env(&dir, "tool");
        (mock.url(), "region = \"eu-central-1\"\n".into(), env)
    })
    .await;
    for n in 0..mock.request_headers().len() {
        let auth = header(&mock, n, "authorization").expect("signed");
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIAPROCESS/")
                && auth.contains("/eu-central-1/bedrock/aws4_request"),
            "{auth}"
        );
        assert_eq!(
            header(&mock, n, "x-amz-security-token").as_deref(),
            Some("process-token")
        );
    }
}

/// What the scripted STS endpoint was sent: each request's head and body.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// An STS endpoint on 127.0.0.1 answering every AssumeRole with the
/// role's keys.
async fn sts_stub() -> (String, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let (head, body) = read_request(&mut sock).await;
                log.lock().unwrap().push((head, body));
                let xml = "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleResult><Credentials><AccessKeyId>ASIAROLEKEY</AccessKeyId><SecretAccessKey>role-secret</SecretAccessKey><SessionToken>role-token</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROATEST:cairn</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/bedrock-user/cairn</Arn></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></AssumeRoleResponse>";
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{xml}",
                    xml.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

/// One HTTP/1.1 request: its head (lower-cased) and its body.
async fn read_request(sock: &mut tokio::net::TcpStream) -> (String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let head = text[..end].to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return (head, text[end + 4..].to_string());
            }
        }
    }
    (
        String::from_utf8_lossy(&buf).to_ascii_lowercase(),
        String::new(),
    )
}

#[tokio::test]
async fn bedrock_signs_with_the_role_an_sts_endpoint_hands_out() {
    let (sts, seen) = sts_stub().await;
    let aws = tempfile::tempdir().unwrap();
    std::fs::write(
        aws.path().join("credentials"),
        "[base]\naws_access_key_id = AKIASOURCE\naws_secret_access_key = source-secret\n",
    )
    .unwrap();
    std::fs::write(
        aws.path().join("config"),
        "[profile bedrock-user]\nrole_arn = arn:aws:iam::123456789012:role/bedrock-user\nsource_profile = base\nrole_session_name = cairn\n",
    )
    .unwrap();
    let dir = aws.path().to_path_buf();
    let mock = run_configured("bedrock", Format::Bedrock, move |mock| {
        let mut env = aws_env(&dir, "bedrock-user");
        env.push(("AWS_ENDPOINT_URL_STS".into(), sts.clone()));
        (mock.url(), "region = \"us-west-2\"\n".into(), env)
    })
    .await;
    let requests = mock.request_headers().len();
    assert!(requests >= 2);
    for n in 0..requests {
        let auth = header(&mock, n, "authorization").expect("signed");
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=ASIAROLEKEY/")
                && auth.contains("/us-west-2/bedrock/aws4_request"),
            "{auth}"
        );
        assert_eq!(
            header(&mock, n, "x-amz-security-token").as_deref(),
            Some("role-token")
        );
    }
    let seen = seen.lock().unwrap();
    // The role's keys last: one AssumeRole serves every request of the run.
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (head, body) = &seen[0];
    assert!(body.contains("Action=AssumeRole"), "{body}");
    assert!(body.contains("bedrock-user"), "{body}");
    assert!(
        head.contains("credential=akiasource/"),
        "STS is asked with the source profile's keys: {head}"
    );
}

/// The bearer tokens the model server was sent.
fn bearers(mock: &MockModel) -> Vec<String> {
    (0..mock.request_headers().len())
        .filter_map(|n| header(mock, n, "authorization"))
        .collect()
}

const VERTEX: &str = "project = \"proj-1\"\nlocation = \"europe-west4\"\n";

#[tokio::test]
async fn vertex_without_a_credentials_file_asks_the_metadata_server() {
    let mock = run_configured("vertex", Format::Gemini, |mock| {
        let root = mock.url().trim_end_matches("/v1beta").to_string();
        let host = root.trim_start_matches("http://").to_string();
        let env = vec![("GCE_METADATA_HOST".to_string(), host)];
        (root, VERTEX.into(), env)
    })
    .await;
    let asked = mock.token_requests();
    assert_eq!(asked.len(), 1, "one token serves the run: {asked:?}");
    assert!(asked[0].starts_with(METADATA_TOKEN), "{asked:?}");
    assert!(asked[0].contains("cloud-platform"), "{asked:?}");
    let bearers = bearers(&mock);
    assert!(bearers.len() >= 2);
    assert!(
        bearers.iter().all(|b| b == "Bearer ya29.test-token-1"),
        "{bearers:?}"
    );
}

#[tokio::test]
async fn vertex_exchanges_a_federated_token_at_the_sts_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let subject = dir.path().join("oidc-token");
    std::fs::write(&subject, "eyJhbGciOiJSUzI1NiJ9.from-the-ci.sig").unwrap();
    let config = dir.path().join("wif.json");
    let (subject2, config2) = (subject.clone(), config.clone());
    let mock = run_configured("vertex", Format::Gemini, move |mock| {
        let root = mock.url().trim_end_matches("/v1beta").to_string();
        std::fs::write(
            &config2,
            serde_json::json!({"type": "external_account",
                "audience": "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ci/providers/gh",
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                "token_url": format!("{root}/token"),
                "credential_source": {"file": subject2.display().to_string()}})
            .to_string(),
        )
        .unwrap();
        let env = vec![(
            "GOOGLE_APPLICATION_CREDENTIALS".to_string(),
            config2.display().to_string(),
        )];
        (root, VERTEX.into(), env)
    })
    .await;
    let asked = mock.token_requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let form: std::collections::HashMap<String, String> =
        reqwest::Url::parse(&format!("http://x/?{}", asked[0]))
            .unwrap()
            .query_pairs()
            .into_owned()
            .collect();
    assert_eq!(
        form["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(
        form["subject_token"],
        "eyJhbGciOiJSUzI1NiJ9.from-the-ci.sig"
    );
    assert!(form["audience"].ends_with("/providers/gh"), "{form:?}");
    let bearers = bearers(&mock);
    assert!(
        bearers.iter().all(|b| b == "Bearer ya29.test-token-1"),
        "{bearers:?}"
    );
    assert!(config.exists());
}
