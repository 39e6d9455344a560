//! Plan mode's end: `exit_plan_mode` shows the model's plan to the person,
//! who approves it (the mode becomes smart or auto, and the plan's steps
//! the todo list) or sends it back with a note; headless, the plan is
//! printed and nothing is carried out.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::Shared;
use crate::permission::Mode;
use crate::protocol::{AgentEvent, Decision};
use crate::tools::state::{Todo, TodoStatus, lock};
use crate::tools::{Tool, ToolContext, ToolOutput};

const DESCRIPTION: &str = include_str!("../../assets/tools/exit_plan_mode.md");

pub(crate) struct ExitPlanTool {
    shared: Arc<Shared>,
    interactive: bool,
}

impl ExitPlanTool {
    pub fn new(shared: Arc<Shared>, interactive: bool) -> ExitPlanTool {
        ExitPlanTool {
            shared,
            interactive,
        }
    }

    async fn ask(&self, plan: &str, ctx: &ToolContext) -> Option<Decision> {
        let id = self.shared.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        self.shared.emit(AgentEvent::PlanProposed {
            id,
            plan: plan.to_string(),
        });
        let decision = tokio::select! {
            d = rx => d.ok(),
            _ = ctx.cancel.cancelled() => None,
        };
        lock(&self.shared.pending).remove(&id);
        self.shared.emit(AgentEvent::PermissionResolved { id });
        decision
    }
}

#[async_trait]
impl Tool for ExitPlanTool {
    fn name(&self) -> &str {
        "exit_plan_mode"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "string",
                    "description": "The plan, in markdown, with numbered steps",
                },
            },
            "required": ["plan"],
            "additionalProperties": false,
        })
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summary(&self, _input: &Value) -> String {
        "plan for approval".into()
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        if lock(&self.shared.gate).mode() != Mode::Plan {
            return ToolOutput::error("You are not in plan mode; carry on with the task.");
        }
        let plan = match crate::tools::str_arg(&input, "plan") {
            Ok(p) if !p.trim().is_empty() => p.trim().to_string(),
            Ok(_) => return ToolOutput::error("`plan` is empty: write the plan in markdown."),
            Err(e) => return ToolOutput::error(e),
        };
        if !self.interactive {
            self.shared.emit(AgentEvent::PlanProposed { id: 0, plan });
            return ToolOutput::text(
                "The plan was printed for the person. cairn runs headless in plan mode, so nothing is carried out: end your turn now with no further calls.",
            );
        }
        match self.ask(&plan, ctx).await {
            Some(Decision::ApprovePlan { mode }) => self.approved(&plan, mode, ctx),
            Some(Decision::Deny { reason }) => {
                let note = reason
                    .filter(|r| !r.trim().is_empty())
                    .map(|r| format!(" Their note: {}", r.trim()))
                    .unwrap_or_default();
                ToolOutput::error(format!(
                    "The person did not approve the plan and asks you to keep planning (you are still in plan mode).{note} Revise the plan and call exit_plan_mode again."
                ))
            }
            Some(_) | None => {
                ToolOutput::error("The plan was not approved: the turn was cancelled.")
            }
        }
    }
}

impl ExitPlanTool {
    fn approved(&self, plan: &str, mode: Mode, ctx: &ToolContext) -> ToolOutput {
        let mode = if matches!(mode, Mode::Plan | Mode::Chat) {
            Mode::Smart
        } else {
            mode
        };
        lock(&self.shared.gate).set_mode(mode);
        self.shared.emit(AgentEvent::ModeChanged(mode));
        let todos = steps(plan);
        ctx.session.set_todos(todos.clone());
        self.shared.emit(AgentEvent::Todos(todos));
        ToolOutput::text(format!(
            "The person approved the plan. You are in {mode} mode now: carry the plan out step by step, keeping the todo list (the plan's steps) up to date with the todos tool."
        ))
    }
}

/// The plan's steps as todos: its list items (numbered or not, checkboxes
/// removed), else its first line.
pub(crate) fn steps(plan: &str) -> Vec<Todo> {
    let mut out: Vec<Todo> = plan
        .lines()
        // Nested items are details of a step, not steps.
        .filter(|l| !l.starts_with("  ") && !l.starts_with('\t'))
        .filter_map(|l| list_item(l.trim_start()))
        .map(|content| Todo {
            content,
            status: TodoStatus::Pending,
        })
        .collect();
    if out.is_empty() {
        let first = plan
            .lines()
            .map(|l| l.trim().trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or("Carry out the plan");
        out.push(Todo {
            content: crate::text::truncate_chars(first, 200),
            status: TodoStatus::Pending,
        });
    }
    out
}

fn list_item(line: &str) -> Option<String> {
    let rest = if let Some(r) = line.strip_prefix("- ").or(line.strip_prefix("* ")) {
        r
    } else {
        let digits = line.chars().take_while(|c| c.is_ascii_digit()).count();
        let r = line.get(digits..)?;
        if digits == 0 {
            return None;
        }
        r.strip_prefix(". ").or(r.strip_prefix(") "))?
    };
    let rest = rest
        .trim_start_matches("[ ] ")
        .trim_start_matches("[x] ")
        .trim();
    (!rest.is_empty()).then(|| crate::text::truncate_chars(rest, 200))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plans_top_level_list_items_become_the_todos() {
        let plan = "# Plan\n\nWhy: x.\n\n1. Add `parse` to src/a.rs\n   - detail\n2) Call it from main\n- [ ] Run the tests\n";
        let todos: Vec<String> = steps(plan).into_iter().map(|t| t.content).collect();
        assert_eq!(
            todos,
            [
                "Add `parse` to src/a.rs",
                "Call it from main",
                "Run the tests"
            ]
        );
        let prose = steps("## Rename the flag\nthen done");
        assert_eq!(prose[0].content, "Rename the flag");
    }
}
