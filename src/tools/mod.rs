//! Tools the model can call. A tool knows nothing of the agent: it gets its
//! input and a [`ToolContext`], and answers with a [`ToolOutput`].

pub mod atomic;
pub mod beneath;
pub mod edit;
pub mod edit_core;
pub mod env;
pub mod fetch;
pub mod files;
pub mod format;
pub mod git_safety;
pub mod glob;
pub mod grep;
pub mod hunks;
pub mod ignore_files;
pub mod input;
pub mod interactive;
pub mod job_tools;
pub mod jobs;
pub mod ls;
pub mod regular;
pub mod restore;
pub mod secret_forms;
pub mod shell;
pub mod snapshot;
pub mod state;
pub mod tempfiles;
pub mod terminals;
pub mod todos;
pub mod view;
pub mod walk;
pub mod web_search;
pub mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::conversation::{ImageData, ResultContent};
use crate::llm::ToolSpec;

pub use crate::permission::Preview;
pub use state::SessionState;

/// What a tool gets besides its input.
#[derive(Clone)]
pub struct ToolContext {
    /// The project root: paths outside it are "outside the workspace".
    pub workspace: PathBuf,
    /// Per-session state shared by the tools: files viewed, the shell's
    /// working directory, background jobs, file history, todos.
    pub session: Arc<SessionState>,
    pub cancel: CancellationToken,
    /// Whether the current model accepts images in tool results.
    pub supports_images: bool,
    /// Where a tool may report progress while it runs.
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
    /// What commands run under, and what the person granted this call.
    pub sandbox: crate::sandbox::Sandbox,
    pub grant: crate::sandbox::Grant,
    /// Hunks of the previewed edit the person rejected in review.
    pub rejected: Option<RejectedHunks>,
    /// The hosts `fetch(HOST)` allow rules name: the only ones `fetch`
    /// reaches at a local address or follows a redirect to.
    pub fetch_hosts: fetch::FetchHosts,
    /// The id of the call being run (empty outside a turn).
    pub call_id: String,
    /// A front end's copy of the files (an editor's buffers), when it
    /// offers one; `None` reads and writes the disk.
    pub files: Option<Arc<dyn files::FileAccess>>,
    /// A front end's terminals (an editor's), where a foreground command
    /// is shown while it runs, still inside the sandbox; `None` runs it
    /// here.
    pub terminals: Option<Arc<dyn terminals::Terminals>>,
    /// A sub-agent's own shell directory: its `cd` moves neither the
    /// parent's shell nor a sibling's. `None`: the session's.
    pub own_cwd: Option<Arc<std::sync::Mutex<PathBuf>>>,
    /// What formats a file once an edit is written (`[format]`); `None`:
    /// nothing does.
    pub formatting: Option<Arc<dyn format::Formatting>>,
}

/// Hunks (numbered from 0, as `crate::diff::hunks` counts them) of an
/// edit the person left out, and their reason if they gave one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RejectedHunks {
    pub hunks: Vec<usize>,
    pub reason: Option<String>,
}

impl ToolContext {
    pub fn new(workspace: PathBuf) -> Self {
        crate::sandbox::own_path::workspace_opened(&workspace);
        ToolContext {
            session: Arc::new(SessionState::new(&workspace)),
            workspace,
            cancel: CancellationToken::new(),
            supports_images: false,
            progress: None,
            sandbox: crate::sandbox::Sandbox::default_for_user(),
            grant: crate::sandbox::Grant::default(),
            rejected: None,
            fetch_hosts: fetch::FetchHosts::default(),
            call_id: String::new(),
            files: None,
            terminals: None,
            own_cwd: None,
            formatting: None,
        }
    }

    /// The shell's working directory for this call.
    pub fn shell_cwd(&self) -> PathBuf {
        match &self.own_cwd {
            Some(c) => crate::sync::lock(c).clone(),
            None => self.session.cwd(),
        }
    }

    /// Where the next `bash` call of this context starts.
    pub fn set_shell_cwd(&self, dir: PathBuf) {
        match &self.own_cwd {
            Some(c) => *crate::sync::lock(c) = dir,
            None => self.session.set_cwd(dir),
        }
    }

    /// The policy this call's commands run under; `None` when off.
    pub fn sandbox_policy(&self) -> Option<crate::sandbox::Policy> {
        self.sandbox
            .policy(&self.workspace)
            .map(|p| p.with_grant(&self.grant))
    }

    /// The folders a call may change without a person's approval: the
    /// workspace, and the folders beside it the sandbox lets a contained
    /// command write ([`crate::sandbox::Policy::writable_elsewhere`]).
    /// A call that may write marks them all (`sandbox::workspace_changes`).
    pub fn write_roots(&self) -> Vec<PathBuf> {
        let elsewhere = self.sandbox_policy().map(|p| p.writable_elsewhere());
        std::iter::once(self.workspace.clone())
            .chain(elsewhere.into_iter().flatten())
            .collect()
    }

    /// Resolves a path the model gave against the workspace root (a
    /// relative one; never the shell's remembered `cd`, which the person
    /// does not see in the dialog) and normalises `.` and `..` without
    /// touching the disk.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.workspace.join(p)
        };
        normalize(&joined)
    }

    /// Path relative to the workspace for display, or the absolute path.
    pub fn display_path(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    pub fn in_workspace(&self, path: &Path) -> bool {
        normalize(path).starts_with(&self.workspace)
    }
}

pub use crate::paths::lexical as normalize;

/// What a running tool reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// A status line ("3/10 indexing"), replacing the one before.
    Status(String),
    /// More of its output (whole lines), added to what came before.
    Output(String),
}

impl ToolContext {
    /// Says what the call is doing now; nothing when no one listens.
    pub fn report_status(&self, status: String) {
        if let Some(p) = &self.progress {
            let _ = p.send(Progress::Status(status));
        }
    }

    /// Reports output the call produced so far; nothing when no one listens.
    pub fn report_output(&self, chunk: String) {
        if let Some(p) = &self.progress
            && !chunk.is_empty()
        {
            let _ = p.send(Progress::Output(chunk));
        }
    }
}

/// Extra facts about a finished call for the interface (not sent to the
/// model): the diff an edit made, how many lines changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDisplay {
    Diff(crate::diff::FileDiff),
    /// A change of several files (a language server's rename).
    Diffs {
        files: Vec<crate::diff::FileDiff>,
    },
    Job {
        job_id: String,
    },
    /// A command's sandbox ("sandbox: workspace-write, network off") and
    /// what the sandbox refused it, if anything.
    Command {
        sandbox: String,
        stopped: Option<crate::sandbox::Stop>,
        /// Where it ran, when not the workspace (as the pane shows it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<Box<str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<ResultContent>,
    pub is_error: bool,
    pub display: Option<ToolDisplay>,
}

impl ToolDisplay {
    /// The file changes it shows: one for an edit, several for a rename.
    pub fn diffs(&self) -> &[crate::diff::FileDiff] {
        match self {
            ToolDisplay::Diff(d) => std::slice::from_ref(d),
            ToolDisplay::Diffs { files } => files,
            _ => &[],
        }
    }

    pub fn diffs_mut(&mut self) -> &mut [crate::diff::FileDiff] {
        match self {
            ToolDisplay::Diff(d) => std::slice::from_mut(d),
            ToolDisplay::Diffs { files } => files,
            _ => &mut [],
        }
    }
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ResultContent::text(text)],
            is_error: false,
            display: None,
        }
    }
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ResultContent::text(text)],
            is_error: true,
            display: None,
        }
    }
    pub fn image(image: ImageData, caption: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ResultContent::text(caption), ResultContent::Image { image }],
            is_error: false,
            display: None,
        }
    }
    pub fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = Some(display);
        self
    }
    pub fn text_content(&self) -> String {
        crate::conversation::result_text(&self.content)
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    /// What the model reads (from `assets/tools/<name>.md`).
    fn description(&self) -> &str;
    /// JSON schema of the parameters.
    fn schema(&self) -> Value;
    /// Read-only tools change nothing outside cairn's own state.
    fn read_only(&self) -> bool;
    /// Whether this call changes nothing; for most tools the same as
    /// `read_only` (stopping a job that already ended changes nothing).
    fn read_only_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        let _ = (input, ctx);
        self.read_only()
    }
    /// One line for the transcript: `grep "fn main" src/`.
    fn summary(&self, input: &Value) -> String {
        let _ = input;
        self.name().to_string()
    }
    /// Files the call reads or writes, resolved, for the workspace check.
    fn paths(&self, input: &Value, ctx: &ToolContext) -> Vec<PathBuf> {
        let _ = (input, ctx);
        Vec::new()
    }
    /// What the call will do, for review before it runs. An `Err` is an
    /// answer to the model (the call cannot be made as given).
    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let _ = (input, ctx);
        Ok(None)
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput;
    /// A call whose effect is known only once something is asked (a
    /// language server's rename: which files change, and how) works it
    /// out here, before hooks and the gate see it, for the call
    /// `ctx.call_id`. Returns the input the call is judged and run with;
    /// an `Err` answers the model and nothing runs.
    async fn resolve(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let _ = ctx;
        Ok(input)
    }
}

/// Tools that come and go while cairn runs (MCP servers). The agent asks
/// for the current set before every model request.
#[async_trait]
pub trait ToolSource: Send + Sync {
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Waits, bounded, for tools that are about to appear (servers still
    /// starting); says what it waits for through `waiting` first.
    async fn ready(&self, waiting: &(dyn Fn(String) + Send + Sync)) {
        let _ = waiting;
    }
    /// What the source has to tell the person, from index `from` on.
    fn notices(&self, from: usize) -> Vec<SourceNotice> {
        let _ = from;
        Vec::new()
    }
    /// How many of its servers are up, when it has any.
    fn health(&self) -> Option<SourceHealth> {
        None
    }
    /// Ticks when notices or health changed.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
    /// Who to ask when a server wants input from the person; without one,
    /// such requests are declined.
    fn set_asker(&self, asker: input::Asker) {
        let _ = asker;
    }
    /// References the person can attach to a prompt (`mcp:SERVER:URI`).
    async fn attachables(&self) -> Vec<String> {
        Vec::new()
    }
    /// The content of an attached reference: text, and images when
    /// `images` says the model sees them (otherwise a note says what the
    /// image is); `Err` says why it cannot be had.
    async fn attach(&self, reference: &str, images: bool) -> Result<Vec<ResultContent>, String> {
        let _ = images;
        Err(format!("`{reference}` cannot be attached"))
    }
}

/// A tool source's news for the person: a server failed or came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceNotice {
    /// A failure rather than good news.
    pub problem: bool,
    pub text: String,
}

/// Servers of a tool source that are up, starting, and enabled in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceHealth {
    pub ready: usize,
    pub starting: usize,
    pub total: usize,
}

/// The set of tools offered to the model, by name.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools.
    pub fn builtin() -> Self {
        let mut r = Registry::new();
        r.register(Arc::new(view::ViewTool));
        r.register(Arc::new(grep::GrepTool));
        r.register(Arc::new(glob::GlobTool));
        r.register(Arc::new(ls::LsTool));
        r.register(Arc::new(edit::EditTool));
        r.register(Arc::new(edit::MultiEditTool));
        r.register(Arc::new(write::WriteTool));
        r.register(Arc::new(todos::TodosTool));
        r.register(Arc::new(shell::BashTool));
        r.register(Arc::new(job_tools::JobOutputTool));
        r.register(Arc::new(job_tools::JobKillTool));
        r.register(Arc::new(fetch::FetchTool));
        r
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_string(), tool);
    }

    pub fn remove_where(&mut self, pred: impl Fn(&str) -> bool) {
        self.tools.retain(|name, _| !pred(name));
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.get(name).cloned()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(|s| s.as_str())
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: t.schema(),
            })
            .collect()
    }
}

/// Reads a string argument, or says which one is missing in words the model
/// can act on.
pub fn str_arg<'a>(input: &'a Value, key: &str) -> Result<&'a str, String> {
    match input.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "`{key}` must be a string, got {}",
            type_name(other)
        )),
        None => Err(format!("missing required parameter `{key}`")),
    }
}

pub fn opt_str_arg<'a>(input: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "`{key}` must be a string, got {}",
            type_name(other)
        )),
    }
}

pub fn opt_u64_arg(input: &Value, key: &str) -> Result<Option<u64>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a non-negative integer")),
    }
}

pub fn opt_bool_arg(input: &Value, key: &str) -> Result<Option<bool>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
        Some(_) => Err(format!("`{key}` must be true or false")),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_offers_the_acting_tools_with_strict_schemas() {
        let r = Registry::builtin();
        for (name, read_only) in [
            ("edit", false),
            ("multiedit", false),
            ("write", false),
            ("bash", false),
            ("job_output", true),
            ("job_kill", false),
            ("fetch", false),
            ("todos", true),
        ] {
            let tool = r.get(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(tool.read_only(), read_only, "{name}");
            assert!(!tool.description().trim().is_empty(), "{name}");
            assert!(
                crate::permission::rules::KNOWN_TOOLS.contains(&name),
                "{name}"
            );
            let schema = tool.schema();
            assert_eq!(schema["additionalProperties"], Value::Bool(false), "{name}");
            for (param, spec) in schema["properties"].as_object().into_iter().flatten() {
                assert!(spec["description"].is_string(), "{name}.{param}");
            }
        }
    }

    #[test]
    fn builtin_offers_the_read_only_tools_with_strict_schemas() {
        let r = Registry::builtin();
        for name in ["view", "grep", "glob", "ls"] {
            let tool = r.get(name).unwrap_or_else(|| panic!("{name} missing"));
            assert!(tool.read_only(), "{name}");
            assert!(!tool.description().trim().is_empty(), "{name}");
            let schema = tool.schema();
            assert_eq!(schema["additionalProperties"], Value::Bool(false), "{name}");
            for (param, spec) in schema["properties"].as_object().into_iter().flatten() {
                assert!(spec["description"].is_string(), "{name}.{param}");
            }
        }
    }
}
