//! Retries with exponential backoff and jitter, honouring `retry-after`.
//! A stream cut in the middle is retried too, without showing the person
//! the same text twice.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use rand::Rng;
use tokio::sync::mpsc;

use super::{EventStream, LlmError, Provider, Request, StreamEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: crate::config::DEFAULT_RETRY_ATTEMPTS,
            base_delay: Duration::from_millis(1_000),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// How long to wait before attempt `attempt + 1`.
    pub fn delay(&self, attempt: u32, err: &LlmError) -> Duration {
        if let LlmError::RateLimited {
            retry_after: Some(d),
            ..
        } = err
        {
            // The server said when; a little longer than asked is safe.
            return (*d).min(Duration::from_secs(300));
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        let jitter = rand::rng().random_range(0.75..1.25);
        capped.mul_f64(jitter).min(self.max_delay)
    }
}

/// Said each time a request is retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The attempt about to be made (2 for the first retry).
    pub attempt: u32,
    pub max_attempts: u32,
    pub delay: Duration,
    pub error: String,
}

pub type RetryListener = Arc<dyn Fn(RetryNotice) + Send + Sync>;

pub struct Retrying {
    inner: Arc<dyn Provider>,
    policy: RetryPolicy,
    listener: Option<RetryListener>,
}

impl Retrying {
    pub fn new(inner: Arc<dyn Provider>, policy: RetryPolicy) -> Self {
        Retrying {
            inner,
            policy,
            listener: None,
        }
    }

    pub fn with_listener(mut self, listener: RetryListener) -> Self {
        self.listener = Some(listener);
        self
    }
}

#[async_trait]
impl Provider for Retrying {
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
        let (tx, rx) = mpsc::channel(256);
        let driver = Driver {
            inner: self.inner.clone(),
            policy: self.policy,
            listener: self.listener.clone(),
            request: request.clone(),
            tx,
        };
        tokio::spawn(driver.run());
        Ok(Box::pin(tokio_stream_from(rx)))
    }
}

fn tokio_stream_from(
    mut rx: mpsc::Receiver<Result<StreamEvent, LlmError>>,
) -> impl futures::Stream<Item = Result<StreamEvent, LlmError>> + Send {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

struct Driver {
    inner: Arc<dyn Provider>,
    policy: RetryPolicy,
    listener: Option<RetryListener>,
    request: Request,
    tx: mpsc::Sender<Result<StreamEvent, LlmError>>,
}

/// What the consumer has already been shown of this response.
#[derive(Default)]
struct Shown {
    text: String,
    reasoning: String,
    /// Tool calls or signatures went out: these cannot be matched up again.
    other: bool,
}

/// How far an attempt has repeated what earlier attempts showed.
#[derive(Default)]
struct Progress {
    text_pos: usize,
    reasoning_pos: usize,
    /// An earlier attempt showed something.
    resuming: bool,
    /// This attempt said something else: it is forwarded as is.
    diverged: bool,
}

#[derive(Clone, Copy)]
enum Channel {
    Text,
    Reasoning,
}

enum Outcome {
    Finished,
    /// Failed with a retryable error.
    Retry(LlmError),
}

impl Driver {
    async fn run(self) {
        let mut shown = Shown::default();
        let mut attempt = 1;
        loop {
            let outcome = match self.inner.stream(&self.request).await {
                Ok(stream) => match self.pump(stream, &mut shown).await {
                    Some(o) => o,
                    None => return,
                },
                Err(e) if e.is_retryable() => Outcome::Retry(e),
                Err(e) => {
                    let _ = self.tx.send(Err(e)).await;
                    return;
                }
            };
            let err = match outcome {
                Outcome::Finished => return,
                Outcome::Retry(e) => e,
            };
            if attempt >= self.policy.max_attempts {
                let _ = self.tx.send(Err(err)).await;
                return;
            }
            let delay = self.policy.delay(attempt, &err);
            attempt += 1;
            if let Some(l) = &self.listener {
                l(RetryNotice {
                    attempt,
                    max_attempts: self.policy.max_attempts,
                    delay,
                    error: err.brief(),
                });
            }
            tracing::warn!(attempt, ?delay, error = %err, "retrying the model request");
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                // Nobody is listening any more: stop.
                _ = self.tx.closed() => return,
            }
        }
    }

    /// Forwards one attempt's events, swallowing what was already shown.
    /// `None` when the consumer went away.
    async fn pump(&self, mut stream: EventStream, shown: &mut Shown) -> Option<Outcome> {
        let mut at = Progress {
            resuming: !shown.text.is_empty() || !shown.reasoning.is_empty() || shown.other,
            ..Progress::default()
        };
        if shown.other {
            // Tool calls cannot be matched up: start the response over.
            *shown = Shown::default();
            self.send(Ok(StreamEvent::Reset)).await?;
            at.diverged = true;
        }
        loop {
            // A consumer that went away (a cancelled turn) closes the
            // response at once, not when the server next sends something.
            let item = tokio::select! {
                item = stream.next() => item,
                _ = self.tx.closed() => return None,
            };
            let Some(item) = item else {
                break;
            };
            let ev = match item {
                Ok(ev) => ev,
                Err(e) if e.is_retryable() => return Some(Outcome::Retry(e)),
                Err(e) => {
                    self.send(Err(e)).await?;
                    return Some(Outcome::Finished);
                }
            };
            if let Some(ev) = self.filter(ev, shown, &mut at).await? {
                let done = matches!(ev, StreamEvent::Done(_));
                self.send(Ok(ev)).await?;
                if done {
                    return Some(Outcome::Finished);
                }
            }
        }
        // The provider's stream ended without Done: treat as a cut.
        Some(Outcome::Retry(LlmError::Network(
            "the response stream ended early".into(),
        )))
    }

    /// What of `ev` the consumer has not seen yet: `Some(None)` when all of
    /// it was shown by an earlier attempt, `None` when the consumer left.
    async fn filter(
        &self,
        ev: StreamEvent,
        shown: &mut Shown,
        at: &mut Progress,
    ) -> Option<Option<StreamEvent>> {
        let replaying = at.resuming && !at.diverged;
        Some(match ev {
            StreamEvent::TextDelta(t) if replaying => {
                self.replayed(t, shown, at, Channel::Text).await?
            }
            StreamEvent::ReasoningDelta(t) if replaying => {
                self.replayed(t, shown, at, Channel::Reasoning).await?
            }
            StreamEvent::TextDelta(t) => {
                shown.text.push_str(&t);
                Some(StreamEvent::TextDelta(t))
            }
            StreamEvent::ReasoningDelta(t) => {
                shown.reasoning.push_str(&t);
                Some(StreamEvent::ReasoningDelta(t))
            }
            ev @ (StreamEvent::ToolCallStart { .. }
            | StreamEvent::ToolCallDelta { .. }
            | StreamEvent::WebSearch(_)
            | StreamEvent::ReasoningSignature(_)) => {
                if replaying && at.text_pos < shown.text.len() {
                    // The new attempt moved on to calls before repeating
                    // all the text: it said something else.
                    at.diverged = true;
                    *shown = Shown::default();
                    self.send(Ok(StreamEvent::Reset)).await?;
                }
                shown.other = true;
                Some(ev)
            }
            other => Some(other),
        })
    }

    /// A text or reasoning delta of an attempt that repeats an earlier one.
    async fn replayed(
        &self,
        delta: String,
        shown: &mut Shown,
        at: &mut Progress,
        channel: Channel,
    ) -> Option<Option<StreamEvent>> {
        let wrap = |t: String| match channel {
            Channel::Text => StreamEvent::TextDelta(t),
            Channel::Reasoning => StreamEvent::ReasoningDelta(t),
        };
        let (seen, pos) = match channel {
            Channel::Text => (&mut shown.text, &mut at.text_pos),
            Channel::Reasoning => (&mut shown.reasoning, &mut at.reasoning_pos),
        };
        Some(match replay(seen, pos, &delta) {
            Replay::Swallowed => None,
            Replay::Beyond(rest) => {
                seen.push_str(&rest);
                *pos = seen.len();
                Some(wrap(rest))
            }
            Replay::Diverged => {
                at.diverged = true;
                *shown = Shown::default();
                self.send(Ok(StreamEvent::Reset)).await?;
                match channel {
                    Channel::Text => shown.text.push_str(&delta),
                    Channel::Reasoning => shown.reasoning.push_str(&delta),
                }
                Some(wrap(delta))
            }
        })
    }

    async fn send(&self, item: Result<StreamEvent, LlmError>) -> Option<()> {
        self.tx.send(item).await.ok()
    }
}

enum Replay {
    /// All of the delta repeats text already shown.
    Swallowed,
    /// It repeats up to the end of what was shown, then says more.
    Beyond(String),
    /// It says something else.
    Diverged,
}

fn replay(shown: &str, pos: &mut usize, delta: &str) -> Replay {
    let remaining = &shown[*pos..];
    if remaining.len() >= delta.len() {
        if remaining.starts_with(delta) {
            *pos += delta.len();
            Replay::Swallowed
        } else {
            Replay::Diverged
        }
    } else if let Some(rest) = delta.strip_prefix(remaining) {
        *pos = shown.len();
        Replay::Beyond(rest.to_string())
    } else {
        Replay::Diverged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::StopReason;
    use std::collections::VecDeque;
    use std::sync::Mutex;

    type Attempt = Result<Vec<Result<StreamEvent, LlmError>>, LlmError>;

    struct Scripted {
        attempts: Mutex<VecDeque<Attempt>>,
        calls: Mutex<u32>,
    }

    #[async_trait]
    impl Provider for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }
        async fn stream(&self, _r: &Request) -> Result<EventStream, LlmError> {
            *self.calls.lock().unwrap() += 1;
            let next = self.attempts.lock().unwrap().pop_front().expect("script");
            next.map(|events| Box::pin(futures::stream::iter(events)) as EventStream)
        }
    }

    /// A response that says one thing and then waits forever, telling
    /// when its stream is dropped (the connection closed).
    struct Hanging {
        dropped: Arc<std::sync::atomic::AtomicBool>,
    }

    struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[async_trait]
    impl Provider for Hanging {
        fn name(&self) -> &str {
            "hanging"
        }
        async fn stream(&self, _r: &Request) -> Result<EventStream, LlmError> {
            let flag = DropFlag(self.dropped.clone());
            let first = futures::stream::iter([text("partial")]);
            let rest = futures::stream::poll_fn(move |_| {
                let _held = &flag;
                std::task::Poll::Pending
            });
            Ok(Box::pin(first.chain(rest)))
        }
    }

    #[tokio::test]
    async fn dropping_the_stream_closes_the_attempt_at_once() {
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let r = Retrying::new(
            Arc::new(Hanging {
                dropped: dropped.clone(),
            }),
            RetryPolicy::default(),
        );
        let mut stream = r.stream(&request()).await.unwrap();
        assert!(matches!(
            stream.next().await,
            Some(Ok(StreamEvent::TextDelta(t))) if t == "partial"
        ));
        assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
        // A cancelled turn drops the stream: the response it was reading
        // goes with it, not left open by a task of its own until the
        // server next sends something.
        drop(stream);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !dropped.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                std::time::Instant::now() < deadline,
                "the response is still open"
            );
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }

    fn text(t: &str) -> Result<StreamEvent, LlmError> {
        Ok(StreamEvent::TextDelta(t.into()))
    }
    fn done() -> Result<StreamEvent, LlmError> {
        Ok(StreamEvent::Done(StopReason::EndTurn))
    }
    fn cut() -> Result<StreamEvent, LlmError> {
        Err(LlmError::Network("connection reset".into()))
    }

    fn request() -> Request {
        Request {
            model: "m".into(),
            system: String::new(),
            messages: vec![],
            tools: vec![],
            max_tokens: 10,
            temperature: None,
            reasoning: false,
            effort: None,
            web_search: None,
        }
    }

    async fn run(
        attempts: Vec<Attempt>,
    ) -> (Vec<Result<StreamEvent, LlmError>>, u32, Vec<RetryNotice>) {
        let p = Arc::new(Scripted {
            attempts: Mutex::new(attempts.into()),
            calls: Mutex::new(0),
        });
        let notices = Arc::new(Mutex::new(Vec::new()));
        let n2 = notices.clone();
        let r = Retrying::new(
            p.clone(),
            RetryPolicy {
                max_attempts: 3,
                base_delay: Duration::from_millis(100),
                max_delay: Duration::from_secs(2),
            },
        )
        .with_listener(Arc::new(move |n| n2.lock().unwrap().push(n)));
        let out: Vec<_> = r.stream(&request()).await.unwrap().collect().await;
        let calls = *p.calls.lock().unwrap();
        let notices = notices.lock().unwrap().clone();
        (out, calls, notices)
    }

    fn joined(out: &[Result<StreamEvent, LlmError>]) -> String {
        out.iter()
            .filter_map(|e| match e {
                Ok(StreamEvent::TextDelta(t)) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_cut_stream_resumes_without_repeating_text() {
        let (out, calls, notices) = run(vec![
            Ok(vec![text("Hello, "), text("wor"), cut()]),
            Ok(vec![text("Hello, w"), text("orld"), text("!"), done()]),
        ])
        .await;
        assert_eq!(calls, 2);
        assert_eq!(joined(&out), "Hello, world!");
        assert!(!out.iter().any(|e| matches!(e, Ok(StreamEvent::Reset))));
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].attempt, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_diverging_retry_resets_first() {
        let (out, _, _) = run(vec![
            Ok(vec![text("Sure, "), cut()]),
            Ok(vec![text("Okay: "), text("done"), done()]),
        ])
        .await;
        let reset = out
            .iter()
            .position(|e| matches!(e, Ok(StreamEvent::Reset)))
            .unwrap();
        assert_eq!(joined(&out[reset..]), "Okay: done");
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limit_waits_as_long_as_asked() {
        let start = tokio::time::Instant::now();
        let (out, calls, notices) = run(vec![
            Err(LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(7)),
                message: "slow down".into(),
            }),
            Ok(vec![text("ok"), done()]),
        ])
        .await;
        assert_eq!(calls, 2);
        assert_eq!(joined(&out), "ok");
        assert_eq!(notices[0].delay, Duration::from_secs(7));
        assert!(start.elapsed() >= Duration::from_secs(7));
    }

    #[tokio::test(start_paused = true)]
    async fn auth_errors_are_not_retried_and_attempts_are_bounded() {
        let (out, calls, _) = run(vec![Err(LlmError::Auth {
            status: 401,
            message: "bad key".into(),
        })])
        .await;
        assert_eq!(calls, 1);
        assert!(matches!(out[0], Err(LlmError::Auth { .. })));
        let server = || {
            Err(LlmError::Server {
                status: 500,
                message: "x".into(),
            })
        };
        let (out, calls, notices) = run(vec![server(), server(), server()]).await;
        assert_eq!(calls, 3);
        assert_eq!(notices.len(), 2);
        assert!(matches!(out.last(), Some(Err(LlmError::Server { .. }))));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(10),
        };
        let e = LlmError::Network("x".into());
        let d1 = p.delay(1, &e);
        let d3 = p.delay(3, &e);
        assert!(d1 >= Duration::from_millis(750) && d1 <= Duration::from_millis(1250));
        assert!(d3 >= Duration::from_secs(3) && d3 <= Duration::from_secs(5));
        assert!(p.delay(9, &e) <= Duration::from_secs(10));
    }
}
