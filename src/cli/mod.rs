//! The command line, a front end beside `src/tui/`: one module per
//! subcommand (`run`, `sessions`, `mcp` with `mcp_login`, `permissions`,
//! `trust`, `sandbox`), the first-run provider set-up (`setup`), the
//! full-screen interface's start (`interactive`, `resume`) and the start-up
//! every front end shares (`startup`). `src/main.rs` parses the arguments
//! and calls these.

pub mod contained;
pub mod interactive;
pub mod mcp;
pub mod mcp_login;
mod mcp_servers;
pub mod permissions;
pub mod resume;
pub mod run;
pub mod run_input;
pub mod sandbox;
pub mod sessions;
pub mod setup;
pub mod startup;
pub mod stream_json;
pub mod trust;
