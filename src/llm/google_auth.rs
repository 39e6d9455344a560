//! Google Application Default Credentials for Vertex AI: a service-account
//! key file (a JWT signed with its key, exchanged at its `token_uri`) or
//! the gcloud user credentials file (a refresh token). Access tokens are
//! kept and refreshed a few minutes before they expire.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::LlmError;

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// A token this close to expiring is replaced before use.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum CredentialsFile {
    ServiceAccount {
        client_email: String,
        private_key: String,
        private_key_id: Option<String>,
        token_uri: Option<String>,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: Option<String>,
    },
}

/// Where Application Default Credentials are looked for:
/// `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's user credentials file.
pub fn credentials_path(env: &(dyn Fn(&str) -> Option<String> + Sync)) -> Option<PathBuf> {
    if let Some(p) = env("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dir = env("CLOUDSDK_CONFIG")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config/gcloud")))?;
    Some(dir.join("application_default_credentials.json"))
}

struct Token {
    value: String,
    expires: SystemTime,
}

pub struct GoogleAuth {
    path: PathBuf,
    client: reqwest::Client,
    token: Mutex<Option<Token>>,
}

impl GoogleAuth {
    pub fn new(path: PathBuf, client: reqwest::Client) -> GoogleAuth {
        GoogleAuth {
            path,
            client,
            token: Mutex::new(None),
        }
    }

    /// A valid access token, fetched or refreshed when needed.
    pub async fn token(&self) -> Result<String, LlmError> {
        let mut slot = self.token.lock().await;
        if let Some(t) = slot.as_ref()
            && t.expires > SystemTime::now() + REFRESH_MARGIN
        {
            return Ok(t.value.clone());
        }
        let fresh = self.fetch().await?;
        let value = fresh.value.clone();
        *slot = Some(fresh);
        Ok(value)
    }

    fn read(&self) -> Result<CredentialsFile, LlmError> {
        let text = std::fs::read_to_string(&self.path).map_err(|e| LlmError::Auth {
            status: 0,
            message: format!(
                "cannot read Google credentials at {} ({e}); set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file or run `gcloud auth application-default login`",
                self.path.display()
            ),
        })?;
        serde_json::from_str(&text).map_err(|e| LlmError::Auth {
            status: 0,
            message: format!(
                "{} is not a service-account key or gcloud user credentials file ({e})",
                self.path.display()
            ),
        })
    }

    async fn fetch(&self) -> Result<Token, LlmError> {
        let (uri, form) = match self.read()? {
            CredentialsFile::ServiceAccount {
                client_email,
                private_key,
                private_key_id,
                token_uri,
            } => {
                let uri = token_uri.unwrap_or_else(|| DEFAULT_TOKEN_URI.into());
                let jwt = signed_assertion(
                    &client_email,
                    &private_key,
                    private_key_id.as_deref(),
                    &uri,
                    SystemTime::now(),
                )?;
                let form = vec![
                    (
                        "grant_type".to_string(),
                        "urn:ietf:params:oauth:grant-type:jwt-bearer".to_string(),
                    ),
                    ("assertion".to_string(), jwt),
                ];
                (uri, form)
            }
            CredentialsFile::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => (
                token_uri.unwrap_or_else(|| DEFAULT_TOKEN_URI.into()),
                vec![
                    ("grant_type".to_string(), "refresh_token".to_string()),
                    ("client_id".to_string(), client_id),
                    ("client_secret".to_string(), client_secret),
                    ("refresh_token".to_string(), refresh_token),
                ],
            ),
        };
        let resp = self
            .client
            .post(&uri)
            .form(&form)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| super::error::from_transport(&e))?;
        let status = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        if !(200..300).contains(&status) {
            return Err(LlmError::Auth {
                status,
                message: format!(
                    "Google refused the credentials in {}: {}",
                    self.path.display(),
                    super::error_message(&body)
                ),
            });
        }
        let v: Value = serde_json::from_str(&body)
            .map_err(|e| LlmError::Malformed(format!("the token endpoint's answer ({e})")))?;
        let value = v["access_token"]
            .as_str()
            .ok_or_else(|| LlmError::Malformed("the token endpoint gave no access_token".into()))?
            .to_string();
        let expires_in = v["expires_in"].as_u64().unwrap_or(3600);
        Ok(Token {
            value,
            expires: SystemTime::now() + Duration::from_secs(expires_in),
        })
    }
}

/// A JWT asking for a cloud-platform token, signed RS256 with the service
/// account's key (PKCS#8 PEM, as Google issues them).
fn signed_assertion(
    email: &str,
    pem: &str,
    key_id: Option<&str>,
    audience: &str,
    now: SystemTime,
) -> Result<String, LlmError> {
    let bad_key = |why: String| LlmError::Auth {
        status: 0,
        message: format!("the service-account private key cannot be used: {why}"),
    };
    let der: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::trim)
        .collect();
    let der = STANDARD
        .decode(der)
        .map_err(|e| bad_key(format!("not base64 PEM ({e})")))?;
    let key = aws_lc_rs::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| bad_key(format!("not a PKCS#8 RSA key ({e})")))?;
    let iat = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = key_id {
        header["kid"] = json!(kid);
    }
    let claims =
        json!({"iss": email, "scope": SCOPE, "aud": audience, "iat": iat, "exp": iat + 3600});
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut sig = vec![0u8; key.public_modulus_len()];
    key.sign(
        &aws_lc_rs::signature::RSA_PKCS1_SHA256,
        &aws_lc_rs::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut sig,
    )
    .map_err(|e| bad_key(format!("signing failed ({e})")))?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = include_str!("../../tests/fixtures/test-service-account-key.pem");
    const PUBLIC: &[u8] = include_bytes!("../../tests/fixtures/test-service-account-key.pub.der");

    #[test]
    fn the_assertion_is_a_verifiable_rs256_jwt() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let jwt = signed_assertion("sa@p.iam", KEY, Some("k1"), "http://t/token", now).unwrap();
        let (input, sig) = jwt.rsplit_once('.').unwrap();
        let sig = URL_SAFE_NO_PAD.decode(sig).unwrap();
        aws_lc_rs::signature::UnparsedPublicKey::new(
            &aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256,
            PUBLIC,
        )
        .verify(input.as_bytes(), &sig)
        .expect("signature verifies");
        let claims: Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(input.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["aud"], "http://t/token");
        assert_eq!(claims["exp"], 1_700_003_600u64);
        assert_eq!(claims["scope"], SCOPE);
        assert!(signed_assertion("a", "not a key", None, "x", now).is_err());
    }

    #[test]
    fn adc_path_prefers_the_environment_variable() {
        let env = |k: &str| match k {
            "GOOGLE_APPLICATION_CREDENTIALS" => Some("/k.json".to_string()),
            "HOME" => Some("/home/u".to_string()),
            _ => None,
        };
        assert_eq!(credentials_path(&env), Some(PathBuf::from("/k.json")));
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
        assert_eq!(
            credentials_path(&env),
            Some(PathBuf::from(
                "/home/u/.config/gcloud/application_default_credentials.json"
            ))
        );
    }
}
