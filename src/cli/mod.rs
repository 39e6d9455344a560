//! Subcommands that manage cairn's own state from the shell.

pub mod trust;
