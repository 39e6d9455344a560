//! Why a response stopped, said to the person and to the model: an answer
//! cut by the output limit, a tool call cut by it, a refusal.

use super::turn_context::{ParsedCall, TurnContext};
use crate::llm::StopReason;
use crate::protocol::{AgentEvent, NoticeLevel};

/// Emits a notice for a stop that is not a plain end, and turns calls whose
/// arguments the output limit cut into errors that say so (rather than
/// "invalid JSON", which would send the model hunting for a syntax error).
pub(crate) fn surface(
    ctx: &TurnContext,
    stop: Option<&StopReason>,
    calls: &mut [ParsedCall],
    max_tokens: u32,
    usage: Option<&crate::llm::Usage>,
) {
    let Some(stop) = stop else { return };
    let window = ctx.opts.model_info.context_window;
    if *stop == StopReason::MaxTokens && usage.is_some_and(|u| cut_by_window(u, max_tokens, window))
    {
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: format!(
                "The answer was cut off because the model's context window is full (the server stopped after {} output tokens, below the limit of {max_tokens}); cairn compacts before the next request. If the server's window is larger than {window}, set `context_window` for this model.",
                usage.map_or(0, |u| u.output_tokens)
            ),
        });
        mark_truncated(calls, max_tokens);
        return;
    }
    if let Some(text) = notice(stop, !calls.is_empty(), max_tokens) {
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text,
        });
    }
    if *stop == StopReason::MaxTokens {
        mark_truncated(calls, max_tokens);
    }
}

/// A "length" stop with fewer output tokens than the limit and prompt plus
/// answer filling the window: the server's window, not `max_tokens`, cut
/// the answer.
fn cut_by_window(usage: &crate::llm::Usage, max_tokens: u32, window: u64) -> bool {
    usage.output_tokens > 0
        && usage.output_tokens + 16 < u64::from(max_tokens)
        && usage.context_tokens() * 100 >= window * 95
}

fn notice(stop: &StopReason, has_calls: bool, max_tokens: u32) -> Option<String> {
    match stop {
        StopReason::EndTurn | StopReason::ToolUse | StopReason::Paused => None,
        StopReason::MaxTokens if has_calls => Some(format!(
            "The model reached its output limit ({max_tokens} tokens) while writing a tool call; the call was not run and the model was told."
        )),
        StopReason::MaxTokens => Some(format!(
            "The answer was cut off at the output limit ({max_tokens} tokens). Ask the model to continue, or raise `max_tokens`."
        )),
        StopReason::Refusal => Some("The model refused to answer this request.".to_string()),
        StopReason::Other(reason) => Some(format!("The model stopped early ({reason}).")),
    }
}

fn mark_truncated(calls: &mut [ParsedCall], max_tokens: u32) {
    for (_, parsed) in calls.iter_mut() {
        if parsed.is_err() {
            *parsed = Err(format!(
                "this call was truncated: your output reached the limit of {max_tokens} tokens before its arguments were complete, so it was not run. Make the call again with less content (for a large file, write it in several smaller edits)."
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::turn_context::PendingCall;

    #[test]
    fn a_truncated_call_is_reported_as_truncated() {
        let mut calls: Vec<ParsedCall> = vec![
            (PendingCall::default(), Err("not valid JSON".into())),
            (PendingCall::default(), Ok(serde_json::json!({}))),
        ];
        mark_truncated(&mut calls, 100);
        assert!(calls[0].1.as_ref().unwrap_err().contains("truncated"));
        assert!(calls[1].1.is_ok());
        assert!(
            notice(&StopReason::Refusal, false, 1)
                .unwrap()
                .contains("refused")
        );
        assert!(
            notice(&StopReason::MaxTokens, false, 9)
                .unwrap()
                .contains("cut off")
        );
        assert!(notice(&StopReason::EndTurn, false, 9).is_none());
        let short = crate::llm::Usage {
            input_tokens: 7_892,
            output_tokens: 300,
            ..Default::default()
        };
        assert!(
            cut_by_window(&short, 2048, 8192),
            "300 of 2048, window full"
        );
        assert!(
            !cut_by_window(&short, 2048, 32_768),
            "the window is not full"
        );
        let full = crate::llm::Usage {
            input_tokens: 6_144,
            output_tokens: 2048,
            ..Default::default()
        };
        assert!(!cut_by_window(&full, 2048, 8192), "the output limit cut it");
    }
}
