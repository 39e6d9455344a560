//! Where a sub-agent's events go: tagged with the call that started it, to
//! its parent (which may tag them again, for a sub-agent's sub-agent), and
//! a live line of what it is doing into the parent's pane for that call.
//! Its dialogs go untagged, so the person answers them where they answer
//! the parent's.

use std::sync::{Arc, Mutex};

use crate::agent::Shared;
use crate::protocol::AgentEvent;
use crate::tools::state::lock;

pub(crate) struct Route {
    parent: Arc<Shared>,
    call_id: String,
    live: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    /// What it does now (its latest call).
    doing: String,
    tokens: u64,
}

impl Route {
    pub fn new(parent: Arc<Shared>, call_id: &str, name: &str) -> Route {
        Route {
            parent,
            call_id: call_id.to_string(),
            live: Mutex::new(Live {
                doing: format!("{name}: starting"),
                tokens: 0,
            }),
        }
    }

    pub fn forward(&self, event: AgentEvent) {
        match &event {
            AgentEvent::PermissionRequested { .. }
            | AgentEvent::PermissionResolved { .. }
            | AgentEvent::EditCheck { .. }
            | AgentEvent::InputRequested { .. }
            | AgentEvent::InputResolved { .. }
            | AgentEvent::PlanProposed { .. } => return self.parent.emit(event),
            AgentEvent::ToolCallStarted { summary, .. } => {
                lock(&self.live).doing = summary.clone();
                self.show();
            }
            AgentEvent::ResponseStarted => {
                lock(&self.live).doing = "thinking".into();
                self.show();
            }
            AgentEvent::Usage { usage, .. } => {
                lock(&self.live).tokens += usage.input_tokens + usage.output_tokens;
                self.show();
            }
            _ => {}
        }
        self.parent.emit(AgentEvent::Subagent {
            call_id: self.call_id.clone(),
            event: Box::new(event),
        });
    }

    /// The live line of the parent's pane for this sub-agent.
    fn show(&self) {
        let message = {
            let live = lock(&self.live);
            if live.tokens == 0 {
                live.doing.clone()
            } else {
                format!("{} · {} tokens", live.doing, live.tokens)
            }
        };
        self.parent.emit(AgentEvent::ToolCallProgress {
            call_id: self.call_id.clone(),
            message,
        });
    }
}
