//! AWS request signing (SigV4, with the `aws-sigv4` crate). Credentials
//! come from the AWS SDK's own chain (see [`chain`]).

use std::time::SystemTime;

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;

use super::{AwsCredentials, LlmError};

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
}
