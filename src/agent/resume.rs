//! A stored session taken up again. When it was compacted, the agent
//! continues from the latest summary and the turns after it, exactly as it
//! would have had it never quit; the replaced messages are kept aside so a
//! rewind to before the compaction still finds them.

use tokio_util::sync::CancellationToken;

use super::{Agent, count_prompts};
use crate::conversation::{Message, Part};
use crate::protocol::{AgentEvent, CompactionMark, NoticeLevel, StoredSettings};
use crate::store::LostFile;
use crate::tools::state::{FileVersion, lock};

/// What the store kept of a session, as `AgentCommand::LoadHistory` brings it.
pub(super) struct Stored {
    pub messages: Vec<Message>,
    pub versions: Vec<FileVersion>,
    pub lost: Vec<LostFile>,
    pub cost: Option<f64>,
    pub compacted: Option<CompactionMark>,
    /// The note the session still owes the model (an undo's).
    pub note: Option<String>,
}

impl Agent {
    pub(super) fn load_history(
        &mut self,
        stored: Stored,
        session_id: Option<crate::store::SessionId>,
        read_only: bool,
    ) {
        let Stored {
            mut messages,
            versions,
            lost,
            cost,
            compacted,
            note,
        } = stored;
        crate::conversation::repair_tool_pairs(&mut messages);
        // Turns are numbered over the whole history, summarised or not.
        self.turn = versions
            .iter()
            .map(|v| v.turn)
            .max()
            .unwrap_or(0)
            .max(count_prompts(&messages));
        self.replace_session();
        self.session
            .set_todos(crate::tools::todos::latest(&messages));
        for v in versions {
            self.session.set_turn(v.turn);
            self.session.record_version(&v.path, v.before);
        }
        for l in lost {
            self.session.set_turn(l.turn);
            self.session.record_unrestorable(&l.path, &l.why);
        }
        // These came from the store; they are not new.
        self.session.take_unsent();
        self.session.take_unsent_lost();
        if let Some(sink) = &self.shared.sink {
            sink.read_only(read_only);
            if let (false, Some(id)) = (read_only, &session_id) {
                sink.resume(id);
            }
        }
        // Session totals continue from what the session cost.
        self.cost = cost;
        self.pending_note = None;
        let (earlier, working) = split_at_compaction(messages, compacted.as_ref());
        if let Some(c) = compacted.as_ref().filter(|_| working.is_empty()) {
            // Nothing after the summary yet: it goes with the next prompt.
            self.pending_note = Some(crate::context::summary_note(&c.summary));
        }
        if let Some(note) = note {
            self.pending_note = Some(match self.pending_note.take() {
                Some(summary) => format!("{summary}\n\n{note}"),
                None => note,
            });
        }
        *lock(&self.shared.earlier) = earlier;
        self.messages = working;
        // What was loaded before the save is in the conversation already.
        *lock(&self.shared.memory) = super::memory::loaded_in(&self.messages, &self.opts.workspace);
        self.tracker.reset();
        let ctx = self.turn_context(CancellationToken::new());
        super::limits::report_context(&ctx, &self.messages, self.cost);
        // Files viewed in an earlier run may have changed since.
        self.session.forget_views();
    }

    /// A resumed session goes on with the model and mode it last used,
    /// unless the command line named others; each change is said.
    pub(super) fn restore_settings(&mut self, settings: Option<StoredSettings>) {
        let Some(st) = settings else {
            return;
        };
        if self.opts.pinned.model && st.model != self.opts.model {
            // The command line's choice is what the session now runs with.
            self.shared.emit(AgentEvent::ModelChanged {
                provider: self.opts.provider_name.clone(),
                model: self.opts.model.clone(),
            });
        } else if !st.model.is_empty() && st.model != self.opts.model {
            if st.provider == self.opts.provider_name {
                self.set_model(None, st.model.clone());
                self.announce_effort();
            } else {
                self.shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Info,
                    text: format!(
                        "This session last used {} on `{}`; it goes on with {} on `{}` \
                         (cairn --provider {} --model {} to go back to it).",
                        st.model,
                        st.provider,
                        self.opts.model,
                        self.opts.provider_name,
                        st.provider,
                        st.model
                    ),
                });
            }
        }
        let current = lock(&self.shared.gate).mode();
        let next = st.resumed_mode(current, self.opts.pinned.mode);
        match st.mode {
            _ if self.opts.pinned.mode && st.mode != Some(current) => {
                self.shared.emit(AgentEvent::ModeChanged(current));
            }
            // Never looser than the person's default without asking anew:
            // `--mode auto` lasts its own run.
            Some(stored) if stored != current && next == current => {
                self.shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Info,
                    text: format!(
                        "This session last ran in {} mode; it goes on in {} (/mode {} to switch back).",
                        stored.as_str(),
                        current.as_str(),
                        stored.as_str()
                    ),
                });
            }
            _ if next != current => {
                self.set_mode(next);
                self.shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Info,
                    text: format!(
                        "Mode: {} (as the session last ran; --mode to choose another).",
                        next.as_str()
                    ),
                });
            }
            _ => {}
        }
    }

    /// The whole conversation, the messages compactions replaced included
    /// and their summaries taken out: what a rewind to before a compaction
    /// returns to.
    pub(super) fn full_history(&self) -> Vec<Message> {
        let mut all = lock(&self.shared.earlier).clone();
        all.extend(without_summary(&self.messages));
        all
    }
}

/// The messages a compaction replaced, and the working history: the summary
/// put before the first message it kept.
fn split_at_compaction(
    messages: Vec<Message>,
    compacted: Option<&CompactionMark>,
) -> (Vec<Message>, Vec<Message>) {
    let Some(c) = compacted else {
        return (Vec::new(), messages);
    };
    let cut = c.first_kept.min(messages.len());
    let mut earlier = messages;
    let kept = earlier.split_off(cut);
    if kept.is_empty() {
        return (earlier, Vec::new());
    }
    (earlier, crate::context::compacted(&c.summary, &kept))
}

/// `messages` with the summary a compaction put in front taken out.
pub(super) fn without_summary(messages: &[Message]) -> Vec<Message> {
    let mut out = messages.to_vec();
    if let Some(first) = out.first_mut() {
        first.parts.retain(
            |p| !matches!(p, Part::Text { text } if text.starts_with(crate::context::SUMMARY_TAG)),
        );
        if first.parts.is_empty() {
            out.remove(0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_working_history_is_the_summary_and_the_kept_turns() {
        let messages: Vec<Message> = (1..=4)
            .flat_map(|i| {
                [
                    Message::user_text(format!("prompt {i}")),
                    Message::assistant_text(format!("answer {i}")),
                ]
            })
            .collect();
        let mark = CompactionMark {
            summary: "They asked four things.".into(),
            first_kept: 4,
            at: 6,
            ..Default::default()
        };
        let (earlier, working) = split_at_compaction(messages.clone(), Some(&mark));
        assert_eq!(earlier, messages[..4]);
        assert_eq!(working.len(), 4);
        assert!(
            matches!(&working[0].parts[0], Part::Text { text } if text.starts_with(crate::context::SUMMARY_TAG))
        );
        assert_eq!(working[0].text().lines().last(), Some("prompt 3"));
        let mut whole = earlier.clone();
        whole.extend(without_summary(&working));
        assert_eq!(
            whole, messages,
            "taking the summary out gives the history back"
        );
    }
}
