//! A server's resources for the model: `list_mcp_resources` lists the
//! resources and resource templates of the connected servers that offer
//! any, `read_mcp_resource` reads one by server and URI.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

use super::content::decoded_len;
use super::slot::Slot;
use crate::conversation::{ImageData, ResultContent};
use crate::tools::{Tool, ToolContext, ToolOutput};

pub const LIST: &str = "list_mcp_resources";
pub const READ: &str = "read_mcp_resource";
/// How long a listing or a read may take.
pub(super) const LIMIT: Duration = Duration::from_secs(30);

/// Whether a connected server says it has resources.
pub(crate) fn offers_resources(slot: &Slot) -> bool {
    slot.live().is_ok_and(|live| {
        live.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some())
    })
}

pub struct ListResources {
    pub(crate) slots: Vec<Arc<Slot>>,
}

pub struct ReadResource {
    pub(crate) slots: Vec<Arc<Slot>>,
}

fn find<'a>(slots: &'a [Arc<Slot>], server: &str) -> Result<&'a Arc<Slot>, String> {
    slots
        .iter()
        .find(|s| s.name == server || super::server_key(&s.name) == server)
        .ok_or_else(|| {
            let names: Vec<&str> = slots.iter().map(|s| s.name.as_str()).collect();
            format!(
                "no connected MCP server `{server}` has resources; these do: {}",
                names.join(", ")
            )
        })
}

/// One line per resource: `uri — name (type): description`.
fn describe(item: &Value, key: &str) -> String {
    let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
    let mut line = format!("  {}", field(key));
    for (k, fmt) in [("name", " — "), ("mimeType", " ("), ("description", ": ")] {
        let v = field(k);
        if !v.is_empty() {
            line.push_str(fmt);
            line.push_str(&v.replace('\n', " "));
            if k == "mimeType" {
                line.push(')');
            }
        }
    }
    line
}

async fn list_one(slot: &Slot) -> String {
    let live = match slot.live() {
        Ok(live) => live,
        Err(why) => return format!("{}: {why}\n", slot.name),
    };
    let mut out = format!("{}:\n", slot.name);
    match tokio::time::timeout(LIMIT, live.peer.list_all_resources()).await {
        Ok(Ok(items)) if items.is_empty() => out.push_str("  (no resources)\n"),
        Ok(Ok(items)) => {
            for item in items {
                out.push_str(&describe(
                    &serde_json::to_value(&item).unwrap_or_default(),
                    "uri",
                ));
                out.push('\n');
            }
        }
        Ok(Err(e)) => out.push_str(&format!(
            "  listing failed: {}\n",
            super::errors::service_failure(&e)
        )),
        Err(_) => out.push_str("  listing timed out\n"),
    }
    if let Ok(Ok(templates)) =
        tokio::time::timeout(LIMIT, live.peer.list_all_resource_templates()).await
        && !templates.is_empty()
    {
        out.push_str("  templates (fill in the {placeholders} to read one):\n");
        for t in templates {
            let value = serde_json::to_value(&t).unwrap_or_default();
            out.push_str(&format!("  {}\n", describe(&value, "uriTemplate")));
        }
    }
    out
}

#[async_trait]
impl Tool for ListResources {
    fn name(&self) -> &str {
        LIST
    }
    fn description(&self) -> &str {
        "Lists the resources (files, records, documents) that connected MCP servers offer, \
         with their URIs, and their URI templates. Read one with read_mcp_resource."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "server": {"type": "string", "description": "Only this server's resources (default: every server's)."}
        }})
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summary(&self, input: &Value) -> String {
        match input.get("server").and_then(Value::as_str) {
            Some(s) => format!("list MCP resources of {s}"),
            None => "list MCP resources".to_string(),
        }
    }
    async fn run(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let slots: Vec<&Arc<Slot>> = match input.get("server").and_then(Value::as_str) {
            Some(server) => match find(&self.slots, server) {
                Ok(slot) => vec![slot],
                Err(why) => return ToolOutput::error(why),
            },
            None => self.slots.iter().collect(),
        };
        let mut out = String::new();
        for slot in slots {
            out.push_str(&list_one(slot).await);
        }
        ToolOutput::text(out)
    }
}

#[async_trait]
impl Tool for ReadResource {
    fn name(&self) -> &str {
        READ
    }
    fn description(&self) -> &str {
        "Reads one resource of an MCP server by its URI (from list_mcp_resources, or a \
         filled-in URI template)."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "server": {"type": "string", "description": "The server's name."},
            "uri": {"type": "string", "description": "The resource's URI."}
        }, "required": ["server", "uri"]})
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summary(&self, input: &Value) -> String {
        let field = |k: &str| {
            input
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        };
        format!(
            "read MCP resource {} from {}",
            field("uri"),
            field("server")
        )
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let (Some(server), Some(uri)) = (
            input.get("server").and_then(Value::as_str),
            input.get("uri").and_then(Value::as_str),
        ) else {
            return ToolOutput::error("give both `server` and `uri`");
        };
        let slot = match find(&self.slots, server) {
            Ok(slot) => slot,
            Err(why) => return ToolOutput::error(why),
        };
        let live = match slot.live() {
            Ok(live) => live,
            Err(why) => return ToolOutput::error(why),
        };
        let read = live.peer.read_resource(ReadResourceRequestParams::new(uri));
        match tokio::time::timeout(LIMIT, read).await {
            Ok(Ok(result)) => contents(
                &serde_json::to_value(&result.contents).unwrap_or_default(),
                ctx,
            ),
            Ok(Err(e)) => ToolOutput::error(format!(
                "MCP server `{}` could not read `{uri}`: {}",
                slot.name,
                super::errors::service_failure(&e)
            )),
            Err(_) => ToolOutput::error(format!(
                "MCP server `{}` did not answer within {} s",
                slot.name,
                LIMIT.as_secs()
            )),
        }
    }
}

/// A read's contents: text as text, images as images when the model sees
/// them, other binary data described.
pub(super) fn contents(items: &Value, ctx: &ToolContext) -> ToolOutput {
    let mut out = Vec::new();
    for item in items.as_array().into_iter().flatten() {
        let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
        let uri = item.get("uri").and_then(Value::as_str).unwrap_or("");
        if let Some(text) = item.get("text").and_then(Value::as_str) {
            out.push(ResultContent::text(text.to_string()));
        } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
            if ctx.supports_images && mime.starts_with("image/") {
                out.push(ResultContent::Image {
                    image: ImageData {
                        media_type: mime.to_string(),
                        data: blob.to_string(),
                    },
                });
            } else {
                out.push(ResultContent::text(blob_note(uri, mime, blob)));
            }
        }
    }
    if out.is_empty() {
        out.push(ResultContent::text("(the resource is empty)"));
    }
    ToolOutput {
        content: out,
        is_error: false,
        display: None,
    }
}

/// What stands for binary contents the model is not given: what it is and
/// how big.
fn blob_note(uri: &str, mime: &str, blob: &str) -> String {
    let kind = if mime.is_empty() {
        "unknown type"
    } else {
        mime
    };
    let bytes = decoded_len(blob);
    if mime.starts_with("image/") {
        format!("[resource {uri} ({kind}), {bytes} bytes: an image, which this model cannot see]")
    } else {
        format!("[resource {uri} ({kind}), {bytes} bytes of binary data, not shown to the model]")
    }
}
