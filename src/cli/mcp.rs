//! `cairn mcp …`: the MCP servers of the configuration.

use anyhow::Result;

use crate::cli::startup::{self, Overrides};

/// `cairn mcp list`: starts each configured server and shows its state.
pub async fn list(overrides: &Overrides) -> Result<()> {
    let s = startup::load(overrides)?;
    if let Some(note) = s.trust_note() {
        eprintln!("{note}");
    }
    let (root, config) = (s.root, s.config);
    if config.file.mcp.is_empty() {
        println!(
            "No MCP servers are configured. Add one as [mcp.NAME] in {}",
            crate::config::project_config_path(&root).display()
        );
        return Ok(());
    }
    let manager = crate::mcp::McpManager::start(config.file.mcp.clone());
    manager.settle(std::time::Duration::from_secs(30)).await;
    // Names, errors and tool lists come from the servers.
    let status = crate::mcp::format_status(&manager.statuses());
    print!("{}", crate::term_safe::escape(&status));
    manager.shutdown().await;
    Ok(())
}
