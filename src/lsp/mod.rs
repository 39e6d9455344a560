//! Language servers: started lazily in the sandbox for the files tools
//! touch, they check every proposed edit (`check`: the diagnostics the
//! edit adds or removes, see `verdict`) and answer the `lsp` tool's
//! questions.
//!
//! - `framing` — the base protocol's `Content-Length` framing.
//! - `client` — one server process and the JSON-RPC exchange with it.
//! - `servers` — the servers cairn knows, `[lsp.NAME]`, which serves a file.
//! - `manager` — the workspace's servers, their states, restart.
//! - `documents` — what each opened file holds in its server.
//! - `sync` — a proposed text given to a server unsaved, and its verdict.
//! - `edits` — a server's `TextEdit`s applied to a text.
//! - `format` — a server's formatting of an edited text (`[format]`).
//! - `tool` — the `lsp` tool: definition, references, hover, symbols,
//!   diagnostics, rename.
//! - `rename` — a rename's files and hunks, worked out before it is judged.
//! - `verdict` — diagnostics before and after, compared.

mod client;
mod documents;
mod edits;
mod format;
pub mod framing;
mod manager;
pub mod memory;
mod rename;
mod report;
pub mod servers;
mod sync;
pub mod tool;
pub mod uri;
pub mod verdict;

pub use manager::{KnownServer, LspManager, ServerState, ServerStatus};
pub use report::report_text;
pub use verdict::{Finding, Severity, Verdict};

#[cfg(test)]
mod tests;
