//! What a person's own files add to cairn, in the formats they already use
//! with other agents: custom slash commands (`commands`), and the shared
//! reading of their markdown frontmatter (`frontmatter`).
//!
//! This room reads files; the agent calls it. Nothing here runs a program:
//! the `` !`cmd` `` lines of a command are handed back to the agent, which
//! runs them through the permission gate and the sandbox like a model's call.

pub mod commands;
pub mod frontmatter;
