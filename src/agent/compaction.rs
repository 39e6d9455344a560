//! Compaction inside the agent: elide old tool outputs, or have the model
//! summarise the older turns (see `crate::context`).

use futures::StreamExt;

use super::events::{AgentEvent, NoticeLevel};
use super::turn::TurnContext;
use crate::context::{self, Tracker};
use crate::conversation::Message;
use crate::llm::{Request, StreamEvent};

const SUMMARY_SYSTEM: &str =
    "You write faithful, compact summaries of coding sessions so the work can continue.";

/// Shrinks `messages`. With a `focus` (the person asked, `/compact …`) it
/// always summarises; otherwise eliding old tool outputs may be enough.
pub(crate) async fn compact(
    ctx: &TurnContext,
    messages: &mut Vec<Message>,
    focus: Option<&str>,
    forced: bool,
    tracker: &mut Tracker,
) -> Result<(), String> {
    let window = ctx.opts.model_info.context_window.max(1);
    let before = context::estimate_messages(messages);
    let keep = window / 4;
    let target = window / 2;
    let Some(split) = context::split_point(messages, keep) else {
        // One turn holds everything: only its older tool outputs can go.
        let upto = messages.len().saturating_sub(1);
        let saved = context::elide_tool_outputs(messages, upto, target);
        if saved == 0 {
            return Err("there is nothing older than the current turn to compact".into());
        }
        tracker.reset();
        emit_done(ctx, before, messages, None);
        return Ok(());
    };
    if focus.is_none() && !forced {
        context::elide_tool_outputs(messages, split, target);
        if context::estimate_messages(messages) <= target {
            tracker.reset();
            emit_done(ctx, before, messages, None);
            return Ok(());
        }
    }
    ctx.shared.emit(AgentEvent::Notice {
        level: NoticeLevel::Info,
        text: format!(
            "Summarising older turns to free context (about {before} tokens of a {window} window)…"
        ),
    });
    let summary = summarise(ctx, &messages[..split], focus).await?;
    *messages = context::compacted(&summary, &messages[split..]);
    tracker.reset();
    emit_done(ctx, before, messages, Some(summary));
    Ok(())
}

fn emit_done(ctx: &TurnContext, before: u64, messages: &[Message], summary: Option<String>) {
    ctx.shared.emit(AgentEvent::Compacted {
        before_tokens: before,
        after_tokens: context::estimate_messages(messages),
        summary,
    });
}

async fn summarise(
    ctx: &TurnContext,
    older: &[Message],
    focus: Option<&str>,
) -> Result<String, String> {
    let request = Request {
        model: ctx.opts.model.clone(),
        system: SUMMARY_SYSTEM.to_string(),
        messages: context::summary_messages(older, focus),
        tools: Vec::new(),
        max_tokens: (ctx.opts.model_info.max_output as u32).clamp(1024, 8192),
        temperature: None,
        reasoning: false,
    };
    let mut stream = tokio::select! {
        _ = ctx.cancel.cancelled() => return Err("cancelled".into()),
        r = ctx.provider.stream(&request) => r.map_err(|e| format!("the summary request failed: {e}"))?,
    };
    let mut text = String::new();
    loop {
        let item = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err("cancelled".into()),
            item = stream.next() => item,
        };
        match item {
            None | Some(Ok(StreamEvent::Done(_))) => break,
            Some(Ok(StreamEvent::TextDelta(t))) => text.push_str(&t),
            Some(Ok(StreamEvent::Reset)) => text.clear(),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("the summary request failed: {e}")),
        }
    }
    if text.trim().is_empty() {
        return Err("the model returned an empty summary".into());
    }
    Ok(text)
}
