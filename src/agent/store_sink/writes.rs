//! The store writer's two larger writes: a finished tool call and a
//! complete message.

use std::time::Instant;

use super::{Writer, stored_display};
use crate::conversation::Role;
use crate::store::{MessageMeta, StoreError, ToolRun};

impl Writer {
    /// Records a finished call with its own run time.
    pub(super) fn tool_finished(
        &mut self,
        call_id: String,
        status: crate::conversation::ToolStatus,
        display: Option<&crate::tools::ToolDisplay>,
        at: Instant,
    ) -> Result<(), StoreError> {
        let elapsed_ms = self
            .started
            .remove(&call_id)
            .map(|t| at.saturating_duration_since(t).as_millis() as u64);
        let id = self.ensure_session()?;
        self.store.record_tool_run(
            &id,
            &ToolRun {
                call_id,
                turn: self.turn,
                status,
                display: stored_display(display),
                elapsed_ms,
            },
        )
    }

    /// A complete message: the row its finished parts were kept in is
    /// completed, or a new row is written.
    pub(super) fn message_added(
        &mut self,
        message: crate::conversation::Message,
    ) -> Result<(), StoreError> {
        let id = self.ensure_session()?;
        let mut meta = MessageMeta {
            turn: self.turn,
            ..MessageMeta::default()
        };
        if message.role == Role::Assistant {
            meta.model = Some(self.info.model.clone());
            if let Some((usage, cost)) = self.pending_usage {
                meta.usage = Some(usage);
                meta.cost = cost;
            }
        }
        // State changes only once the write went in, so a refused
        // write tried again later does the same thing.
        match self.partial {
            // Complete the row its finished parts were saved in.
            Some((mid, role)) if role == message.role => {
                self.store.update_message(mid, &message)?;
                if let Some(usage) = &meta.usage {
                    self.store.record_usage(mid, usage, meta.cost)?;
                }
            }
            stale => {
                self.drop_partial(stale)?;
                self.partial = None;
                let mid = self.store.append_message(&id, &message, &meta)?;
                self.ids.push((mid, self.turn));
            }
        }
        self.partial = None;
        if message.role == Role::Assistant {
            self.pending_usage = None;
        }
        Ok(())
    }
}
