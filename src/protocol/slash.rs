//! cairn's built-in slash commands as data: names, argument hints and
//! what each does. The full-screen interface offers them all (and reads
//! and runs them itself); the ACP server offers the ones an editor's
//! prompt can run (`crate::acp`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlashCommand {
    pub name: &'static str,
    /// Argument hint shown after the name, empty when it takes none.
    pub args: &'static str,
    pub description: &'static str,
}

pub const COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "new",
        args: "",
        description: "Start a new session",
    },
    SlashCommand {
        name: "sessions",
        args: "[title]",
        description: "Browse, search and resume sessions; with a title, resume it",
    },
    SlashCommand {
        name: "model",
        args: "[id]",
        description: "Show or switch the model",
    },
    SlashCommand {
        name: "effort",
        args: "[level]",
        description: "How hard a reasoning model thinks (minimal to xhigh)",
    },
    SlashCommand {
        name: "paste-image",
        args: "",
        description: "Attach the clipboard's picture to the next prompt",
    },
    SlashCommand {
        name: "mode",
        args: "[mode]",
        description: "Show or switch the permission mode: smart, always-ask, auto, chat, plan",
    },
    SlashCommand {
        name: "plan",
        args: "[goal]",
        description: "Plan mode: explore read-only, then approve a plan before anything changes",
    },
    SlashCommand {
        name: "theme",
        args: "[name]",
        description: "Pick a colour theme (live preview)",
    },
    SlashCommand {
        name: "compact",
        args: "[focus]",
        description: "Summarise older turns to free context",
    },
    SlashCommand {
        name: "undo",
        args: "",
        description: "Restore the files the last turn changed",
    },
    SlashCommand {
        name: "rewind",
        args: "",
        description: "Return the conversation to an earlier prompt",
    },
    SlashCommand {
        name: "rename",
        args: "<title>",
        description: "Rename this session",
    },
    SlashCommand {
        name: "export",
        args: "[markdown|json] [path]",
        description: "Export this session to a file",
    },
    SlashCommand {
        name: "mcp",
        args: "[restart <server>]",
        description: "MCP servers: state and tools",
    },
    SlashCommand {
        name: "prompts",
        args: "",
        description: "List the MCP servers' prompts and their arguments",
    },
    SlashCommand {
        name: "lsp",
        args: "[restart <server>]",
        description: "Language servers: state, why one failed; restart one",
    },
    SlashCommand {
        name: "permissions",
        args: "",
        description: "List the stored permission rules",
    },
    SlashCommand {
        name: "hooks",
        args: "",
        description: "List the hooks: source file, how they run, last exit and time",
    },
    SlashCommand {
        name: "init",
        args: "[focus]",
        description: "Write an AGENTS.md for this project (the model explores; you review the diff)",
    },
    SlashCommand {
        name: "memory",
        args: "",
        description: "List the instruction files in use (AGENTS.md, CLAUDE.md, …)",
    },
    SlashCommand {
        name: "sandbox",
        args: "",
        description: "What commands may do: writes, secrets, network",
    },
    SlashCommand {
        name: "mouse",
        args: "",
        description: "Toggle mouse capture (off = terminal selection)",
    },
    SlashCommand {
        name: "jobs",
        args: "",
        description: "Background jobs: what runs, their output, stop one",
    },
    SlashCommand {
        name: "help",
        args: "",
        description: "Show every key and command",
    },
    SlashCommand {
        name: "quit",
        args: "",
        description: "Quit cairn",
    },
];

/// Other names for commands, offered in the `/` menu once typed (what
/// people used to other agents type).
pub const ALIAS_COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "clear",
        args: "",
        description: "Start a new session (same as /new)",
    },
    SlashCommand {
        name: "resume",
        args: "[title]",
        description: "Browse and resume sessions (same as /sessions)",
    },
    SlashCommand {
        name: "exit",
        args: "",
        description: "Quit cairn (same as /quit)",
    },
];

/// The built-in command of this name.
pub fn named(name: &str) -> Option<&'static SlashCommand> {
    COMMANDS.iter().find(|c| c.name == name)
}
