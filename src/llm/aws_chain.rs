//! AWS credentials and region through the AWS SDK's own chain
//! (`aws-config`): environment variables, the shared `config` and
//! `credentials` files with their profiles (static keys, SSO,
//! `credential_process`, assume-role with `role_arn` + `source_profile`,
//! web identity), then ECS container and EC2 instance metadata. cairn keeps
//! signing requests itself; only the keys come from here.
//!
//! The chain is loaded on the first request (it is async and may run a
//! program or call STS), and the keys it gives are kept until five minutes
//! before they expire.

use std::time::{Duration, SystemTime};

use aws_config::BehaviorVersion;
use aws_credential_types::Credentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use tokio::sync::Mutex;

use super::{AwsCredentials, LlmError};

/// Keys this close to expiring are fetched again before use.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// The SDK's chain for one provider: the profile and region the person
/// chose in cairn's config (either may be unset: the SDK then uses
/// `AWS_PROFILE`/`AWS_REGION` and the profile's own `region`).
pub struct AwsChain {
    profile: Option<String>,
    region: Option<String>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    loaded: Option<(SharedCredentialsProvider, String)>,
    keys: Option<Credentials>,
}

impl AwsChain {
    pub fn new(profile: Option<String>, region: Option<String>) -> AwsChain {
        AwsChain {
            profile,
            region,
            state: Mutex::new(State::default()),
        }
    }

    /// Keys and region for a request: kept ones while they are fresh, else
    /// fetched through the chain.
    pub async fn credentials(&self) -> Result<(AwsCredentials, String), LlmError> {
        let mut state = self.state.lock().await;
        if state.loaded.is_none() {
            state.loaded = Some(self.load().await?);
        }
        let (provider, region) = state.loaded.clone().expect("loaded above");
        let fresh = |c: &Credentials| {
            c.expiry()
                .is_none_or(|at| at > SystemTime::now() + REFRESH_MARGIN)
        };
        let keys = match state.keys.clone().filter(fresh) {
            Some(k) => k,
            None => {
                let k = provider
                    .provide_credentials()
                    .await
                    .map_err(|e| self.fail(&e))?;
                state.keys = Some(k.clone());
                k
            }
        };
        Ok((
            AwsCredentials {
                access_key_id: keys.access_key_id().to_string(),
                secret_access_key: keys.secret_access_key().to_string(),
                session_token: keys.session_token().map(str::to_string),
            },
            region,
        ))
    }

    async fn load(&self) -> Result<(SharedCredentialsProvider, String), LlmError> {
        let mut loader = aws_config::defaults(BehaviorVersion::latest());
        if let Some(p) = &self.profile {
            loader = loader.profile_name(p);
        }
        if let Some(r) = &self.region {
            loader = loader.region(aws_config::Region::new(r.clone()));
        }
        let config = loader.load().await;
        let region = config.region().map(|r| r.to_string()).ok_or_else(|| {
            auth(format!(
                "no AWS region for {}: set `region = \"…\"` for the provider in cairn's config, AWS_REGION, or `region` in the profile",
                self.profile_name()
            ))
        })?;
        let provider = config.credentials_provider().ok_or_else(|| {
            auth(format!(
                "the AWS SDK offered no credentials chain for {}",
                self.profile_name()
            ))
        })?;
        Ok((provider, region))
    }

    fn profile_name(&self) -> String {
        match &self.profile {
            Some(p) => format!("profile `{p}`"),
            None => "the default profile".to_string(),
        }
    }

    fn fail(&self, e: &CredentialsError) -> LlmError {
        auth(describe(&self.profile_name(), e))
    }
}

fn auth(message: String) -> LlmError {
    LlmError::Auth { status: 0, message }
}

/// One sentence: whose keys, and what failed (each cause once, no Debug).
pub fn describe(whose: &str, e: &CredentialsError) -> String {
    if let CredentialsError::CredentialsNotLoaded(_) = e {
        return format!(
            "no AWS credentials found for {whose}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, run `aws sso login`, or give the profile keys, `credential_process`, `role_arn` + `source_profile`, or `sso_session` in ~/.aws/config"
        );
    }
    let mut causes: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        let text = err
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !text.is_empty() && !causes.iter().any(|c| c.contains(&text)) {
            causes.push(text);
        }
        next = err.source();
    }
    format!(
        "the AWS credentials for {whose} could not be loaded: {}",
        causes.join(": ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_profile_and_every_cause_once() {
        let inner = std::io::Error::other("exit status 3: token expired");
        let e = CredentialsError::provider_error(inner);
        let text = describe("profile `team`", &e);
        assert!(text.contains("profile `team`"), "{text}");
        assert!(text.contains("token expired"), "{text}");
        assert_eq!(text.matches("token expired").count(), 1, "{text}");
        assert!(!text.contains("ProviderError {"), "{text}");
        let none = describe("profile `x`", &CredentialsError::not_loaded("nothing"));
        assert!(none.contains("aws sso login"), "{none}");
        let shown = auth(text).to_string();
        assert!(
            shown.starts_with("the AWS credentials for profile `team`"),
            "{shown}"
        );
    }

    #[derive(Debug)]
    struct Counting {
        calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
        lifetime: Duration,
    }

    impl ProvideCredentials for Counting {
        fn provide_credentials<'a>(
            &'a self,
        ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            let n = 1 + self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let keys = Credentials::new(
                format!("ASIA{n}"),
                "s",
                Some("t".into()),
                Some(SystemTime::now() + self.lifetime),
                "test",
            );
            aws_credential_types::provider::future::ProvideCredentials::ready(Ok(keys))
        }
    }

    async fn key_ids(lifetime: Duration) -> Vec<String> {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let chain = AwsChain::new(Some("p".into()), None);
        let provider = SharedCredentialsProvider::new(Counting {
            calls: calls.clone(),
            lifetime,
        });
        chain.state.lock().await.loaded = Some((provider, "eu-west-1".into()));
        let mut out = Vec::new();
        for _ in 0..3 {
            let (keys, region) = chain.credentials().await.unwrap();
            assert_eq!(region, "eu-west-1");
            out.push(keys.access_key_id);
        }
        out
    }

    #[tokio::test]
    async fn keys_are_kept_until_they_near_expiry() {
        assert_eq!(key_ids(Duration::from_secs(3600)).await, ["ASIA1"; 3]);
        assert_eq!(
            key_ids(Duration::from_secs(60)).await,
            ["ASIA1", "ASIA2", "ASIA3"]
        );
    }
}
