//! Start-up resolution of what the cloud kinds need: Vertex AI's project,
//! location and Application Default Credentials; Bedrock's region and
//! profile (the AWS SDK's chain does the rest).

use super::error::ResolveError;
use super::{AwsAuth, CloudSettings, ProviderKind};
use crate::config::ProviderConfig;

type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

fn first(env: Env, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| env(n).filter(|v| !v.trim().is_empty()))
}

pub(crate) fn cloud_settings(
    kind: ProviderKind,
    name: &str,
    p: &ProviderConfig,
    env: Env,
) -> Result<CloudSettings, ResolveError> {
    match kind {
        ProviderKind::Vertex => vertex(name, p, env),
        ProviderKind::Bedrock => bedrock(name, p, env),
        _ => Ok(CloudSettings::default()),
    }
}

fn vertex(name: &str, p: &ProviderConfig, env: Env) -> Result<CloudSettings, ResolveError> {
    let project = p
        .project
        .clone()
        .or_else(|| first(env, &["GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"]))
        .ok_or_else(|| {
            ResolveError(format!(
                "[providers.{name}] (vertex) needs `project = \"…\"` or GOOGLE_CLOUD_PROJECT"
            ))
        })?;
    let location = p
        .location
        .clone()
        .or_else(|| first(env, &["GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION"]))
        .unwrap_or_else(|| "us-central1".to_string());
    // No file: the metadata server (on Google Cloud, or GCE_METADATA_HOST).
    // A file the person named is kept even when missing, to say so.
    let named = first(env, &["GOOGLE_APPLICATION_CREDENTIALS"]).is_some();
    let path = super::google_auth::credentials_path(env).filter(|p| named || p.is_file());
    Ok(CloudSettings {
        project: Some(project),
        location: Some(location),
        google_credentials: path,
        ..CloudSettings::default()
    })
}

/// The region cairn's config (or AWS_REGION) names is settled here; the
/// rest (the profile's region, the keys) is the AWS SDK's chain, loaded
/// on the first request.
fn bedrock(_name: &str, p: &ProviderConfig, env: Env) -> Result<CloudSettings, ResolveError> {
    let region = p
        .region
        .clone()
        .or_else(|| first(env, &["AWS_REGION", "AWS_DEFAULT_REGION"]));
    Ok(CloudSettings {
        region,
        aws: Some(AwsAuth::Chain {
            // Named here so a failure can say which profile it was.
            profile: p
                .profile
                .clone()
                .filter(|p| !p.trim().is_empty())
                .or_else(|| first(env, &["AWS_PROFILE"])),
        }),
        ..CloudSettings::default()
    })
}
