//! cairn: a full-screen terminal coding agent.
//!
//! Layers (see ARCHITECTURE.md in the project's shared notes): the interface
//! (`tui`, `headless`) talks to the `agent` only through `AgentCommand` /
//! `AgentEvent`; the agent uses the services (`llm`, `tools`, `permission`,
//! ...); everything rests on the foundation (`conversation`, `config`, `shell`).

pub mod acp;
pub mod agent;
pub mod ansi;
pub mod cli;
pub mod config;
pub mod context;
pub mod conversation;
pub mod diff;
pub mod extensions;
pub mod format;
pub mod images;
pub mod llm;
pub mod lsp;
pub mod mcp;
pub mod paths;
pub mod permission;
pub mod private;
pub mod protocol;
pub mod sandbox;
pub mod sessions;
pub mod shell;
pub mod store;
pub mod sync;
pub mod term_safe;
pub mod text;
pub mod tools;
pub mod tui;
