//! Google credentials for Vertex AI through Google's own auth crate
//! (`google-cloud-auth`): the Application Default Credentials file —
//! a service-account key (self-signed JWTs), gcloud's user credentials (a
//! refresh token), workload identity federation (`external_account`) or an
//! impersonated service account — else the metadata server of the machine
//! cairn runs on (`GCE_METADATA_HOST` to point it elsewhere). The crate
//! keeps tokens and refreshes them before they expire.

use std::path::{Path, PathBuf};

use google_cloud_auth::credentials::{
    AccessTokenCredentials, external_account, impersonated, mds, service_account, user_account,
};
use serde_json::Value;
use tokio::sync::Mutex;

use super::LlmError;

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

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

pub struct GoogleAuth {
    /// The ADC file; `None`: the metadata server.
    path: Option<PathBuf>,
    built: Mutex<Option<AccessTokenCredentials>>,
}

impl GoogleAuth {
    pub fn new(path: Option<PathBuf>) -> GoogleAuth {
        GoogleAuth {
            path,
            built: Mutex::new(None),
        }
    }

    /// A valid access token, fetched or refreshed when needed.
    pub async fn token(&self) -> Result<String, LlmError> {
        let creds = {
            let mut slot = self.built.lock().await;
            if slot.is_none() {
                *slot = Some(self.build()?);
            }
            slot.clone().expect("built above")
        };
        match creds.access_token().await {
            Ok(t) => Ok(t.token),
            Err(e) => Err(auth(match &self.path {
                Some(p) => format!(
                    "Google gave no access token for the credentials in {}: {}",
                    p.display(),
                    causes(&e)
                ),
                None => format!(
                    "no Google credentials file was found and the metadata server did not give a token ({}); set GOOGLE_APPLICATION_CREDENTIALS to a key or credentials file, or run `gcloud auth application-default login`",
                    causes(&e)
                ),
            })),
        }
    }

    fn build(&self) -> Result<AccessTokenCredentials, LlmError> {
        let Some(path) = &self.path else {
            return mds::Builder::default()
                .with_scopes([SCOPE])
                .build_access_token_credentials()
                .map_err(|e| {
                    auth(format!(
                        "the metadata server cannot be used: {}",
                        causes(&e)
                    ))
                });
        };
        let json = read(path)?;
        let kind = json["type"].as_str().unwrap_or_default().to_string();
        let built = match kind.as_str() {
            "service_account" => service_account::Builder::new(json)
                .with_access_specifier(service_account::AccessSpecifier::from_scopes([SCOPE]))
                .build_access_token_credentials(),
            "authorized_user" => user_account::Builder::new(json)
                .with_scopes([SCOPE])
                .build_access_token_credentials(),
            "external_account" => external_account::Builder::new(json)
                .with_scopes([SCOPE])
                .build_access_token_credentials(),
            "impersonated_service_account" => impersonated::Builder::new(json)
                .with_scopes([SCOPE])
                .build_access_token_credentials(),
            other => {
                return Err(auth(format!(
                    "{} holds credentials of type `{other}`; cairn reads service_account, authorized_user, external_account and impersonated_service_account",
                    path.display()
                )));
            }
        };
        built.map_err(|e| {
            auth(format!(
                "the {kind} credentials in {} cannot be used: {}",
                path.display(),
                causes(&e)
            ))
        })
    }
}

fn auth(message: String) -> LlmError {
    LlmError::Auth { status: 0, message }
}

fn read(path: &Path) -> Result<Value, LlmError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        auth(format!(
            "cannot read Google credentials at {} ({e}); set GOOGLE_APPLICATION_CREDENTIALS to a key or credentials file, or run `gcloud auth application-default login`",
            path.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| {
        auth(format!(
            "{} is not a Google credentials file ({e})",
            path.display()
        ))
    })
}

/// An error and its causes, each once, on one line. The crate's note that
/// a transient failure may pass is left out: cairn's retries say that.
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        next = err.source();
        let text = err
            .to_string()
            .replace(" but future attempts may succeed", "");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.starts_with("Fetching the token resulted in transient errors") {
            continue;
        }
        if !text.is_empty() && !out.iter().any(|c| c.contains(&text)) {
            out.push(text);
        }
    }
    out.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[tokio::test]
    async fn a_file_of_an_unknown_kind_is_named_with_the_kinds_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("adc.json");
        std::fs::write(&path, r#"{"type": "gdch_service_account"}"#).unwrap();
        let err = GoogleAuth::new(Some(path.clone()))
            .token()
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("gdch_service_account"), "{text}");
        assert!(text.contains("external_account"), "{text}");
        std::fs::write(&path, "not json").unwrap();
        let text = GoogleAuth::new(Some(path))
            .token()
            .await
            .unwrap_err()
            .to_string();
        assert!(text.contains("is not a Google credentials file"), "{text}");
    }
}
