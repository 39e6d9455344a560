//! Vertex AI: Gemini and Anthropic models of a Google Cloud project, with
//! Application Default Credentials. A transport over the Gemini and
//! Anthropic wire formats: the model's name picks the publisher.

use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::json;

use super::google_auth::GoogleAuth;
use super::{EventStream, LlmError, Provider, ProviderSettings, Request, http_client};

const ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

pub struct Vertex {
    settings: ProviderSettings,
    client: reqwest::Client,
    auth: GoogleAuth,
    project: String,
    location: String,
}

impl Vertex {
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let client = http_client()?;
        let missing = |what: &str| LlmError::BadRequest {
            status: 0,
            message: format!("a vertex provider needs {what}"),
        };
        let cloud = &settings.cloud;
        let project = cloud
            .project
            .clone()
            .ok_or_else(|| missing("`project` (or GOOGLE_CLOUD_PROJECT)"))?;
        let location = cloud
            .location
            .clone()
            .unwrap_or_else(|| "us-central1".to_string());
        // No credentials file: the metadata server of the machine.
        let path: Option<PathBuf> = cloud.google_credentials.clone();
        Ok(Vertex {
            auth: GoogleAuth::new(path),
            settings,
            client,
            project,
            location,
        })
    }

    fn root(&self) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        if !base.is_empty() {
            base.to_string()
        } else if self.location == "global" {
            "https://aiplatform.googleapis.com".to_string()
        } else {
            format!("https://{}-aiplatform.googleapis.com", self.location)
        }
    }

    fn url(&self, publisher: &str, model: &str, method: &str) -> String {
        format!(
            "{}/v1/projects/{}/locations/{}/publishers/{publisher}/models/{model}:{method}",
            self.root(),
            self.project,
            self.location
        )
    }
}

/// Claude models are Anthropic's on Vertex; everything else is Google's.
fn is_anthropic(model: &str) -> bool {
    model.starts_with("claude")
}

#[async_trait]
impl Provider for Vertex {
    fn name(&self) -> &str {
        &self.settings.name
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let token = self.auth.token().await?;
        if is_anthropic(&request.model) {
            let mut body = super::anthropic::request_body(request);
            if let Some(o) = body.as_object_mut() {
                o.remove("model");
                o.insert("anthropic_version".into(), json!(ANTHROPIC_VERSION));
            }
            let req = self
                .client
                .post(self.url("anthropic", &request.model, "streamRawPredict"))
                .query(&self.settings.query)
                .bearer_auth(token)
                .json(&body);
            super::anthropic::stream_with(req, &self.settings).await
        } else {
            let req = self
                .client
                .post(self.url("google", &request.model, "streamGenerateContent"))
                .query(&[("alt", "sse")])
                .query(&self.settings.query)
                .bearer_auth(token)
                .json(&super::gemini::request_body(request));
            super::gemini::stream_with(req, &self.settings).await
        }
    }

    /// Both families Vertex serves have their search (the same formats).
    fn native_search(&self, _model: &str) -> bool {
        true
    }

    /// Claude's search goes beside tools; Gemini's grounding does not.
    fn search_beside_tools(&self, model: &str) -> bool {
        is_anthropic(model)
    }
}
