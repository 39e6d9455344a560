//! Tells the front end what the tool source (the MCP servers) is up to: a
//! notice when a server fails, stops or comes back, and its health for the
//! status line whenever it changes.

use std::sync::Arc;

use std::sync::atomic::Ordering;

use tokio::sync::oneshot;

use super::Shared;
use crate::conversation::{Part, ResultContent};
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::ToolSource;
use crate::tools::input::InputAnswer;
use crate::tools::state::lock;

/// Forwards the source's notices and health as events until the source or
/// the front end goes away.
pub(crate) fn watch(source: Arc<dyn ToolSource>, shared: Arc<Shared>) {
    let Some(mut changes) = source.changes() else {
        return;
    };
    tokio::spawn(async move {
        let mut seen = 0;
        let mut last_health = None;
        loop {
            changes.borrow_and_update();
            for notice in source.notices(seen) {
                seen += 1;
                shared.emit(AgentEvent::Notice {
                    level: if notice.problem {
                        NoticeLevel::Warning
                    } else {
                        NoticeLevel::Info
                    },
                    text: notice.text,
                });
            }
            let health = source.health();
            if health != last_health {
                last_health = health;
                if let Some(health) = health {
                    shared.emit(AgentEvent::ServersChanged(health));
                }
            }
            if shared.events.is_closed() || changes.changed().await.is_err() {
                return;
            }
        }
    });
}

/// Lets the source's servers ask the person: each request becomes an
/// `InputRequested` event, answered by `InputReply`.
pub(crate) fn install_asker(source: &dyn ToolSource, shared: Arc<Shared>) {
    let weak = Arc::downgrade(&shared);
    source.set_asker(Arc::new(move |request| {
        let (tx, rx) = oneshot::channel();
        if let Some(shared) = weak.upgrade() {
            let id = shared.next_request.fetch_add(1, Ordering::Relaxed);
            lock(&shared.inputs).insert(id, tx);
            shared.emit(AgentEvent::InputRequested { id, request });
        }
        rx
    }));
}

/// Hands the person's answer to the request waiting for it.
pub(crate) fn answer(shared: &Shared, id: u64, answer: InputAnswer) {
    if let Some(tx) = lock(&shared.inputs).remove(&id) {
        let _ = tx.send(answer);
    }
    shared.emit(AgentEvent::InputResolved { id });
}

/// The contents of each `@mcp:SERVER:URI` the prompt mentions, as parts of
/// the user's message: text inside an `<attached>` element, an image (when
/// the model sees images) right after the element naming it; one that
/// cannot be read is a notice.
pub(crate) async fn attachments(
    source: &dyn ToolSource,
    text: &str,
    images: bool,
    shared: &Shared,
) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut seen = Vec::new();
    if text.split_whitespace().any(|w| w.starts_with("@mcp:")) {
        // A server still starting (the first prompt of `cairn run`) has
        // nothing to read yet.
        let waiting = |note: String| {
            shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: note,
            })
        };
        source.ready(&waiting).await;
    }
    for word in text.split_whitespace() {
        let Some(reference) = word.strip_prefix('@').filter(|r| r.starts_with("mcp:")) else {
            continue;
        };
        if seen.contains(&reference) {
            continue;
        }
        seen.push(reference);
        match source.attach(reference, images).await {
            Ok(content) => parts.extend(attached(reference, content)),
            Err(why) => shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!("@{reference} was not attached: {why}"),
            }),
        }
    }
    parts
}

/// One attached resource as message parts.
fn attached(reference: &str, content: Vec<ResultContent>) -> Vec<Part> {
    let mut text = Vec::new();
    let mut pictures = Vec::new();
    for piece in content {
        match piece {
            ResultContent::Text { text: t } => text.push(t),
            ResultContent::Image { image } => {
                text.push(format!("(an image, {}, follows)", image.media_type));
                pictures.push(Part::Image { image });
            }
        }
    }
    let body = text.join("\n");
    let mut parts = vec![Part::Text {
        text: format!(
            "{}resource=\"{reference}\">\n{body}\n</attached>",
            crate::conversation::ATTACHED_TAG
        ),
    }];
    parts.extend(pictures);
    parts
}
