//! Compaction inside the agent: elide old tool outputs, or have the model
//! summarise the older turns (see `crate::context`).

use futures::StreamExt;

use super::turn_context::TurnContext;
use crate::context::{self, Tracker};
use crate::conversation::Message;
use crate::llm::{Provider, Request, StreamEvent};
use crate::protocol::{AgentEvent, NoticeLevel};
use crate::tools::state::lock;
use tokio_util::sync::CancellationToken;

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
    // The system prompt and tool specifications go with every request: only
    // what is left of the window is the conversation's.
    let fixed = super::fixed::fixed_tokens(ctx, &super::fixed::build_system_prompt(ctx));
    let room = window.saturating_sub(fixed).max(window / 8);
    let before = fixed + context::estimate_messages(messages);
    let keep = room / 4;
    let target = room / 2;
    let Some(split) = context::split_point(messages, keep) else {
        // One turn holds everything: only its older tool outputs can go.
        let upto = messages.len().saturating_sub(1);
        let saved = context::elide_tool_outputs(messages, upto, target);
        if saved == 0 {
            return Err("there is nothing older than the current turn to compact".into());
        }
        tracker.reset();
        emit_done(ctx, before, fixed, messages, None, 0);
        return Ok(());
    };
    if focus.is_none() && !forced {
        context::elide_tool_outputs(messages, split, target);
        if context::estimate_messages(messages) <= target {
            tracker.reset();
            emit_done(ctx, before, fixed, messages, None, 0);
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
    // Turns are counted back from the current one: one prompt each.
    let kept_turns = context::turn_starts(&messages[split..]).len() as u64;
    let from_turn = (ctx.turn + 1).saturating_sub(kept_turns).max(1);
    lock(&ctx.shared.earlier).extend(super::resume::without_summary(&messages[..split]));
    *messages = context::compacted(&summary, &messages[split..]);
    tracker.reset();
    emit_done(ctx, before, fixed, messages, Some(summary), from_turn);
    Ok(())
}

/// Reports a compaction; `after_tokens` is what the next request will cost,
/// fixed part included, so the status line does not undercount it.
fn emit_done(
    ctx: &TurnContext,
    before: u64,
    fixed: u64,
    messages: &[Message],
    summary: Option<String>,
    from_turn: u64,
) {
    // Instructions summarised or elided away load again when needed.
    *lock(&ctx.shared.memory) = super::memory::loaded_in(messages, &ctx.opts.workspace);
    ctx.shared.emit(AgentEvent::Compacted {
        before_tokens: before,
        after_tokens: fixed + context::estimate_messages(messages),
        summary,
        from_turn,
    });
}

/// The largest answer asked of a summary, and the room left in the window
/// for the transcript it reads (a margin kept for the rough estimate). A
/// `max_tokens` the person set caps it too (at least 256): on a slow local
/// model a summary of the model's whole output limit can take minutes.
fn summary_budget(window: u64, max_output: u64, configured: Option<u32>) -> (u32, u64) {
    let cap = configured.map_or(u64::MAX, |c| u64::from(c).max(256));
    let max_tokens = max_output
        .clamp(1024, 8192)
        .min(window / 4)
        .min(cap)
        .max(256);
    let fixed = context::estimate_tokens(context::COMPACT_PROMPT) + 500;
    let room = window.saturating_sub(max_tokens + fixed) * 3 / 4;
    // The summary of the pieces before rides along with each piece.
    let piece = room.saturating_sub(max_tokens).max(256);
    (max_tokens as u32, piece)
}

/// Asks for the summary with the side-request models in turn (the small
/// one first, then the main one: a server that serves a single model
/// refuses the small one), saying when one fails and another is asked.
async fn summarise(
    ctx: &TurnContext,
    older: &[Message],
    focus: Option<&str>,
) -> Result<String, String> {
    let info = &ctx.opts.model_info;
    let (max_tokens, piece_budget) = summary_budget(
        info.context_window.max(1),
        info.max_output,
        ctx.opts.max_tokens,
    );
    let pieces = context::summary_pieces(older, piece_budget);
    if pieces.len() > 1 {
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Info,
            text: format!(
                "The older turns are larger than the model's window; summarising them in {} pieces.",
                pieces.len()
            ),
        });
    }
    let models = super::side_model::candidates(&ctx.opts);
    let mut so_far: Option<String> = None;
    for piece in &pieces {
        let ask = SummaryAsk {
            provider: ctx.provider.as_ref(),
            messages: context::summary_request(piece, focus, so_far.as_deref()),
            max_tokens,
            cancel: &ctx.cancel,
        };
        let summary = ask
            .first(&models, |text| {
                ctx.shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Warning,
                    text,
                })
            })
            .await?;
        so_far = Some(summary);
    }
    so_far.ok_or_else(|| "there was nothing to summarise".to_string())
}

/// One summary request, to be sent to one model after another.
struct SummaryAsk<'a> {
    provider: &'a dyn Provider,
    messages: Vec<Message>,
    max_tokens: u32,
    cancel: &'a CancellationToken,
}

impl SummaryAsk<'_> {
    /// The first summary a model in `models` writes; `notice` hears of
    /// each model that failed before another is asked.
    async fn first(&self, models: &[String], notice: impl Fn(String)) -> Result<String, String> {
        let mut why = "no model to ask for a summary".to_string();
        for (i, model) in models.iter().enumerate() {
            match self.ask(model).await {
                Ok(summary) => return Ok(summary),
                Err(e) if self.cancel.is_cancelled() => return Err(e),
                Err(e) => {
                    tracing::warn!(model, error = %e, "no summary from this model");
                    if let Some(next) = models.get(i + 1) {
                        notice(format!(
                            "`{model}` could not write the summary ({e}); asking `{next}`."
                        ));
                    }
                    why = e;
                }
            }
        }
        Err(why)
    }

    async fn ask(&self, model: &str) -> Result<String, String> {
        let request = Request {
            model: model.to_string(),
            system: SUMMARY_SYSTEM.to_string(),
            messages: self.messages.clone(),
            tools: Vec::new(),
            max_tokens: self.max_tokens,
            temperature: None,
            reasoning: false,
            effort: None,
            web_search: None,
        };
        let request = super::side_model::with_effort(request);
        let mut stream = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err("cancelled".into()),
            r = self.provider.stream(&request) => r.map_err(|e| format!("the summary request failed: {e}"))?,
        };
        let mut text = String::new();
        loop {
            let item = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Err("cancelled".into()),
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
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_summary_asks_for_at_most_what_the_person_allows_an_answer() {
        // An 8k window: a quarter of it, unless max_tokens is lower.
        assert_eq!(super::summary_budget(8192, 8192, None).0, 2048);
        assert_eq!(super::summary_budget(8192, 8192, Some(500)).0, 500);
        assert_eq!(super::summary_budget(8192, 8192, Some(100)).0, 256);
        assert_eq!(super::summary_budget(200_000, 64_000, Some(20_000)).0, 8192);
    }

    use super::*;
    use crate::agent::side_model::test_support::SingleModel;
    use std::sync::Mutex;

    #[tokio::test]
    async fn a_refused_small_model_falls_back_to_the_main_one_and_says_so() {
        let p = SingleModel::new("main", "They fixed the parser.");
        let cancel = CancellationToken::new();
        let ask = SummaryAsk {
            provider: &p,
            messages: vec![Message::user_text("fix the parser")],
            max_tokens: 1024,
            cancel: &cancel,
        };
        let notices = Mutex::new(Vec::new());
        let models = ["small".to_string(), "main".to_string()];
        let summary = ask
            .first(&models, |n| notices.lock().unwrap().push(n))
            .await;
        assert_eq!(summary.as_deref(), Ok("They fixed the parser."));
        assert_eq!(p.asked(), ["small", "main"]);
        let notices = notices.into_inner().unwrap();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].contains("`small`")
                && notices[0].contains("not found")
                && notices[0].contains("`main`"),
            "{notices:?}"
        );
    }

    #[tokio::test]
    async fn when_no_model_answers_the_error_says_why() {
        let p = SingleModel::new("main", "unused");
        let cancel = CancellationToken::new();
        let ask = SummaryAsk {
            provider: &p,
            messages: vec![Message::user_text("fix the parser")],
            max_tokens: 1024,
            cancel: &cancel,
        };
        let err = ask.first(&["other".to_string()], |_| {}).await.unwrap_err();
        assert!(err.contains("not found"), "{err}");
        cancel.cancel();
        let err = ask
            .first(&["small".to_string(), "main".to_string()], |_| {})
            .await;
        assert_eq!(err, Err("cancelled".to_string()));
        assert_eq!(p.asked(), ["other"], "nothing is asked once cancelled");
    }
}
