//! Subcommands of the `cairn` binary that are not the interface: one file each.

pub mod mcp;
pub mod sandbox;
pub mod trust;
