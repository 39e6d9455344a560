//! Subcommands of the `cairn` binary that are not the interface.

pub mod mcp;
pub mod trust;
