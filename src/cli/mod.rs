//! The command line: one module per subcommand (`run`, `sessions`, `mcp`,
//! `permissions`, `trust`), the full-screen interface's start
//! (`interactive`) and the start-up both front ends share (`startup`).
//! `src/main.rs` parses the arguments and calls these.

pub mod interactive;
pub mod mcp;
pub mod mcp_login;
pub mod permissions;
pub mod resume;
pub mod run;
pub mod sandbox;
pub mod sessions;
pub mod setup;
pub mod startup;
pub mod trust;
