//! Start-up resolution of what the cloud kinds need: Vertex AI's project,
//! location and Application Default Credentials; Bedrock's region and
//! credentials from the standard AWS chain.

use super::error::ResolveError;
use super::{CloudSettings, ProviderKind};
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
    let path = super::google_auth::credentials_path(env)
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            ResolveError(format!(
                "provider `{name}` (vertex) found no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run `gcloud auth application-default login`"
            ))
        })?;
    Ok(CloudSettings {
        project: Some(project),
        location: Some(location),
        google_credentials: Some(path),
        ..CloudSettings::default()
    })
}

fn bedrock(name: &str, p: &ProviderConfig, env: Env) -> Result<CloudSettings, ResolveError> {
    let (creds, profile_region) = super::aws::from_chain(env, p.profile.as_deref())
        .map_err(|e| ResolveError(format!("provider `{name}` (bedrock): {e}")))?;
    let region = p
        .region
        .clone()
        .or_else(|| first(env, &["AWS_REGION", "AWS_DEFAULT_REGION"]))
        .or(profile_region)
        .ok_or_else(|| {
            ResolveError(format!(
                "[providers.{name}] (bedrock) needs `region = \"…\"`, AWS_REGION, or a region in the profile"
            ))
        })?;
    Ok(CloudSettings {
        region: Some(region),
        aws: Some(creds),
        ..CloudSettings::default()
    })
}
