//! The servers the `cairn mcp …` commands work on: the user's config file,
//! the configuration as a run sees it, and one server found by name.

use std::path::PathBuf;

use anyhow::{Result, anyhow};

/// The user's config file, where `cairn mcp add` writes.
pub(super) fn user_config() -> Result<PathBuf> {
    crate::config::global_dir()
        .map(|d| d.join("config.toml"))
        .ok_or_else(|| anyhow!("no user config directory on this system (is HOME set?)"))
}

/// The configuration as a run would see it: a project's servers only once
/// the person trusts the project (or `--trust-project`), with a note on
/// stderr naming what was held back.
pub(super) fn load(overrides: &crate::cli::startup::Overrides) -> Result<crate::config::Config> {
    let s = crate::cli::startup::load(overrides)?;
    if let Some(note) = s.trust_note() {
        eprintln!("{note}");
    }
    Ok(s.config)
}

/// The configured server called `name`, or an error naming the ones there are.
pub(super) fn find<'a>(
    config: &'a crate::config::Config,
    name: &str,
) -> Result<&'a crate::config::McpServerConfig> {
    config.file.mcp.get(name).ok_or_else(|| {
        let known: Vec<&str> = config.file.mcp.keys().map(String::as_str).collect();
        anyhow!(
            "there is no MCP server named `{name}` (configured: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )
    })
}
