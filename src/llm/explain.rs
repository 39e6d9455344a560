//! Errors said in the person's terms: a refused key names where the key
//! came from, a model the server does not know suggests choosing another.
//! A thin wrapper over a provider, below the retry layer.

use async_trait::async_trait;
use futures::StreamExt;

use super::{EventStream, LlmError, Provider, Request};

/// What the wrapper knows that the wire format does not.
#[derive(Debug, Clone, Default)]
pub struct Hints {
    /// Where the API key comes from: `ANTHROPIC_API_KEY`, or a file.
    pub key_source: Option<String>,
}

pub struct Explained {
    inner: Box<dyn Provider>,
    hints: Hints,
}

impl Explained {
    pub fn new(inner: Box<dyn Provider>, hints: Hints) -> Self {
        Explained { inner, hints }
    }
}

#[async_trait]
impl Provider for Explained {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn limits(&self, model: &str) -> Option<super::server_limits::Limits> {
        self.inner.limits(model).await
    }

    fn native_search(&self, model: &str) -> bool {
        self.inner.native_search(model)
    }

    fn search_beside_tools(&self, model: &str) -> bool {
        self.inner.search_beside_tools(model)
    }

    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        let model = request.model.clone();
        let hints = self.hints.clone();
        match self.inner.stream(request).await {
            Ok(s) => {
                Ok(Box::pin(s.map(move |item| {
                    item.map_err(|e| explain(e, &model, &hints))
                })))
            }
            Err(e) => Err(explain(e, &model, &hints)),
        }
    }
}

/// `e` with what the person can do about it.
pub fn explain(e: LlmError, model: &str, hints: &Hints) -> LlmError {
    match e {
        // Status 0: no credential was sent; the message says why already.
        LlmError::Auth { status, message } if status != 0 => {
            let fix = match &hints.key_source {
                Some(source) => format!("it is read from {source}; check it there"),
                None => "this provider needs an API key (`api_key_env` in its config)".into(),
            };
            LlmError::Auth {
                status,
                message: format!("{message}; {fix}"),
            }
        }
        LlmError::BadRequest {
            status: 404,
            message,
        } => LlmError::BadRequest {
            status: 404,
            message: format!(
                "model `{model}` not found ({message}); choose another with /model (or --model)"
            ),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_key_names_its_variable() {
        let hints = Hints {
            key_source: Some("ANTHROPIC_API_KEY".into()),
        };
        let e = explain(
            LlmError::Auth {
                status: 401,
                message: "invalid x-api-key".into(),
            },
            "m",
            &hints,
        );
        assert_eq!(
            e.to_string(),
            "the API key was refused (401): invalid x-api-key; it is read from ANTHROPIC_API_KEY; check it there"
        );
        // No credential was sent at all (a cloud chain failed): said as is.
        let local = "no AWS credentials found for profile `x`: run `aws sso login`";
        let e = explain(
            LlmError::Auth {
                status: 0,
                message: local.into(),
            },
            "m",
            &Hints { key_source: None },
        );
        assert_eq!(e.to_string(), local);
    }

    #[test]
    fn an_unknown_model_suggests_the_picker() {
        let e = explain(
            LlmError::BadRequest {
                status: 404,
                message: "not_found_error".into(),
            },
            "claude-nine",
            &Hints::default(),
        );
        let text = e.to_string();
        assert!(text.contains("model `claude-nine` not found"), "{text}");
        assert!(text.contains("/model"), "{text}");
    }
}
