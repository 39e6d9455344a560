//! One tool of an MCP server, offered to the model as `mcp__<server>__<tool>`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, ServerResult,
    Tool as McpToolDef,
};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;

use super::content::render;
use super::slot::{Live, Slot};
use crate::tools::snapshot::{Snapshot, record_changes};
use crate::tools::walk::blocking;
use crate::tools::{Tool, ToolContext, ToolOutput};

/// How long a call whose connection dropped waits to learn why.
const CRASH_WAIT: Duration = Duration::from_secs(3);
/// Arguments longer than this are cut in the one-line summary.
const SUMMARY_ARGS: usize = 60;

pub struct McpTool {
    name: String,
    /// The server's own name for the tool, used on the wire.
    tool: String,
    description: String,
    schema: Value,
    /// The server's hints about the tool, as shown in the approval dialog.
    hints: Vec<String>,
    /// Marked read-only by the server, and the config lets that count.
    read_only: bool,
    slot: Arc<Slot>,
}

impl McpTool {
    pub(crate) fn new(slot: Arc<Slot>, def: &McpToolDef) -> Self {
        let description = def
            .description
            .as_deref()
            .or(def.title.as_deref())
            .map(str::to_string)
            .unwrap_or_else(|| format!("Tool `{}` of MCP server `{}`.", def.name, slot.name));
        let notes = def.annotations.as_ref();
        let read_only_hint = notes.and_then(|a| a.read_only_hint) == Some(true);
        McpTool {
            name: super::tool_name(&slot.name, &def.name),
            tool: def.name.to_string(),
            description,
            schema: object_schema(&def.input_schema),
            hints: hints(def),
            read_only: read_only_hint && slot.config.trust_read_only_hints,
            slot,
        }
    }

    /// The configured name of the server this tool belongs to.
    pub fn server(&self) -> &str {
        &self.slot.name
    }

    fn error(&self, what: impl std::fmt::Display) -> ToolOutput {
        ToolOutput::error(format!(
            "`{}` on MCP server `{}` failed: {what}",
            self.tool, self.slot.name
        ))
    }

    /// The answer when the call could not complete because the connection
    /// went away: the server's fate if it is known by now.
    async fn connection_lost(&self, e: ServiceError) -> ToolOutput {
        let deadline = tokio::time::Instant::now() + CRASH_WAIT;
        loop {
            if let Some(why) = self.slot.failure() {
                return ToolOutput::error(why);
            }
            if tokio::time::Instant::now() >= deadline {
                return self.error(format!(
                    "the connection to the server failed ({})",
                    super::errors::service_failure(&e)
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn send_cancel(&self, live: &Live, id: rmcp::model::RequestId, reason: &str) {
        let note = CancelledNotificationParam::new(Some(id), Some(reason.to_string()));
        let _ =
            tokio::time::timeout(Duration::from_secs(1), live.peer.notify_cancelled(note)).await;
    }
}

enum Outcome {
    Answered(Box<Result<ServerResult, ServiceError>>),
    TimedOut,
    Cancelled,
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> Value {
        self.schema.clone()
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    async fn preview(
        &self,
        input: &Value,
        _ctx: &ToolContext,
    ) -> Result<Option<crate::tools::Preview>, String> {
        Ok(Some(crate::tools::Preview::Mcp {
            server: self.slot.name.clone(),
            tool: self.tool.clone(),
            description: self.description.clone(),
            hints: self.hints.clone(),
            input: input.clone(),
        }))
    }

    fn summary(&self, input: &Value) -> String {
        let args = short_args(input);
        if args.is_empty() {
            format!("mcp {}/{}", self.slot.name, self.tool)
        } else {
            format!("mcp {}/{} {args}", self.slot.name, self.tool)
        }
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("cancelled by the user");
        }
        if let Some(why) = self.slot.outside_changed() {
            return ToolOutput::error(format!("MCP server `{}` {why}", self.slot.name));
        }
        let live = match self.slot.live() {
            Ok(live) => live,
            Err(why) => return ToolOutput::error(why),
        };
        let mut params = CallToolRequestParams::new(self.tool.clone());
        match input {
            Value::Object(args) => params = params.with_arguments(args),
            Value::Null => {}
            other => {
                return self.error(format!("the arguments must be a JSON object, got {other}"));
            }
        }
        // The server may change files in the workspace (a filesystem
        // server does); what it changed is kept for undo, as for `bash`.
        let root = ctx.workspace.clone();
        let before = blocking(move || Snapshot::take(&root)).await.ok();
        let output = self.call(&live, params, ctx).await;
        record_changes(ctx, before, "changed by an MCP tool").await;
        output
    }
}

impl McpTool {
    async fn call(
        &self,
        live: &Live,
        params: CallToolRequestParams,
        ctx: &ToolContext,
    ) -> ToolOutput {
        let request = ClientRequest::CallToolRequest(Request::new(params));
        let handle = match live
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return self.connection_lost(e).await,
        };
        let id = handle.id.clone();
        let token = handle.progress_token.clone();
        if let Some(sink) = &ctx.progress {
            live.progress.register(token.clone(), sink.clone());
        }
        let limit = self.slot.tool_timeout();
        let outcome = tokio::select! {
            r = handle.await_response() => Outcome::Answered(Box::new(r)),
            _ = tokio::time::sleep(limit) => Outcome::TimedOut,
            _ = ctx.cancel.cancelled() => Outcome::Cancelled,
        };
        live.progress.unregister(&token);
        match outcome {
            Outcome::Answered(answer) => {
                settle_list_changes(live).await;
                self.answer(*answer, ctx.supports_images).await
            }
            Outcome::TimedOut => {
                self.send_cancel(live, id, "timed out").await;
                self.error(format!(
                    "no answer within {} s, so the call was cancelled. The server may still be \
                     working; retry with a smaller request, or raise `tool_timeout_secs` for this server",
                    limit.as_secs()
                ))
            }
            Outcome::Cancelled => {
                self.send_cancel(live, id, "cancelled by the user").await;
                ToolOutput::error("cancelled by the user")
            }
        }
    }
}

/// How long after a call's answer a `tools/list_changed` the server sent
/// before it may still be on its way through the client's handler.
const LIST_CHANGE_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// A server that can change its tools sends `tools/list_changed` before the
/// answer of the call that changed them, but the client handles the two on
/// different tasks: waiting a moment lets the notice mark the server as
/// re-listing before the next model request checks, so that request offers
/// the new tools (mid-turn included) instead of racing them.
async fn settle_list_changes(live: &Live) {
    let can_change = live.peer.peer_info().is_some_and(|i| {
        i.capabilities
            .tools
            .as_ref()
            .is_some_and(|t| t.list_changed == Some(true))
    });
    if can_change {
        tokio::time::sleep(LIST_CHANGE_SETTLE).await;
    }
}

impl McpTool {
    async fn answer(
        &self,
        answer: Result<ServerResult, ServiceError>,
        supports_images: bool,
    ) -> ToolOutput {
        match answer {
            Ok(ServerResult::CallToolResult(result)) => render(result, supports_images),
            Ok(_) => self.error(
                "the server answered with something other than a tool result \
                 (cairn does not support MCP tasks or input requests yet)",
            ),
            // cairn's own answer for a message too large to read.
            Err(ServiceError::McpError(e)) if e.code.0 == super::oversize::CODE => {
                self.error(e.message.to_string())
            }
            Err(ServiceError::McpError(e)) => {
                self.error(format!("the server rejected the call: {}", e.message))
            }
            Err(e) => self.connection_lost(e).await,
        }
    }
}

/// The server's annotations in words, for the person deciding on a call.
fn hints(def: &McpToolDef) -> Vec<String> {
    let Some(a) = &def.annotations else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match a.read_only_hint {
        Some(true) => out.push("read-only".to_string()),
        Some(false) => out.push("changes things".to_string()),
        None => {}
    }
    if a.read_only_hint != Some(true) {
        match a.destructive_hint {
            Some(true) => out.push("destructive".to_string()),
            Some(false) => out.push("only adds".to_string()),
            None => {}
        }
        if a.idempotent_hint == Some(true) {
            out.push("idempotent".to_string());
        }
    }
    if a.open_world_hint == Some(true) {
        out.push("reaches outside (open world)".to_string());
    }
    out
}

/// The server's input schema, marked as an object schema if it forgot to
/// say so (the providers reject a tool whose schema has no `type`).
fn object_schema(schema: &serde_json::Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    Value::Object(schema)
}

/// `{"owner":"a","title":"b"}` → `owner=a title=b`, cut to fit one line.
fn short_args(input: &Value) -> String {
    let Value::Object(map) = input else {
        return String::new();
    };
    let mut out = String::new();
    for (key, value) in map {
        let value = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(key);
        out.push('=');
        out.push_str(&value.replace('\n', " "));
        if out.chars().count() > SUMMARY_ARGS {
            let cut: String = out.chars().take(SUMMARY_ARGS).collect();
            return format!("{cut}…");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemas_are_objects() {
        let bare = serde_json::Map::new();
        assert_eq!(
            object_schema(&bare),
            json!({"type": "object", "properties": {}})
        );
        let given = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let Value::Object(map) = given.clone() else {
            unreachable!()
        };
        assert_eq!(object_schema(&map), given);
    }

    #[test]
    fn short_args_fit_one_line() {
        assert_eq!(
            short_args(&json!({"owner": "me", "count": 3})),
            "owner=me count=3",
            "in the order the model wrote them"
        );
        let long = short_args(&json!({"body": "x".repeat(200)}));
        assert_eq!(long.chars().count(), SUMMARY_ARGS + 1);
        assert!(long.ends_with('…'));
        assert_eq!(short_args(&json!("text")), "");
    }
}
