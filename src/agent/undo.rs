//! Undo and rewind: what the agent does when the person takes back the
//! last turn's file changes or returns the conversation to an earlier
//! prompt. The file work itself is `tools::restore`.

use super::{Agent, AgentEvent, NoticeLevel};
use crate::conversation::{Message, Part};
use crate::tools::restore::{self, UndoPlan};
use crate::tools::state::lock;

impl Agent {
    /// The index of the prompt message of `turn` in `messages`, a history
    /// that ends with the current turn.
    fn prompt_index_in(&self, messages: &[Message], turn: u64) -> Option<usize> {
        let starts = crate::context::turn_starts(messages);
        let back = self.turn.checked_sub(turn)? as usize;
        starts.len().checked_sub(back + 1).map(|i| starts[i])
    }
    /// Where the prompt of `turn` is: in the working history, or, when a
    /// compaction replaced it (or its message carries the summary), in the
    /// whole one, which a rewind there returns to.
    fn find_prompt(&self, turn: u64) -> Option<(Option<Vec<Message>>, usize)> {
        let compacted = !lock(&self.shared.earlier).is_empty();
        if let Some(i) = self.prompt_index_in(&self.messages, turn) {
            let first = crate::context::turn_starts(&self.messages).first() == Some(&i);
            if !compacted || !first {
                return Some((None, i));
            }
        }
        if !compacted {
            return None;
        }
        let full = self.full_history();
        let i = self.prompt_index_in(&full, turn)?;
        Some((Some(full), i))
    }
    fn prompt_text(message: &Message) -> String {
        // The prompt is the last text part (notes and summaries come first).
        message
            .parts
            .iter()
            .rev()
            .find_map(|p| match p {
                Part::Text { text } if !text.starts_with(crate::context::SUMMARY_TAG) => {
                    Some(text.clone())
                }
                _ => None,
            })
            .unwrap_or_default()
    }
    pub(super) fn prepare_rewind(&self, turn: u64) {
        let Some((full, index)) = self.find_prompt(turn) else {
            self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!("Cannot rewind to turn {turn}: the session has no such turn."),
            });
            return;
        };
        let message = &full.as_deref().unwrap_or(&self.messages)[index];
        self.shared.emit(AgentEvent::RewindPlanned {
            turn,
            prompt: Self::prompt_text(message),
            files: self.with_losses(
                restore::plan_range(
                    &self.session.versions(),
                    turn,
                    self.turn,
                    &self.opts.workspace,
                ),
                turn,
                self.turn,
            ),
        });
    }
    pub(super) fn rewind(&mut self, turn: u64, restore_files: bool, fork: bool) {
        let Some((full, index)) = self.find_prompt(turn) else {
            self.prepare_rewind(turn);
            return;
        };
        if let Some(full) = full {
            // Back to before a compaction: the whole history returns.
            self.messages = full;
            lock(&self.shared.earlier).clear();
        }
        let prompt = Self::prompt_text(&self.messages[index]);
        let versions = self.session.versions();
        let (restored, failed) = if restore_files {
            let r = restore::apply_range(&versions, turn, self.turn, &self.opts.workspace);
            self.session.forget_views();
            r
        } else {
            (Vec::new(), Vec::new())
        };
        // Whether or not the files went back, the rewound turns are gone:
        // a later undo must not restore anything they recorded.
        self.session.drop_turns_from(turn);
        self.messages.truncate(index);
        crate::conversation::repair_tool_pairs(&mut self.messages);
        // Instructions loaded in the rewound turns load again when needed.
        *lock(&self.shared.memory) = super::memory::loaded_in(&self.messages, &self.opts.workspace);
        self.turn = turn - 1;
        self.tracker.reset();
        if let Some(sink) = &self.shared.sink {
            sink.rewind(turn, fork);
        }
        self.shared.emit(AgentEvent::Rewound {
            turn,
            prompt,
            fork,
            restored,
            failed,
        });
    }
    pub(super) fn prepare_undo(&self) {
        let versions = self.session.versions();
        match restore::last_turn_with_changes(&versions) {
            None => self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Info,
                text: "Nothing to undo: no turn has changed files yet.".into(),
            }),
            Some(turn) => {
                let plan = restore::plan(&versions, turn, &self.opts.workspace);
                let plan = self.with_losses(plan, turn, turn);
                self.shared.emit(AgentEvent::UndoPlanned(plan))
            }
        }
    }
    /// Names the files of turns `from..=to` that cannot be put back.
    pub(super) fn with_losses(&self, mut plan: UndoPlan, from: u64, to: u64) -> UndoPlan {
        for (path, why) in self.session.unrestorable(from, to) {
            let shown = path
                .strip_prefix(&self.opts.workspace)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| path.display().to_string());
            plan.unrestorable.push((shown, why));
        }
        plan
    }
    pub(super) fn confirm_undo(&mut self, turn: u64) {
        let versions = self.session.take_versions_of_turn(turn);
        if versions.is_empty() {
            self.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!("Turn {turn} has no file changes left to undo."),
            });
            return;
        }
        let (restored, removed, failed) = restore::apply(&versions, turn, &self.opts.workspace);
        // The restored files differ from what the model last saw.
        self.session.forget_views();
        if !restored.is_empty() || !removed.is_empty() {
            // Marked as attached context: never the person's words, a
            // title or the prompt shown.
            let note = format!(
                "{}note=\"undo\">\nThe person undid the file changes of an earlier turn; these files are back to how they were before it (absent if it created them): {}. View them again before editing.\n</attached>",
                crate::conversation::ATTACHED_TAG,
                restored
                    .iter()
                    .chain(&removed)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if let Some(sink) = &self.shared.sink {
                sink.pending_note(Some(&note));
            }
            self.pending_note = Some(note);
        }
        self.shared.emit(AgentEvent::UndoApplied {
            turn,
            restored,
            removed,
            failed,
        });
    }
}
