//! A stored session told again as `session/update`s, for `session/load`:
//! the person's prompts, the answers and reasoning, and each tool call as
//! it ended (status, diff or output), from what the store kept, the
//! provider's searches and the sources answers cited; then the
//! last checklist as a plan and the title.

use std::path::Path;

use agent_client_protocol::v1::schema as acp;

use super::updates;
use crate::conversation::{Part, Role};
use crate::protocol::LoadedSession;

pub fn updates(loaded: &LoadedSession, cwd: &Path) -> Vec<acp::SessionUpdate> {
    use acp::SessionUpdate as U;
    let mut out = Vec::new();
    let chunk = |t: &str| acp::ContentChunk::new(updates::text(t));
    let mut searches = 0;
    for message in &loaded.messages {
        for part in &message.parts {
            match (part, message.role) {
                (Part::Text { text }, Role::User) => out.push(U::UserMessageChunk(chunk(text))),
                (Part::Text { text }, Role::Assistant) => {
                    out.push(U::AgentMessageChunk(chunk(text)))
                }
                (Part::Reasoning { text, .. }, _) => out.push(U::AgentThoughtChunk(chunk(text))),
                (Part::ToolCall { id, name, input }, _) => {
                    out.push(U::ToolCall(call(loaded, cwd, id, name, input)))
                }
                (Part::WebSearch(search), _) => {
                    searches += 1;
                    out.push(U::ToolCall(updates::web_search(search, searches)))
                }
                (Part::Citations { sources }, _) if !sources.is_empty() => {
                    out.push(U::AgentMessageChunk(chunk(&updates::citations(sources))))
                }
                _ => {}
            }
        }
    }
    // What the interface shows beside the conversation: its checklist and title.
    let todos = crate::tools::todos::latest(&loaded.messages);
    if !todos.is_empty() {
        out.push(U::Plan(updates::plan(&todos)));
    }
    if let Some(title) = loaded.summary.title.clone().filter(|t| !t.is_empty()) {
        out.push(U::SessionInfoUpdate(
            acp::SessionInfoUpdate::new().title(title),
        ));
    }
    out
}

fn call(
    loaded: &LoadedSession,
    cwd: &Path,
    id: &str,
    name: &str,
    input: &serde_json::Value,
) -> acp::ToolCall {
    let stored = loaded.runs.calls.get(id);
    let title = stored
        .map(|c| c.summary.clone())
        .unwrap_or_else(|| name.to_string());
    let mut call = acp::ToolCall::new(id.to_string(), title)
        .kind(updates::kind_of(name))
        .locations(updates::locations(cwd, input))
        .raw_input(input.clone());
    call = match stored {
        Some(c) => call
            .status(updates::status_of(c.status))
            .content(updates::finished_content(
                cwd,
                &c.output,
                c.display.as_ref(),
            )),
        // No result was kept (the run was cut short): it did not finish.
        None => call.status(acp::ToolCallStatus::Failed),
    };
    call
}
