//! `!cmd` at the prompt: the person's own command, run as the `bash` tool
//! through the same gate and sandbox as the model's (a dangerous pattern
//! is still blocked, a command that needs more still asks), shown as a
//! command pane, and its output attached to the next prompt as context.

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::turn_context::PendingCall;
use super::{Agent, while_busy};
use crate::conversation::{ATTACHED_TAG, Part, result_text};
use crate::protocol::AgentCommand;

/// The most of a command's output carried to the model.
const MAX_CONTEXT_CHARS: usize = 30_000;

impl Agent {
    /// Runs the person's command; false when the agent must stop.
    pub(crate) async fn run_shell(
        &mut self,
        command: String,
        rx: &mut mpsc::UnboundedReceiver<AgentCommand>,
    ) -> bool {
        let cancel = CancellationToken::new();
        let ctx = self.turn_context(cancel.clone());
        self.shell_runs += 1;
        let call = PendingCall {
            id: format!("shell-{}-{}", self.turn, self.shell_runs),
            name: "bash".into(),
            args: json!({ "command": command }).to_string(),
        };
        let input = json!({ "command": command });
        let fut = super::calls::execute(&ctx, vec![(call, Ok(input))]);
        tokio::pin!(fut);
        let mut keep_running = true;
        let parts = loop {
            tokio::select! {
                parts = &mut fut => break parts,
                cmd = rx.recv(), if keep_running => {
                    keep_running &= while_busy(cmd, &cancel, &mut self.queue, &self.shared);
                }
            }
        };
        if let Some(Part::ToolResult {
            content, is_error, ..
        }) = parts.into_iter().next()
        {
            let note = context_note(&command, &result_text(&content), is_error);
            self.pending_note = Some(match self.pending_note.take() {
                Some(earlier) => format!("{earlier}\n\n{note}"),
                None => note,
            });
        }
        keep_running
    }
}

/// What the model reads with the next prompt: the command and its output,
/// marked as attached context (not the person's words).
fn context_note(command: &str, output: &str, failed: bool) -> String {
    let output = crate::text::truncate_middle(output, MAX_CONTEXT_CHARS);
    let how = if failed { " (it failed)" } else { "" };
    format!(
        "{ATTACHED_TAG}shell=\"{}\">\nThe person ran this command themselves{how}; its output is context for the next prompt:\n$ {command}\n{output}\n</attached>",
        command.replace('"', "'")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_is_attached_context_not_the_persons_words() {
        let note = context_note("ls", "a.rs\nb.rs", false);
        let m = crate::conversation::Message {
            role: crate::conversation::Role::User,
            parts: vec![
                Part::Text { text: note.clone() },
                Part::Text {
                    text: "which file?".into(),
                },
            ],
        };
        assert_eq!(m.text(), "which file?");
        assert!(note.contains("$ ls\na.rs\nb.rs"), "{note}");
        assert!(context_note("false", "", true).contains("(it failed)"));
    }
}
