//! MCP resources attached to a prompt as `@mcp:SERVER:URI`: every
//! resource of the connected servers for the `@` picker, and the contents
//! of one for the prompt it is attached to.

use std::time::Duration;

use rmcp::model::ReadResourceRequestParams;

use super::manager::McpManager;
use super::resources::{LIMIT, contents, offers_resources};
use crate::conversation::ResultContent;
use crate::tools::ToolContext;

/// What `@mcp:SERVER:URI` in a prompt starts with.
pub const ATTACH_PREFIX: &str = "mcp:";

impl McpManager {
    /// `mcp:SERVER:URI` for every resource of the connected servers, for the
    /// `@` picker.
    pub async fn resource_refs(&self) -> Vec<String> {
        let mut out = Vec::new();
        for slot in self.slots.values().filter(|s| offers_resources(s)) {
            let Ok(live) = slot.live() else { continue };
            let quick = Duration::from_secs(3);
            if let Ok(Ok(items)) = tokio::time::timeout(quick, live.peer.list_all_resources()).await
            {
                for item in items {
                    let value = serde_json::to_value(&item).unwrap_or_default();
                    if let Some(uri) = value["uri"].as_str() {
                        out.push(format!(
                            "{ATTACH_PREFIX}{}:{uri}",
                            super::server_key(&slot.name)
                        ));
                    }
                }
            }
        }
        out
    }

    /// The contents of `mcp:SERVER:URI`, for a prompt it is attached to:
    /// images as images when `images` says the model sees them.
    pub async fn read_ref(
        &self,
        reference: &str,
        images: bool,
    ) -> Result<Vec<ResultContent>, String> {
        let rest = reference
            .strip_prefix(ATTACH_PREFIX)
            .ok_or_else(|| format!("`{reference}` is not an MCP resource"))?;
        let (server, uri) = rest
            .split_once(':')
            .ok_or_else(|| format!("`{reference}` names no resource (mcp:SERVER:URI)"))?;
        let slot = self
            .find(server)
            .ok_or_else(|| format!("there is no MCP server `{server}`"))?;
        let live = slot.live()?;
        let read = live.peer.read_resource(ReadResourceRequestParams::new(uri));
        let result = match tokio::time::timeout(LIMIT, read).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                return Err(format!(
                    "MCP server `{}` could not read `{uri}`: {}",
                    slot.name,
                    super::errors::service_failure(&e)
                ));
            }
            Err(_) => return Err(format!("MCP server `{}` did not answer in time", slot.name)),
        };
        let items = serde_json::to_value(&result.contents).unwrap_or_default();
        let mut ctx = ToolContext::new(std::path::PathBuf::new());
        ctx.supports_images = images;
        Ok(contents(&items, &ctx).content)
    }
}
