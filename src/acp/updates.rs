//! What the agent's events look like to an editor: each `AgentEvent`
//! becomes the `session/update`s an ACP client draws (message and thought
//! chunks, tool calls and their status, a command's output, diffs, the
//! todo list as a plan, the mode, the title, the context usage, the
//! provider's own web searches as finished calls linking what they found,
//! and an answer's sources after it).
//!
//! A `Translator` keeps the little state the mapping needs: the summary of
//! each call still open (to pair a permission request with its call) and
//! the output a running command has printed so far (an update replaces a
//! call's content, so each one carries all of it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use crate::config::Mode;
use crate::protocol::{AgentEvent, NoticeLevel, ToolStatus};
use crate::tools::ToolDisplay;
use crate::tools::state::{Todo, TodoStatus};

/// How much of a command's output an update carries (its tail).
pub const OUTPUT_CAP: usize = 64 * 1024;

pub fn text(t: impl Into<String>) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(t))
}

fn chunk(t: impl Into<String>) -> acp::ContentChunk {
    acp::ContentChunk::new(text(t))
}

/// The kind an editor shows for a cairn tool.
pub fn kind_of(tool: &str) -> acp::ToolKind {
    match tool {
        "view" | "job_output" | "skill" => acp::ToolKind::Read,
        "edit" | "multiedit" | "write" => acp::ToolKind::Edit,
        "bash" | "job_kill" => acp::ToolKind::Execute,
        "grep" | "glob" | "ls" | "web_search" => acp::ToolKind::Search,
        "fetch" => acp::ToolKind::Fetch,
        "todos" => acp::ToolKind::Think,
        _ => acp::ToolKind::Other,
    }
}

/// The files a call touches, from its input, as absolute paths.
pub fn locations(cwd: &Path, input: &Value) -> Vec<acp::ToolCallLocation> {
    ["file_path", "path"]
        .iter()
        .filter_map(|k| input.get(*k).and_then(Value::as_str))
        .take(1)
        .map(|p| acp::ToolCallLocation::new(cwd.join(p)))
        .collect()
}

/// A file change as the editor's diff view takes it (`old` empty: a new file).
pub fn diff(cwd: &Path, d: &crate::diff::FileDiff) -> acp::ToolCallContent {
    let old = (!d.old.is_empty()).then(|| d.old.clone());
    acp::ToolCallContent::Diff(acp::Diff::new(cwd.join(&d.path), d.new.clone()).old_text(old))
}

pub fn content_text(t: impl Into<String>) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(text(t)))
}

pub fn status_of(status: ToolStatus) -> acp::ToolCallStatus {
    match status {
        ToolStatus::Done => acp::ToolCallStatus::Completed,
        _ => acp::ToolCallStatus::Failed,
    }
}

/// What a finished call shows: its diff, or what the model was told.
pub fn finished_content(
    cwd: &Path,
    output: &str,
    display: Option<&ToolDisplay>,
) -> Vec<acp::ToolCallContent> {
    match display {
        Some(d @ (ToolDisplay::Diff(_) | ToolDisplay::Diffs { .. })) => {
            d.diffs().iter().map(|d| diff(cwd, d)).collect()
        }
        _ if output.is_empty() => vec![],
        _ => vec![content_text(tail(&crate::ansi::strip(output), OUTPUT_CAP))],
    }
}

/// The last `max` bytes of `s`, cut at a character boundary.
fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}

/// A search the provider ran while answering, as a finished call whose
/// content links each page it found (`nth`: its number in the session,
/// for an id where the provider gave none).
pub fn web_search(search: &crate::conversation::WebSearch, nth: usize) -> acp::ToolCall {
    let id = if search.id.is_empty() {
        format!("web-search-{nth}")
    } else {
        search.id.clone()
    };
    let mut content: Vec<acp::ToolCallContent> = (search.sources.iter())
        .map(|s| match web_address(&s.url) {
            Some(url) => {
                let link = acp::ResourceLink::new(one_line(s.label()), url);
                acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::ResourceLink(
                    link,
                )))
            }
            // Not a web page's address: told, never a link.
            None => content_text(format!("{} {}", one_line(s.label()), one_line(&s.url))),
        })
        .collect();
    let status = match &search.error {
        Some(why) => {
            content.insert(0, content_text(format!("The search failed: {why}")));
            acp::ToolCallStatus::Failed
        }
        None => acp::ToolCallStatus::Completed,
    };
    acp::ToolCall::new(
        id,
        format!("Web search: {}", one_line(&search.query_line())),
    )
    .kind(acp::ToolKind::Search)
    .status(status)
    .content(content)
}

/// The sources an answer cites, as Markdown text after it. Their titles
/// come from the web: Markdown in them is shown, not followed.
pub fn citations(sources: &[crate::conversation::Source]) -> String {
    let lines: Vec<String> = (sources.iter().enumerate())
        .map(|(i, s)| {
            let label = markdown_plain(&one_line(s.label()));
            match web_address(&s.url) {
                Some(url) => format!("{}. {label} <{}>", i + 1, url.replace('>', "%3E")),
                None => format!("{}. {label} {}", i + 1, markdown_plain(&one_line(&s.url))),
            }
        })
        .collect();
    format!("\n\nSources:\n{}\n", lines.join("\n"))
}

/// `t` on one line, without control characters (a page's title can hold
/// a terminal's escapes).
fn one_line(t: &str) -> String {
    let shown: String = t
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    crate::text::one_line(&shown)
}

/// An `http`/`https` address, the only kind an editor is handed as a link.
fn web_address(url: &str) -> Option<String> {
    let url = one_line(url);
    let lower = url.to_ascii_lowercase();
    ((lower.starts_with("https://") || lower.starts_with("http://")) && !url.contains(' '))
        .then_some(url)
}

/// `t` with Markdown's marks escaped, so a page's title links nowhere.
fn markdown_plain(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        if "\\`*_{}[]()<>#+!|~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub fn plan(todos: &[Todo]) -> acp::Plan {
    acp::Plan::new(
        todos
            .iter()
            .map(|t| {
                let status = match t.status {
                    TodoStatus::Pending => acp::PlanEntryStatus::Pending,
                    TodoStatus::InProgress => acp::PlanEntryStatus::InProgress,
                    TodoStatus::Completed => acp::PlanEntryStatus::Completed,
                };
                acp::PlanEntry::new(t.content.clone(), acp::PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

/// The session modes an editor offers: cairn's permission modes, plan
/// mode included (its approval comes as a `session/request_permission`).
pub fn modes(current: Mode) -> acp::SessionModeState {
    let modes = Mode::ALL
        .iter()
        .map(|m| {
            let (name, about) = match m {
                Mode::Smart => (
                    "Smart",
                    "Read-only tools run; edits and commands that may change things ask",
                ),
                Mode::AlwaysAsk => ("Always ask", "Every tool call asks first"),
                Mode::Auto => (
                    "Auto",
                    "Tools run without asking (paths outside the workspace still ask; dangerous commands stay blocked)",
                ),
                Mode::Chat => ("Chat", "No tools run"),
                Mode::Plan => (
                    "Plan",
                    "Read-only tools run; the model ends with a plan you approve before anything changes",
                ),
            };
            acp::SessionMode::new(m.as_str(), name).description(about.to_string())
        })
        .collect();
    acp::SessionModeState::new(current.as_str(), modes)
}

/// The editor's terminal shown in each running call, by call id
/// (`terminals` fills it; the translator keeps it in the final content).
pub type Shown = std::sync::Arc<std::sync::Mutex<HashMap<String, String>>>;

#[derive(Debug, Default)]
pub struct Translator {
    cwd: PathBuf,
    /// Calls not finished yet: (tool, summary), by id.
    open: HashMap<String, (String, String)>,
    /// Calls waiting for the person, latest last.
    waiting: Vec<String>,
    /// What each running command printed so far.
    output: HashMap<String, String>,
    /// The editor's terminal each command runs in, when it does.
    terminals: Shown,
    /// The provider's searches so far.
    searches: usize,
}

impl Translator {
    pub fn new(cwd: PathBuf) -> Translator {
        Translator {
            cwd,
            ..Default::default()
        }
    }

    /// Calls whose command runs in an editor's terminal keep showing it.
    pub fn with_terminals(mut self, shown: Shown) -> Translator {
        self.terminals = shown;
        self
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The call a permission request is about: the waiting call of that
    /// tool and summary (the latest, should two be alike).
    pub fn call_for(&mut self, tool: &str, summary: &str) -> Option<String> {
        let pos = self.waiting.iter().rposition(|id| {
            self.open
                .get(id)
                .is_some_and(|(t, s)| t == tool && s == summary)
        })?;
        Some(self.waiting.remove(pos))
    }

    /// An open call of `tool`, e.g. the `exit_plan_mode`
    /// call whose plan waits for approval.
    pub fn open_call_of(&self, tool: &str) -> Option<String> {
        self.open
            .iter()
            .filter(|(_, (t, _))| t == tool)
            .map(|(id, _)| id.clone())
            .max()
    }

    /// The updates one event makes.
    pub fn updates(&mut self, event: &AgentEvent) -> Vec<acp::SessionUpdate> {
        use acp::SessionUpdate as U;
        let one = |u| vec![u];
        match event {
            AgentEvent::TextDelta(t) => one(U::AgentMessageChunk(chunk(t.clone()))),
            AgentEvent::ReasoningDelta(t) => one(U::AgentThoughtChunk(chunk(t.clone()))),
            AgentEvent::ResponseReset => one(U::AgentMessageChunk(chunk(
                "\n\n[the connection dropped; the answer starts again]\n\n",
            ))),
            AgentEvent::ToolCallStarted {
                call_id,
                name,
                input,
                summary,
            } => {
                self.open
                    .insert(call_id.clone(), (name.clone(), summary.clone()));
                one(U::ToolCall(
                    acp::ToolCall::new(call_id.clone(), summary.clone())
                        .kind(kind_of(name))
                        .status(acp::ToolCallStatus::Pending)
                        .locations(locations(&self.cwd, input))
                        .raw_input(input.clone()),
                ))
            }
            AgentEvent::ToolCallWaiting { call_id } => {
                self.waiting.push(call_id.clone());
                vec![]
            }
            AgentEvent::ToolCallRunning { call_id } => {
                self.waiting.retain(|w| w != call_id);
                one(update(
                    call_id,
                    acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::InProgress),
                ))
            }
            AgentEvent::ToolCallOutput { call_id, chunk } => {
                let so_far = self.output.entry(call_id.clone()).or_default();
                so_far.push_str(&crate::ansi::strip(chunk));
                if so_far.len() > 2 * OUTPUT_CAP {
                    *so_far = tail(so_far, OUTPUT_CAP);
                }
                let shown = tail(so_far, OUTPUT_CAP);
                one(update(
                    call_id,
                    acp::ToolCallUpdateFields::new().content(vec![content_text(shown)]),
                ))
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                output,
                display,
            } => {
                self.open.remove(call_id);
                self.output.remove(call_id);
                self.waiting.retain(|w| w != call_id);
                let terminal = (self.terminals.lock()).map_or(None, |mut t| t.remove(call_id));
                let content = match terminal {
                    // The terminal stays: the editor shows what it printed.
                    Some(id) => vec![acp::ToolCallContent::Terminal(acp::Terminal::new(
                        acp::TerminalId::new(id),
                    ))],
                    None => finished_content(&self.cwd, output, display.as_ref()),
                };
                let fields = acp::ToolCallUpdateFields::new()
                    .status(status_of(*status))
                    .content(content)
                    .raw_output(Value::String(crate::ansi::strip(output)));
                one(update(call_id, fields))
            }
            AgentEvent::Todos(todos) => one(U::Plan(plan(todos))),
            AgentEvent::WebSearch(search) => {
                self.searches += 1;
                one(U::ToolCall(web_search(search, self.searches)))
            }
            AgentEvent::Citations(sources) if !sources.is_empty() => {
                one(U::AgentMessageChunk(chunk(citations(sources))))
            }
            AgentEvent::ModeChanged(mode) => one(U::CurrentModeUpdate(
                acp::CurrentModeUpdate::new(mode.as_str()),
            )),
            AgentEvent::TitleChanged(t) | AgentEvent::TitleGenerated(t) => one(
                U::SessionInfoUpdate(acp::SessionInfoUpdate::new().title(t.clone())),
            ),
            AgentEvent::Usage {
                context_tokens,
                context_window,
                cost,
                ..
            } => {
                let mut u = acp::UsageUpdate::new(*context_tokens, *context_window);
                if let Some(c) = cost {
                    u = u.cost(acp::Cost::new(*c, "USD"));
                }
                one(U::UsageUpdate(u))
            }
            AgentEvent::Notice { level, text } if *level != NoticeLevel::Info => {
                let tag = if *level == NoticeLevel::Error {
                    "error"
                } else {
                    "warning"
                };
                one(U::AgentMessageChunk(chunk(format!(
                    "\n\n_{tag}: {text}_\n\n"
                ))))
            }
            _ => vec![],
        }
    }
}

pub fn update(call_id: &str, fields: acp::ToolCallUpdateFields) -> acp::SessionUpdate {
    acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(call_id.to_string(), fields))
}

#[cfg(test)]
mod tests;
