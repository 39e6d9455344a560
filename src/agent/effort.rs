//! `/effort` and `--effort`: the reasoning effort of the next requests,
//! told to the front end (the status line shows it), and said once when
//! the model in use does not reason, so the setting is ignored.

use super::Agent;
use crate::config::effort::Effort;
use crate::protocol::{AgentEvent, NoticeLevel};

impl Agent {
    /// What the next request asks for: the session's setting, or the
    /// model's own `[models.ID] effort`.
    pub(crate) fn effective_effort(&self) -> Option<Effort> {
        self.opts.effort.or(self.opts.model_info.effort)
    }

    pub(crate) fn set_effort(&mut self, effort: Option<Effort>) {
        self.opts.effort = effort;
        self.effort_noticed = None;
        self.announce_effort();
    }

    /// Tells the front end the effort in force, and, once per model, that
    /// a model that does not reason ignores it.
    pub(crate) fn announce_effort(&mut self) {
        let effort = self.effective_effort();
        self.shared.emit(AgentEvent::EffortChanged(effort));
        self.notice_ignored_effort();
    }

    pub(crate) fn notice_ignored_effort(&mut self) {
        let Some(effort) = self.effective_effort() else {
            return;
        };
        let info = &self.opts.model_info;
        if (info.supports_reasoning && self.opts.reasoning)
            || self.effort_noticed.as_deref() == Some(self.opts.model.as_str())
        {
            return;
        }
        self.effort_noticed = Some(self.opts.model.clone());
        let why = if self.opts.reasoning {
            "does not reason"
        } else {
            "is asked not to reason (reasoning = false)"
        };
        self.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Info,
            text: format!(
                "Effort {effort} is ignored: {} {why}. It applies again with a model that reasons \
                 (set `reasoning = true` under [models.\"{}\"] if this one does).",
                self.opts.model, self.opts.model
            ),
        });
    }
}
