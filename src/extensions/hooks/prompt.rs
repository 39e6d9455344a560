//! Prompt hooks (`"type": "prompt"`, as Claude Code writes them): the
//! hook's text, with `$ARGUMENTS` replaced by the event's JSON (added at
//! the end when the text has no `$ARGUMENTS`), goes to a model in one
//! small request without tools; the model answers `{"ok": true}` or
//! `{"ok": false, "reason": "…"}`. An answer of `ok: false` counts as a
//! command hook's exit 2 (it blocks where the event can be blocked, and
//! the reason goes to the model or the person); a failed request or an
//! answer that is not that JSON is a warning and blocks nothing.
//!
//! The hooks service knows no provider: the agent hands it an [`Asker`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Hook, HookRun};

/// What a prompt hook sends: the text and, when the hook names one, the
/// model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub text: String,
    pub model: Option<String>,
}

/// Sends an [`Ask`] to the session's provider; the model's whole answer.
pub type Asker =
    Arc<dyn Fn(Ask) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> + Send + Sync>;

/// How long a prompt hook may take unless it says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most of the event's JSON put into the prompt.
const MAX_INPUT: usize = 64 * 1024;

/// The text sent for `prompt` with the event `input`.
pub fn fill(prompt: &str, input: &Value) -> String {
    let json = serde_json::to_string(input).unwrap_or_default();
    let json = crate::text::take_chars(&json, MAX_INPUT);
    let mut text = if prompt.contains("$ARGUMENTS") {
        prompt.replace("$ARGUMENTS", &json)
    } else {
        format!("{prompt}\n\n{json}")
    };
    text.push_str(
        "\n\nAnswer with JSON only: {\"ok\": true} to let this go on, or \
         {\"ok\": false, \"reason\": \"why\"} to stop it.",
    );
    text
}

/// The verdict in a model's answer: `Ok((ok, reason))`, or why it is not
/// one. The JSON may sit in a code fence or among words.
pub fn verdict(answer: &str) -> Result<(bool, String), String> {
    let start = answer.find('{');
    let end = answer.rfind('}');
    let (Some(start), Some(end)) = (start, end) else {
        return Err(format!(
            "the model did not answer with JSON: {}",
            clip(answer)
        ));
    };
    let value: Value = (answer.get(start..=end))
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or_else(|| format!("the model's answer is not valid JSON: {}", clip(answer)))?;
    let ok = value.get("ok").and_then(Value::as_bool).ok_or_else(|| {
        format!(
            "the model's answer has no true/false `ok`: {}",
            clip(answer)
        )
    })?;
    let reason = value
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok((ok, reason))
}

fn clip(s: &str) -> String {
    crate::text::take_chars(s.trim(), 200)
}

/// Runs one prompt hook: its answer as a command hook's would be.
pub async fn run(
    asker: Option<Asker>,
    index: usize,
    hook: &Hook,
    model: Option<String>,
    input: &Value,
    cancel: &CancellationToken,
) -> HookRun {
    let start = Instant::now();
    let mut run = HookRun {
        index,
        ..HookRun::default()
    };
    let Some(asker) = asker else {
        run.failure = Some("no model to ask in this session".into());
        return run;
    };
    let ask = Ask {
        text: fill(&hook.command, input),
        model,
    };
    tokio::select! {
        answer = asker(ask) => match answer.and_then(|a| verdict(&a)) {
            Ok((true, _)) => run.code = Some(0),
            Ok((false, reason)) => {
                run.code = Some(2);
                run.stderr = if reason.trim().is_empty() {
                    "a prompt hook said no (it gave no reason)".into()
                } else {
                    reason
                };
            }
            Err(why) => run.failure = Some(why),
        },
        _ = tokio::time::sleep(hook.timeout) => {
            run.failure = Some(format!("timed out after {} s", hook.timeout.as_secs_f64()));
        }
        _ = cancel.cancelled() => run.failure = Some("cancelled with the turn".into()),
    }
    run.duration = start.elapsed();
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_filled_in_or_added() {
        let input = serde_json::json!({"tool_name": "Bash"});
        let text = fill("Check $ARGUMENTS now", &input);
        assert!(
            text.starts_with("Check {\"tool_name\":\"Bash\"} now"),
            "{text}"
        );
        let text = fill("Check this", &input);
        assert!(text.starts_with("Check this\n\n{\"tool_name\""), "{text}");
    }

    #[test]
    fn answers_are_read_in_the_shapes_models_write_and_others_refused() {
        assert_eq!(verdict("{\"ok\": true}"), Ok((true, String::new())));
        assert_eq!(
            verdict("```json\n{\"ok\": false, \"reason\": \"tests fail\"}\n```"),
            Ok((false, "tests fail".into()))
        );
        assert!(
            verdict("sure, go ahead")
                .unwrap_err()
                .contains("did not answer with JSON")
        );
        assert!(
            verdict("{\"ok\": \"yes\"}")
                .unwrap_err()
                .contains("no true/false")
        );
        assert!(
            verdict("{ok: nope}")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}
