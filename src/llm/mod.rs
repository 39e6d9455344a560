//! Model providers: one streaming trait ([`Provider`]) and one file per wire
//! format — OpenAI Chat Completions (`openai`, its body in
//! `openai_request`), OpenAI Responses (`openai_responses`), Anthropic
//! Messages (`anthropic`, `anthropic_request`), Gemini (`gemini`), Bedrock
//! Converse (`bedrock`, signed by `aws`) and Ollama (`ollama`). Vertex AI
//! (`vertex`, signed by `google_auth`) is a transport over the Gemini and
//! Anthropic formats; Azure OpenAI is settings over the OpenAI ones.
//!
//! What the formats share lives once: `stream` is the skeleton every one is
//! read through (parse each message, keep tool calls, usage and the stop
//! reason, end once), `transport` sends and classifies, `sse` and `ndjson`
//! frame the bytes, `retry` retries, `error` classifies what went wrong.
//! `resolve` (with `resolve_cloud`) picks the provider at start-up from
//! config and environment; `models` and `model_list` know the catalogue
//! and what a server serves; `explain` says where a refused key came from.
//!
//! `llm` knows a tool only as a [`ToolSpec`]: name, description, schema.

pub mod anthropic;
mod anthropic_request;
mod anthropic_search;
pub mod aws;
pub mod aws_chain;
pub mod bedrock;
pub mod effort;
pub mod error;
pub mod explain;
pub mod gemini;
pub mod google_auth;
pub mod model_list;
pub mod models;
mod ndjson;
pub mod ollama;
pub mod openai;
mod openai_request;
pub mod openai_responses;
pub mod resolve;
mod resolve_cloud;
pub mod retry;
pub mod server_limits;
pub mod sse;
mod stream;
pub mod transport;
pub mod vertex;

pub use error::{LlmError, error_message, parse_retry_after};

use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures::Stream;
use serde::{Deserialize, Serialize};

use crate::conversation::Message;
pub use crate::conversation::Usage;

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// One request to the model.
#[derive(Debug, Clone)]
pub struct Request {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// Ask for reasoning/thinking where the model supports it.
    pub reasoning: bool,
    /// How hard to think, when `reasoning`; each format maps it to its own
    /// field (`None`: the format's default).
    pub effort: Option<crate::config::effort::Effort>,
    /// Offer the provider's own web search (where its format has one),
    /// allowed this many searches per request; `None`: not offered.
    pub web_search: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    /// Cut by the output limit (`max_tokens`).
    MaxTokens,
    /// The model declined to answer.
    Refusal,
    /// The provider paused a long run of its own tools (its web search):
    /// the answer so far goes back as it is and the provider goes on.
    Paused,
    Other(String),
}

/// What a provider stream yields, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    ReasoningSignature(String),
    /// A tool call begins. `index` identifies it among this response's calls.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of the call's JSON arguments.
    ToolCallDelta {
        index: usize,
        fragment: String,
    },
    /// Something the provider needs sent back unchanged in later requests
    /// (Anthropic's `redacted_thinking`, ...): kept as a
    /// [`Part::ProviderData`](crate::conversation::Part::ProviderData).
    ProviderData {
        format: String,
        data: serde_json::Value,
    },
    /// The provider ran a web search of its own (never run by cairn).
    WebSearch(crate::conversation::WebSearch),
    /// The answer's text cites this source.
    Citation(crate::conversation::Source),
    Usage(Usage),
    /// The stream was cut and restarted by the retry layer after text had
    /// already been shown, and the new attempt's text differs from it:
    /// consumers drop what they have of this response and start over.
    Reset,
    Done(StopReason),
}

pub use models::{ModelCatalog, ModelInfo};
pub use resolve::{ResolveError, ResolvedProvider, preset, resolve_provider};

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

#[async_trait]
pub trait Provider: Send + Sync {
    /// The configured name of this provider ("anthropic", "local", ...).
    fn name(&self) -> &str;
    /// Starts one streaming request. Connection and HTTP errors surface here;
    /// errors after the stream starts surface as stream items.
    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError>;
    /// What the server says of `model`'s limits, for a model the catalogue
    /// does not know; `None` where the server has no way to say.
    async fn limits(&self, _model: &str) -> Option<server_limits::Limits> {
        None
    }
    /// Whether requests for `model` can offer the provider's own web
    /// search ([`Request::web_search`]).
    fn native_search(&self, _model: &str) -> bool {
        false
    }
    /// Whether that search can sit beside function declarations in one
    /// request; where it cannot (Gemini's grounding), the agent offers it
    /// as a tool of its own that asks the model with the search alone.
    fn search_beside_tools(&self, _model: &str) -> bool {
        true
    }
}

/// A wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProviderKind {
    /// OpenAI Chat Completions and the servers that speak it.
    #[default]
    Openai,
    /// OpenAI's own API: Chat Completions, or Responses for the models the
    /// catalogue marks (the `openai` preset).
    OpenaiAuto,
    /// The OpenAI Responses API (OpenAI, Azure OpenAI).
    OpenaiResponses,
    Anthropic,
    /// Gemini's native API.
    Gemini,
    /// Ollama's native API.
    Ollama,
    /// Vertex AI (Gemini and Anthropic models).
    Vertex,
    /// Amazon Bedrock's Converse stream.
    Bedrock,
}

impl ProviderKind {
    /// The names `kind = "…"` accepts.
    pub const NAMES: [&'static str; 7] = [
        "openai",
        "openai-responses",
        "anthropic",
        "gemini",
        "ollama",
        "vertex",
        "bedrock",
    ];

    /// Kinds that sign in with cloud credentials rather than an API key
    /// and know their own endpoint.
    pub fn is_cloud(self) -> bool {
        matches!(self, ProviderKind::Vertex | ProviderKind::Bedrock)
    }

    pub fn parse(name: &str) -> Option<ProviderKind> {
        Some(match name {
            "openai" => ProviderKind::Openai,
            "openai-responses" => ProviderKind::OpenaiResponses,
            "anthropic" => ProviderKind::Anthropic,
            "gemini" => ProviderKind::Gemini,
            "ollama" => ProviderKind::Ollama,
            "vertex" => ProviderKind::Vertex,
            "bedrock" => ProviderKind::Bedrock,
            _ => return None,
        })
    }
}

/// Everything needed to talk to one provider.
#[derive(Clone)]
pub struct ProviderSettings {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key: Option<String>,
    /// Extra headers (Azure's `api-key`, OpenRouter's referer, ...).
    pub headers: Vec<(String, String)>,
    /// Extra query parameters (Azure's `api-version`).
    pub query: Vec<(String, String)>,
    /// Send the key as `api-key` instead of a bearer token (Azure).
    pub azure: bool,
    /// How long to wait for the response to start.
    pub request_timeout: Duration,
    /// How long a started response may stay silent between bytes.
    pub idle_timeout: Duration,
    /// What cloud kinds (Vertex, Bedrock) need besides a URL.
    pub cloud: CloudSettings,
    /// How the request body is bent for servers that need it.
    pub wire: WireOptions,
}

/// `[providers.NAME] stream = false` and `extra_body`, for OpenAI-compatible
/// servers, and the bounds on reading an answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WireOptions {
    /// Ask for a whole answer rather than a stream.
    pub no_stream: bool,
    /// Fields laid over every request body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Bounds on reading the answer.
    pub limits: transport::StreamLimits,
}

/// Printed without the key and without header values, which may hold
/// tokens: settings can end up in a log.
impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, _)| (k.as_str(), "[redacted]"))
            .collect();
        f.debug_struct("ProviderSettings")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("headers", &headers)
            .field("query", &self.query)
            .field("azure", &self.azure)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("cloud", &self.cloud)
            .field("no_stream", &self.wire.no_stream)
            .field(
                "extra_body",
                &self.wire.extra_body.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Settings of the cloud kinds, resolved at start-up.
#[derive(Clone, Default)]
pub struct CloudSettings {
    /// Vertex AI: the Google Cloud project and location.
    pub project: Option<String>,
    pub location: Option<String>,
    /// Vertex AI: the Application Default Credentials file; `None`: the
    /// metadata server.
    pub google_credentials: Option<std::path::PathBuf>,
    /// Bedrock: the AWS region cairn's config names (it wins over the
    /// SDK's region chain).
    pub region: Option<String>,
    /// Bedrock: where the credentials come from.
    pub aws: Option<AwsAuth>,
}

/// Bedrock's credentials: fixed keys, or the AWS SDK's chain for a profile.
#[derive(Clone)]
pub enum AwsAuth {
    Keys(AwsCredentials),
    Chain {
        /// `profile` from cairn's config; unset, the SDK's own choice
        /// (`AWS_PROFILE`, else `default`).
        profile: Option<String>,
    },
}

impl std::fmt::Debug for AwsAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AwsAuth::Keys(k) => k.fmt(f),
            AwsAuth::Chain { profile } => f
                .debug_struct("AwsChain")
                .field("profile", profile)
                .finish(),
        }
    }
}

/// AWS credentials; `Debug` shows the key id only.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.is_some())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for CloudSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudSettings")
            .field("project", &self.project)
            .field("location", &self.location)
            .field("google_credentials", &self.google_credentials)
            .field("region", &self.region)
            .field("aws", &self.aws)
            .finish()
    }
}

impl ProviderSettings {
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
    /// Silence (keep-alives do not count) that makes a started answer
    /// count as stalled and retried.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(45);
    /// A local server (a loopback address) reads the whole prompt on a CPU
    /// before it sends anything, and generates slowly.
    pub const LOCAL_IDLE_TIMEOUT: Duration = Duration::from_secs(180);
    /// A local server's first byte comes after the whole prompt is read.
    pub const LOCAL_FIRST_BYTE: Duration = Duration::from_secs(600);
}

/// The HTTP client providers share the settings of: timeouts are applied
/// per request by [`transport`].
pub fn http_client() -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Unreachable(e.to_string()))
}

/// Builds the provider for its wire format.
pub fn build_provider(settings: ProviderSettings) -> Result<Box<dyn Provider>, LlmError> {
    Ok(match settings.kind {
        ProviderKind::Openai => Box::new(openai::OpenAi::new(settings)?),
        ProviderKind::OpenaiAuto => Box::new(openai_responses::ChatOrResponses::new(settings)?),
        ProviderKind::OpenaiResponses => Box::new(openai_responses::Responses::new(settings)?),
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(settings)?),
        ProviderKind::Gemini => Box::new(gemini::Gemini::new(settings)?),
        ProviderKind::Ollama => Box::new(ollama::Ollama::new(settings)?),
        ProviderKind::Vertex => Box::new(vertex::Vertex::new(settings)?),
        ProviderKind::Bedrock => Box::new(bedrock::Bedrock::new(settings)?),
    })
}

#[cfg(test)]
mod settings_debug_tests {
    use super::*;

    #[test]
    fn debug_output_carries_no_key_and_no_header_value() {
        let settings = ProviderSettings {
            name: "work".into(),
            kind: ProviderKind::Anthropic,
            base_url: "http://127.0.0.1:1".into(),
            api_key: Some("sk-secret-value-123".into()),
            headers: vec![("Authorization".into(), "Bearer tok-secret-456".into())],
            query: Vec::new(),
            azure: false,
            request_timeout: ProviderSettings::DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: ProviderSettings::DEFAULT_IDLE_TIMEOUT,
            cloud: CloudSettings::default(),
            wire: Default::default(),
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("sk-secret-value-123"), "{shown}");
        assert!(!shown.contains("tok-secret-456"), "{shown}");
        assert!(
            shown.contains("Authorization") && shown.contains("work"),
            "{shown}"
        );
    }
}

#[cfg(test)]
mod native_search_tests;
