//! Which model answers the agent's side requests (titles, summaries): the
//! small model the provider resolved (configured, or its preset's when the
//! preset's own server is used), then the main model, which every server
//! serves. A server that serves a single model refuses the small one, so
//! each side request falls back along this list.

use super::AgentOptions;

/// The models to ask, in order: the small one (if any), then the main one.
pub(crate) fn candidates(opts: &AgentOptions) -> Vec<String> {
    let mut models: Vec<String> = opts.small_model.iter().cloned().collect();
    if !models.contains(&opts.model) {
        models.push(opts.model.clone());
    }
    models
}

/// A side request with the reasoning effort `[models.ID] effort` gives its
/// model; without one (or for a model that does not reason) it does not
/// reason at all, which keeps titles and summaries quick.
pub(crate) fn with_effort(mut request: crate::llm::Request) -> crate::llm::Request {
    let info = crate::llm::ModelCatalog::global().lookup(&request.model);
    request.effort = info.effort.filter(|_| info.supports_reasoning);
    request.reasoning = request.effort.is_some();
    request
}

#[cfg(test)]
pub(crate) mod test_support {
    use crate::llm::{EventStream, LlmError, Provider, Request, StopReason, StreamEvent};
    use async_trait::async_trait;
    use std::sync::Mutex;

    /// A server that serves one model, answering `reply`, and refuses
    /// every other with a 404.
    pub(crate) struct SingleModel {
        pub model: &'static str,
        pub reply: &'static str,
        pub asked: Mutex<Vec<String>>,
    }

    impl SingleModel {
        pub fn new(model: &'static str, reply: &'static str) -> SingleModel {
            SingleModel {
                model,
                reply,
                asked: Mutex::new(Vec::new()),
            }
        }

        pub fn asked(&self) -> Vec<String> {
            self.asked.lock().unwrap().clone()
        }
    }

    #[async_trait]
    impl Provider for SingleModel {
        fn name(&self) -> &str {
            "single"
        }
        async fn stream(&self, r: &Request) -> Result<EventStream, LlmError> {
            self.asked.lock().unwrap().push(r.model.clone());
            if r.model != self.model {
                return Err(LlmError::BadRequest {
                    status: 404,
                    message: format!("model `{}` not found", r.model),
                });
            }
            Ok(Box::pin(futures::stream::iter(vec![
                Ok(StreamEvent::TextDelta(self.reply.into())),
                Ok(StreamEvent::Done(StopReason::EndTurn)),
            ])))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_model_comes_first_and_the_main_one_always_last() {
        let mut opts = crate::agent::tests::test_options(std::path::Path::new("/tmp"));
        opts.model = "main".into();
        assert_eq!(candidates(&opts), ["main"]);
        opts.small_model = Some("small".into());
        assert_eq!(candidates(&opts), ["small", "main"]);
        opts.small_model = Some("main".into());
        assert_eq!(candidates(&opts), ["main"]);
    }
}
