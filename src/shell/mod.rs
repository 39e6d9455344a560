//! The shell parser (foundation): a bash command flattened into what the
//! gate judges and the dialog shows — every simple command (also those
//! inside substitutions, subshells, loops and functions) and every
//! redirection. Built on `brush-parser`; anything it cannot read is
//! reported as a parse error so the gate asks instead of guessing.
//!
//! - `walker` — the walk over the syntax tree; `expansion` — words,
//!   parameter and arithmetic expansions inside it.
//! - `depth` — the linear pre-scan that bounds nesting before the parser
//!   crate (which recurses per level) sees the command.
//! - `words` — brace expansion and de-quoting (`ansi_c` decodes `$'…'`); `heredoc` — input the
//!   parser crate cannot take; `outline` — one line per command.

use brush_parser::ParserOptions;

mod ansi_c;
mod depth;
mod expansion;
mod heredoc;
mod outline;
mod walker;
mod words;

/// Nested shells, substitutions inside substitutions, ... beyond this depth
/// the command is treated as unreadable.
const MAX_DEPTH: usize = 16;
/// Device files whose use as a redirection target writes nothing.
pub const HARMLESS_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShellAnalysis {
    /// In source order; commands inside a substitution come after the
    /// command whose word holds the substitution.
    pub commands: Vec<SimpleCommand>,
    pub redirects: Vec<Redirect>,
    /// `$(…)`, backticks or `<(…)` / `>(…)` somewhere in the command.
    pub has_substitution: bool,
    /// Words that are no command's arguments but may name paths: the
    /// values of `for x in …` and the subject of `case … in`. The flag
    /// tells whether the word is literal.
    pub loose_words: Vec<(String, bool)>,
    /// Functions defined by the command.
    pub functions: Vec<FunctionDef>,
    /// Parts the analysis could not see into (arithmetic or parameter
    /// expansions holding substitutions, ...). Non-empty means "ask".
    pub opaque: Vec<String>,
    /// Places where bash evaluates text it only knows when it runs as
    /// arithmetic or as a variable name (`$((x))`, `${a[i]}`, `${x:n}`,
    /// `${!x}`, `${x@P}`): a value like `a[$(cmd)]` there runs `cmd`.
    /// Never read-only.
    pub evaluated: Vec<String>,
    /// For each shell the command runs (0 is the top one; subshells,
    /// pipeline stages, substitutions, background jobs and function bodies
    /// get their own), the shell it was started from.
    pub scopes: Vec<Option<usize>>,
    /// Background jobs (`cmd &`) started inside a loop with no small
    /// bound: a process flood.
    pub background_in_loops: Vec<String>,
    /// The parser failed; nothing else in the analysis is trustworthy.
    pub parse_error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimpleCommand {
    /// The command name and its arguments, de-quoted where literal; a word
    /// with expansions keeps its source text (`$HOME`, `$(date)`).
    pub words: Vec<String>,
    /// `literal[i]` is false when `words[i]` depends on an expansion.
    pub literal: Vec<bool>,
    /// Leading `NAME=value` assignments, as written.
    pub assignments: Vec<String>,
    /// Index (in `ShellAnalysis::commands`) of the command whose word or
    /// redirection holds the substitution this command runs in.
    pub parent: Option<usize>,
    /// (pipeline id, stage) of the innermost multi-stage pipeline this
    /// command belongs to; commands in a substitution inherit their
    /// parent's stage.
    pub pipe: Option<(usize, usize)>,
    /// The shell (`ShellAnalysis::scopes`) the command runs in.
    pub scope: usize,
}

impl SimpleCommand {
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }

    /// The command as one line of de-quoted words.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    /// `>`, `>>`, `>|`, `<`, `<>`, `>&`, `<&`, `&>`, `&>>`, `<<`, `<<<`.
    pub operator: String,
    pub fd: Option<i32>,
    /// File name, fd number or here-document delimiter.
    pub target: String,
    pub target_literal: bool,
    /// True when a file (not a harmless device or a file descriptor) may be
    /// created or changed.
    pub writes_file: bool,
    /// The command the redirection belongs to, when it belongs to one.
    pub command: Option<usize>,
    /// The text a here-document (`<<`) or here-string (`<<<`) feeds in.
    pub input: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    /// Indices of the commands in the body.
    pub body: Vec<usize>,
}

impl ShellAnalysis {
    /// Whether the analysis can be trusted to list everything the command runs.
    pub fn is_complete(&self) -> bool {
        self.parse_error.is_none() && self.opaque.is_empty()
    }

    /// Redirections that may write a file.
    pub fn file_writes(&self) -> impl Iterator<Item = &Redirect> {
        self.redirects.iter().filter(|r| r.writes_file)
    }
}

/// Stack for the thread a command is parsed on. The pre-scan bounds the
/// nesting the parser crate recurses through; this is the second wall, so
/// that no spelling the scan misjudges can overflow a stack and abort
/// cairn. Only the pages touched are ever allocated.
const PARSE_STACK: usize = 256 << 20;

/// Parse `command` into its flat analysis. Never panics and never
/// overflows; on failure `parse_error` is set, which makes the gate ask.
pub fn parse(command: &str) -> ShellAnalysis {
    if let Some(why) = depth::too_deep(command) {
        return unreadable(why);
    }
    let owned = command.to_owned();
    let spawned = std::thread::Builder::new()
        .name("shell-parse".into())
        .stack_size(PARSE_STACK)
        .spawn(move || parse_guarded(&owned));
    match spawned {
        Ok(handle) => handle
            .join()
            .unwrap_or_else(|_| unreadable("the command could not be parsed".into())),
        // No thread to be had: the nesting is bounded, parse here.
        Err(_) => parse_guarded(command),
    }
}

fn unreadable(why: String) -> ShellAnalysis {
    ShellAnalysis {
        parse_error: Some(why),
        ..ShellAnalysis::default()
    }
}

fn parse_guarded(command: &str) -> ShellAnalysis {
    // The parser crate can panic on some malformed input (an unwrap in its
    // tokenizer). A command comes from the model, so that must not take
    // the agent down: a panic is an unparseable command, which asks. The
    // panic hooks stay quiet for it (see `panic_is_expected`).
    EXPECTING_PANIC.with(|f| f.set(true));
    let result = std::panic::catch_unwind(|| parse_inner(command));
    EXPECTING_PANIC.with(|f| f.set(false));
    result.unwrap_or_else(|_| unreadable("the command could not be parsed".into()))
}

thread_local! {
    static EXPECTING_PANIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on a thread inside [`parse`], where a panic from the parser crate
/// is caught and handled: panic hooks should neither print nor restore
/// the terminal for it.
pub fn panic_is_expected() -> bool {
    EXPECTING_PANIC.with(|f| f.get())
}

fn parse_inner(command: &str) -> ShellAnalysis {
    if let Some(why) = heredoc::parser_trap(command) {
        return ShellAnalysis {
            parse_error: Some(why),
            ..ShellAnalysis::default()
        };
    }
    walker::walk(command)
}

/// Decode backslash escapes as bash's `$'…'` quoting (and `printf`'s
/// format) does: `\x72\x6d` is `rm`.
pub fn decode_ansi_c(text: &str) -> String {
    ansi_c::decode(text)
}

pub(crate) fn options() -> ParserOptions {
    ParserOptions::default()
}

#[cfg(test)]
mod tests;
