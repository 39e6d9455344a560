//! `todos`: the model's working checklist for the session.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::state::{Todo, TodoStatus};
use super::{Tool, ToolContext, ToolOutput};

pub struct TodosTool;

fn parse(input: &Value) -> Result<Vec<Todo>, String> {
    let list = match input.get("todos") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err("`todos` must be an array of {content, status}".into()),
        None => return Err("missing required parameter `todos`".into()),
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value::<Todo>(v.clone()).map_err(|e| {
                format!(
                    "todo {}: {e}; each item needs `content` (string) and `status` (pending, in_progress or completed)",
                    i + 1
                )
            })
        })
        .collect()
}

/// The checklist a conversation left: the last `todos` call that parses
/// (each call replaces the whole list). Empty when there was none.
pub fn latest(messages: &[crate::conversation::Message]) -> Vec<Todo> {
    messages
        .iter()
        .rev()
        .flat_map(|m| m.parts.iter().rev())
        .find_map(|p| match p {
            crate::conversation::Part::ToolCall { name, input, .. } if name == "todos" => {
                parse(input).ok()
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// The list as the model and the transcript see it.
pub fn render(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "The todo list is empty.".into();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut out = format!("Todos ({done}/{} done):", todos.len());
    for t in todos {
        let mark = match t.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("\n{mark} {}", t.content));
    }
    out
}

#[async_trait]
impl Tool for TodosTool {
    fn name(&self) -> &str {
        "todos"
    }
    fn description(&self) -> &str {
        include_str!("../../assets/tools/todos.md")
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The complete list, replacing the previous one.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {
                                "type": "string",
                                "description": "What the step is, in a few words."
                            },
                            "status": {
                                "type": "string",
                                "enum": ["pending", "in_progress", "completed"],
                                "description": "pending, in_progress (one at a time) or completed."
                            }
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summary(&self, input: &Value) -> String {
        let n = input
            .get("todos")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        format!("todos ({n} items)")
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        match parse(&input) {
            Ok(todos) => {
                let text = render(&todos);
                ctx.session.set_todos(todos);
                ToolOutput::text(text)
            }
            Err(e) => ToolOutput::error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replaces_the_session_list() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let out = TodosTool
            .run(
                json!({"todos": [
                    {"content": "write tests", "status": "completed"},
                    {"content": "fix bug", "status": "in_progress"}
                ]}),
                &ctx,
            )
            .await;
        assert!(!out.is_error);
        assert!(out.text_content().contains("[x] write tests"));
        assert!(out.text_content().contains("(1/2 done)"));
        let todos = ctx.session.todos();
        assert_eq!(todos.len(), 2);
        assert_eq!(todos[1].status, TodoStatus::InProgress);

        let bad = TodosTool
            .run(
                json!({"todos": [{"content": "x", "status": "doing"}]}),
                &ctx,
            )
            .await;
        assert!(bad.is_error);
        assert_eq!(ctx.session.todos().len(), 2);
    }
}
