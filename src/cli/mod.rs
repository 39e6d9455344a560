//! Subcommands that are not the interface: one file each.

pub mod sandbox;
