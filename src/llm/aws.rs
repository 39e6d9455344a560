//! AWS request signing (SigV4, with the `aws-sigv4` crate) and the
//! standard credentials chain: environment variables, then the shared
//! `credentials` and `config` files for `AWS_PROFILE` (or the config's
//! `profile`), session tokens included.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;

use super::{AwsCredentials, LlmError};

type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// Where and when a signature is valid.
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    pub time: SystemTime,
}

/// The headers that sign a request: `x-amz-date`, `authorization` and,
/// with temporary credentials, `x-amz-security-token`.
pub fn sign_headers(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    creds: &AwsCredentials,
    scope: &Scope,
) -> Result<Vec<(String, String)>, LlmError> {
    let fail = |e: &dyn std::fmt::Display| LlmError::Auth {
        status: 0,
        message: format!("the request could not be signed: {e}"),
    };
    let identity = aws_credential_types::Credentials::new(
        &creds.access_key_id,
        &creds.secret_access_key,
        creds.session_token.clone(),
        None,
        "cairn",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(scope.region)
        .name(scope.service)
        .time(scope.time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| fail(&e))?
        .into();
    let signable = SignableRequest::new(
        method,
        url,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| fail(&e))?;
    let (instructions, _) = sign(signable, &params).map_err(|e| fail(&e))?.into_parts();
    Ok(instructions
        .headers()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// Why no credentials were found, said so a person can fix it.
const NO_CREDENTIALS: &str = "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or put the profile's keys in ~/.aws/credentials and select it with AWS_PROFILE or `profile` in the provider's config";

/// Credentials and region from the standard chain.
pub fn from_chain(
    env: Env,
    profile: Option<&str>,
) -> Result<(AwsCredentials, Option<String>), String> {
    let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let profile = profile
        .map(str::to_string)
        .or_else(|| var("AWS_PROFILE"))
        .unwrap_or_else(|| "default".to_string());
    let home = var("HOME").map(PathBuf::from);
    let file = |var_name: &str, rel: &str| {
        var(var_name)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(rel)))
    };
    let credentials =
        file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials").and_then(|p| section(&p, &profile));
    // The config file names profiles `[profile NAME]`, except `[default]`.
    let config_name = if profile == "default" {
        profile.clone()
    } else {
        format!("profile {profile}")
    };
    let config = file("AWS_CONFIG_FILE", ".aws/config").and_then(|p| section(&p, &config_name));
    let region = config.as_ref().and_then(|c| c.get("region").cloned());
    let from_env = var("AWS_ACCESS_KEY_ID")
        .zip(var("AWS_SECRET_ACCESS_KEY"))
        .map(|(id, secret)| AwsCredentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: var("AWS_SESSION_TOKEN"),
        });
    let from_file = |s: &HashMap<String, String>| {
        Some(AwsCredentials {
            access_key_id: s.get("aws_access_key_id")?.clone(),
            secret_access_key: s.get("aws_secret_access_key")?.clone(),
            session_token: s.get("aws_session_token").cloned(),
        })
    };
    let creds = from_env
        .or_else(|| credentials.as_ref().and_then(from_file))
        .or_else(|| config.as_ref().and_then(from_file))
        .ok_or_else(|| NO_CREDENTIALS.to_string())?;
    Ok((creds, region))
}

/// The keys of one `[name]` section of an INI file.
fn section(path: &Path, name: &str) -> Option<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut current: Option<&str> = None;
    let mut out: Option<HashMap<String, String>> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(header.trim());
            if header.trim() == name {
                out.get_or_insert_with(HashMap::new);
            }
            continue;
        }
        if current == Some(name)
            && let Some((k, v)) = line.split_once('=')
            && let Some(map) = out.as_mut()
        {
            map.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn example(token: Option<&str>) -> AwsCredentials {
        AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: token.map(str::to_string),
        }
    }

    /// 2015-08-30T12:36:00Z, the time of AWS's published SigV4 test suite.
    fn suite_time() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_440_938_160)
    }

    fn authorization(h: &[(String, String)]) -> &str {
        &h.iter().find(|(k, _)| k == "authorization").unwrap().1
    }

    #[test]
    fn signs_the_published_post_vanilla_vector() {
        let h = sign_headers(
            "POST",
            "https://example.amazonaws.com/",
            &[("host", "example.amazonaws.com")],
            b"",
            &example(None),
            &Scope {
                region: "us-east-1",
                service: "service",
                time: suite_time(),
            },
        )
        .unwrap();
        assert_eq!(
            authorization(&h),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
        assert!(
            h.iter()
                .any(|(k, v)| k == "x-amz-date" && v == "20150830T123600Z")
        );
    }

    #[test]
    fn signs_the_published_get_vanilla_with_session_token_vector() {
        let token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
        let h = sign_headers(
            "GET",
            "https://example.amazonaws.com/",
            &[("host", "example.amazonaws.com")],
            b"",
            &example(Some(token)),
            &Scope {
                region: "us-east-1",
                service: "service",
                time: suite_time(),
            },
        )
        .unwrap();
        assert_eq!(
            authorization(&h),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"
        );
        assert!(
            h.iter()
                .any(|(k, v)| k == "x-amz-security-token" && v == token)
        );
    }

    #[test]
    fn the_chain_prefers_the_environment_then_the_profile_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".aws")).unwrap();
        std::fs::write(
            dir.path().join(".aws/credentials"),
            "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = d\n\n[work]\n# a comment\naws_access_key_id = AKIAWORK\naws_secret_access_key = w\naws_session_token = tok\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".aws/config"),
            "[default]\nregion = us-east-1\n[profile work]\nregion = eu-west-3\n",
        )
        .unwrap();
        let home = dir.path().display().to_string();
        let vars = |pairs: Vec<(&'static str, String)>| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
        };
        let env = vars(vec![("HOME", home.clone()), ("AWS_PROFILE", "work".into())]);
        let (c, region) = from_chain(&env, None).unwrap();
        assert_eq!(c.access_key_id, "AKIAWORK");
        assert_eq!(c.session_token.as_deref(), Some("tok"));
        assert_eq!(region.as_deref(), Some("eu-west-3"));
        let (c, region) = from_chain(&vars(vec![("HOME", home.clone())]), None).unwrap();
        assert_eq!(c.access_key_id, "AKIADEFAULT");
        assert_eq!(region.as_deref(), Some("us-east-1"));
        let env = vars(vec![
            ("HOME", home),
            ("AWS_ACCESS_KEY_ID", "AKIAENV".into()),
            ("AWS_SECRET_ACCESS_KEY", "e".into()),
            ("AWS_SESSION_TOKEN", "envtok".into()),
        ]);
        let (c, _) = from_chain(&env, Some("work")).unwrap();
        assert_eq!(c.access_key_id, "AKIAENV");
        assert_eq!(c.session_token.as_deref(), Some("envtok"));
        let err = from_chain(&vars(vec![]), None).unwrap_err();
        assert!(err.contains("AWS_ACCESS_KEY_ID"), "{err}");
    }
}
