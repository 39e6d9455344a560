//! Routes `notifications/progress` to the tool call that asked for them.
//!
//! rmcp gives each request its progress token when the request is sent, so a
//! fast server can report progress before the caller has registered the
//! token; such early notifications wait in a short queue until it does.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc::UnboundedSender;

use crate::sync::lock;

/// Early notifications kept for tokens nobody has claimed yet.
const MAX_UNCLAIMED: usize = 64;

#[derive(Default)]
pub(crate) struct ProgressRouter {
    inner: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    routes: HashMap<ProgressToken, UnboundedSender<crate::tools::Progress>>,
    unclaimed: VecDeque<ProgressNotificationParam>,
}

impl ProgressRouter {
    /// Sends progress for `token` to `sink` until [`Self::unregister`].
    pub(crate) fn register(
        &self,
        token: ProgressToken,
        sink: UnboundedSender<crate::tools::Progress>,
    ) {
        let mut inner = lock(&self.inner);
        let mut kept = VecDeque::new();
        for early in std::mem::take(&mut inner.unclaimed) {
            if early.progress_token == token {
                let _ = sink.send(crate::tools::Progress::Status(progress_line(&early)));
            } else {
                kept.push_back(early);
            }
        }
        inner.unclaimed = kept;
        inner.routes.insert(token, sink);
    }

    pub(crate) fn unregister(&self, token: &ProgressToken) {
        lock(&self.inner).routes.remove(token);
    }

    pub(crate) fn dispatch(&self, params: ProgressNotificationParam) {
        let mut inner = lock(&self.inner);
        match inner.routes.get(&params.progress_token) {
            Some(sink) => {
                let _ = sink.send(crate::tools::Progress::Status(progress_line(&params)));
            }
            None => {
                if inner.unclaimed.len() >= MAX_UNCLAIMED {
                    inner.unclaimed.pop_front();
                }
                inner.unclaimed.push_back(params);
            }
        }
    }
}

/// `3/10 indexing`, `40% copying`, `7`: what a person reads in the tool pane.
pub(crate) fn progress_line(p: &ProgressNotificationParam) -> String {
    let amount = match p.total {
        Some(total) if total > 0.0 => format!("{}/{}", number(p.progress), number(total)),
        _ => number(p.progress),
    };
    match p.message.as_deref().map(str::trim) {
        Some(message) if !message.is_empty() => format!("{amount} {message}"),
        _ => amount,
    }
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n:.1}")
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn note(
        t: i64,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> ProgressNotificationParam {
        let mut p = ProgressNotificationParam::new(token(t), progress);
        p.total = total;
        p.message = message.map(str::to_string);
        p
    }

    #[test]
    fn lines_read_like_progress() {
        assert_eq!(
            progress_line(&note(1, 3.0, Some(10.0), Some("indexing"))),
            "3/10 indexing"
        );
        assert_eq!(progress_line(&note(1, 2.5, None, None)), "2.5");
        assert_eq!(progress_line(&note(1, 7.0, None, Some("  "))), "7");
    }

    #[test]
    fn early_notifications_reach_the_late_subscriber() {
        let router = ProgressRouter::default();
        router.dispatch(note(1, 1.0, Some(2.0), None));
        router.dispatch(note(2, 5.0, None, None));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        router.register(token(1), tx);
        router.dispatch(note(1, 2.0, Some(2.0), Some("done")));
        let status = |s: &str| Some(crate::tools::Progress::Status(s.into()));
        assert_eq!(rx.try_recv().ok(), status("1/2"));
        assert_eq!(rx.try_recv().ok(), status("2/2 done"));
        assert!(rx.try_recv().is_err());
        router.unregister(&token(1));
        router.dispatch(note(1, 3.0, None, None));
        assert!(rx.try_recv().is_err());
    }
}
