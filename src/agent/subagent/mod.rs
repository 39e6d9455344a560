//! Sub-agents: the `agent` tool hands a self-contained task to a child loop
//! with its own conversation, system prompt and tools. Each child runs the
//! same turn loop as its parent (`turn::run`), so its every call passes the
//! same gate (one `Gate`, shared), sandbox and hooks; its events reach the
//! front end tagged with the call that started it (`route`), its dialogs
//! name it, and it is recorded as a child session of its parent's. It
//! shares the parent's file history, so undoing the parent's turn also
//! restores what its sub-agents changed. The parent gets only the final
//! answer, capped.

mod route;
mod tool;

pub(crate) use route::Route;
pub(crate) use tool::AgentTool;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Semaphore;

use super::turn_context::{Frame, TurnContext};
use super::{AgentOptions, Shared};
use crate::context::Tracker;
use crate::conversation::{Message, Part, Role};
use crate::extensions::agents::{self, AgentDef, Catalogue};
use crate::extensions::commands::Roots;
use crate::llm::{Provider, Usage};
use crate::protocol::{AgentEvent, NoticeLevel, TurnOutcome};
use crate::tools::state::lock;
use crate::tools::{Registry, SessionState, ToolContext, ToolOutput, ToolSource};

/// How deep sub-agents may nest: the person's agent is 0, its sub-agents
/// 1, and theirs (when their definition allows) 2.
pub const MAX_DEPTH: u8 = 2;
/// The most of a sub-agent's answer the parent's context receives.
pub const ANSWER_CAP: usize = 24_000;
/// Tools a sub-agent never gets: the todo list and the plan are the
/// person's agent's.
const PARENT_ONLY: &[&str] = &["todos", "exit_plan_mode"];

/// What the person's configuration says about sub-agents, fixed for the
/// life of the agent.
pub struct Delegation {
    roots: Roots,
    /// Whether the project's agent files may grant more than `explore`.
    trusted: bool,
    permits: Arc<Semaphore>,
    max_parallel: usize,
    /// Problems with agent files already told to the person.
    told: Mutex<Vec<String>>,
}

impl Delegation {
    pub fn new(roots: Roots, trusted: bool, max_parallel: usize) -> Delegation {
        let max_parallel = max_parallel.max(1);
        Delegation {
            roots,
            trusted,
            permits: Arc::new(Semaphore::new(max_parallel)),
            max_parallel,
            told: Mutex::new(Vec::new()),
        }
    }

    /// The agents there are now; problems with their files (and agents
    /// held for trust) are told once.
    pub(crate) fn catalogue(&self, shared: &Shared) -> Catalogue {
        let c = agents::discover(&self.roots, self.trusted);
        let mut news = c.problems.clone();
        if !c.held.is_empty() {
            news.push(format!(
                "The project's agents {} may do more than read, so they wait until you trust the project (cairn trust, or --trust-project).",
                c.held.join(", ")
            ));
        }
        let mut told = lock(&self.told);
        for text in news {
            if !told.contains(&text) {
                told.push(text.clone());
                shared.emit(AgentEvent::Notice {
                    level: NoticeLevel::Warning,
                    text,
                });
            }
        }
        c
    }

    /// `@agent-name` at the start of a prompt: the note that has the model
    /// delegate the prompt to that agent.
    pub(crate) fn mention_note(&self, prompt: &str) -> Option<String> {
        let word = prompt.trim_start().strip_prefix('@')?;
        let name = word.split_whitespace().next()?;
        let name = name.strip_prefix("agent-").unwrap_or(name);
        let catalogue = agents::discover(&self.roots, self.trusted);
        let def = catalogue.get(name)?;
        Some(format!(
            "The person asks that this be delegated to the `{0}` agent: call the `agent` tool with subagent_type \"{0}\" and a prompt that holds the whole task.",
            def.name
        ))
    }
}

/// What an `agent` call needs from the agent that makes it.
#[derive(Clone)]
pub(crate) struct Host {
    pub opts: AgentOptions,
    pub provider: Arc<dyn Provider>,
    pub shared: Arc<Shared>,
    pub session: Arc<SessionState>,
    /// The caller's own tools (without `agent`).
    pub tools: Registry,
    pub tool_source: Option<Arc<dyn ToolSource>>,
    pub catalogue: Arc<Catalogue>,
    pub delegation: Arc<Delegation>,
    /// The caller's depth (the person's agent: 0).
    pub depth: u8,
}

/// The arguments of an `agent` call.
struct Task {
    agent: String,
    description: String,
    prompt: String,
}

fn task(input: &serde_json::Value) -> Result<Task, String> {
    let get = |k: &str| crate::tools::str_arg(input, k).map(|s| s.trim().to_string());
    let prompt = get("prompt")?;
    if prompt.is_empty() {
        return Err("`prompt` is empty: give the sub-agent its whole task".into());
    }
    Ok(Task {
        agent: crate::tools::opt_str_arg(input, "subagent_type")?
            .unwrap_or("general")
            .trim()
            .to_string(),
        description: get("description")?,
        prompt,
    })
}

/// Runs one `agent` call to its end.
pub(crate) async fn delegate(
    host: &Host,
    input: &serde_json::Value,
    tool_ctx: &ToolContext,
) -> ToolOutput {
    let task = match task(input) {
        Ok(t) => t,
        Err(e) => return ToolOutput::error(e),
    };
    let Some(def) = host.catalogue.get(&task.agent).cloned() else {
        return ToolOutput::error(format!(
            "There is no agent `{}`. The agents are: {}.",
            task.agent,
            host.catalogue.names()
        ));
    };
    if lock(&host.shared.gate).mode() == crate::permission::Mode::Plan && !def.read_only {
        return ToolOutput::error(format!(
            "You are in plan mode: only read-only agents (explore) run while planning, and `{}` may change things. Explore, then call exit_plan_mode with your plan.",
            def.name
        ));
    }
    let permits = host.delegation.permits.clone();
    if permits.available_permits() == 0 {
        tool_ctx.report_status(format!(
            "waiting: {} sub-agents already run ([agents] max_parallel)",
            host.delegation.max_parallel
        ));
    }
    let _permit = tokio::select! {
        p = permits.acquire_owned() => p.ok(),
        _ = tool_ctx.cancel.cancelled() => {
            return ToolOutput::error("The turn was cancelled before the sub-agent started.");
        }
    };
    let started = Instant::now();
    let run = run_child(host, &def, &task, tool_ctx).await;
    let account = account(&def, &run, started.elapsed());
    host.shared.emit(AgentEvent::SubagentFinished {
        call_id: tool_ctx.call_id.clone(),
        agent: def.name.clone(),
        outcome: run.outcome.clone(),
        summary: account.clone(),
        usage: run.usage,
        cost: run.cost,
    });
    {
        let mut totals = lock(&host.shared.sub_totals);
        totals.0.add(&run.usage);
        if let Some(c) = run.cost {
            totals.1 = Some(totals.1.unwrap_or(0.0) + c);
        }
    }
    answer(&def, run, &account)
}

/// How a child's turn went.
struct ChildRun {
    outcome: TurnOutcome,
    messages: Vec<Message>,
    usage: Usage,
    cost: Option<f64>,
}

async fn run_child(host: &Host, def: &AgentDef, task: &Task, tool_ctx: &ToolContext) -> ChildRun {
    let (model, notice) = agents::resolve_model(def, &host.opts.provider_name, &host.opts.model);
    if let Some(text) = notice {
        host.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Info,
            text,
        });
    }
    let call_id = tool_ctx.call_id.clone();
    let title = format!("{}: {}", def.name, task.description);
    let sink = match &host.shared.sink {
        Some(parent) => {
            let parent = parent.clone();
            tokio::task::spawn_blocking(move || parent.child(&title))
                .await
                .ok()
                .flatten()
        }
        None => None,
    };
    host.shared.emit(AgentEvent::SubagentStarted {
        call_id: call_id.clone(),
        agent: def.name.clone(),
        description: task.description.clone(),
        prompt: task.prompt.clone(),
    });
    let shared = Arc::new(child_shared(
        &host.shared,
        sink.clone(),
        &call_id,
        &def.name,
    ));
    let ctx = child_context(host, def, task, model, shared.clone(), tool_ctx);
    let user = Message {
        role: Role::User,
        parts: vec![Part::Text {
            text: task.prompt.clone(),
        }],
    };
    shared.emit(AgentEvent::TurnStarted {
        turn: 1,
        prompt: task.prompt.clone(),
    });
    shared.emit(AgentEvent::MessageAdded(user.clone()));
    let mut messages = vec![user];
    let (mut usage, mut cost, mut tracker) = (Usage::default(), None, Tracker::default());
    let totals = super::turn::Totals {
        usage: &mut usage,
        cost: &mut cost,
        tracker: &mut tracker,
    };
    let mut outcome = super::turn::run(&ctx, &mut messages, totals).await;
    // `SubagentStop` hooks may send it back to work, as `Stop` does the
    // main conversation, a few times at most.
    let cwd = ctx.cwd();
    let mut continued = 0;
    while matches!(outcome, TurnOutcome::Completed) && continued < super::STOP_HOOK_TURNS {
        let active = continued > 0;
        let fut = super::hooks::subagent_stop(&shared, &def.name, active, &cwd, &tool_ctx.cancel);
        let Some(reason) = fut.await else { break };
        continued += 1;
        let note = Message {
            role: Role::User,
            parts: vec![Part::Text {
                text: format!("A SubagentStop hook says the work is not done yet: {reason}"),
            }],
        };
        shared.emit(AgentEvent::MessageAdded(note.clone()));
        messages.push(note);
        let totals = super::turn::Totals {
            usage: &mut usage,
            cost: &mut cost,
            tracker: &mut tracker,
        };
        outcome = super::turn::run(&ctx, &mut messages, totals).await;
    }
    crate::conversation::repair_tool_pairs(&mut messages);
    shared.emit(AgentEvent::TurnFinished {
        turn: 1,
        outcome: outcome.clone(),
    });
    if let Some(sink) = sink {
        let _ = tokio::task::spawn_blocking(move || sink.settle()).await;
    }
    ChildRun {
        outcome,
        messages,
        usage,
        cost,
    }
}

/// The child's shared state: its own events and record, the parent's
/// gate, sandbox and dialogs.
fn child_shared(
    parent: &Arc<Shared>,
    sink: Option<Arc<dyn super::SessionSink>>,
    call_id: &str,
    name: &str,
) -> Shared {
    Shared {
        events: parent.events.clone(),
        sink,
        pending: parent.pending.clone(),
        proposed: parent.proposed.clone(),
        inputs: Mutex::new(Default::default()),
        next_request: parent.next_request.clone(),
        gate: parent.gate.clone(),
        sandbox: parent.sandbox.clone(),
        lsp: parent.lsp.clone(),
        formatting: parent.formatting.clone(),
        files: parent.files.clone(),
        // A sub-agent's calls are not the editor's to show: they run here.
        terminals: None,
        earlier: Mutex::new(Vec::new()),
        route: Some(Route::new(parent.clone(), call_id, name)),
        sub_totals: Default::default(),
        jobs_of: Mutex::new(std::sync::Weak::new()),
        marks: Mutex::default(),
        // The person's and the project's hooks see a sub-agent's calls too.
        hooks: parent.hooks.clone(),
        // Its own context: a subfolder's instructions load into it anew.
        memory: Mutex::new(Vec::new()),
    }
}

fn child_context(
    host: &Host,
    def: &AgentDef,
    task: &Task,
    model: String,
    shared: Arc<Shared>,
    tool_ctx: &ToolContext,
) -> TurnContext {
    let mut opts = host.opts.clone();
    if model != opts.model {
        opts.model_info = crate::llm::ModelCatalog::global().lookup(&model);
        opts.model = model;
    }
    if let Some(n) = def.max_turns {
        opts.max_turns = n;
    }
    opts.auto_title = false;
    let mut tools = child_tools(host, def);
    let depth = host.depth + 1;
    if def.may_delegate() && depth < MAX_DEPTH {
        let mut inner = host.clone();
        inner.shared = shared.clone();
        inner.tools = tools.clone();
        inner.depth = depth;
        tools.register(Arc::new(AgentTool::new(inner)));
    }
    TurnContext {
        opts,
        provider: host.provider.clone(),
        registry: std::sync::Mutex::new(Arc::new(tools.clone())),
        builtin: tools,
        tool_source: None,
        shared,
        session: host.session.clone(),
        cancel: tool_ctx.cancel.clone(),
        turn: host.session.turn(),
        extensions: None,
        hook_stop: std::sync::Mutex::new(None),
        // Its own shell directory, starting where its caller's is.
        own_cwd: Some(Arc::new(std::sync::Mutex::new(tool_ctx.shell_cwd()))),
        sub: Some(Arc::new(Frame {
            name: def.name.clone(),
            description: task.description.clone(),
            prompt: def.prompt.clone(),
            read_only: def.read_only,
        })),
    }
}

/// The caller's tools (its servers' included) that `def` allows.
fn child_tools(host: &Host, def: &AgentDef) -> Registry {
    let mut all = host.tools.clone();
    if let Some(source) = &host.tool_source {
        for t in source.tools() {
            all.register(t);
        }
    }
    all.remove_where(|name| {
        name == "agent"
            || PARENT_ONLY.contains(&name)
            || def
                .tools
                .as_ref()
                .is_some_and(|allowed| !allowed.iter().any(|a| a == name))
    });
    all
}

/// One line of what a sub-agent did.
fn account(def: &AgentDef, run: &ChildRun, elapsed: std::time::Duration) -> String {
    let mut by_tool: BTreeMap<&str, usize> = BTreeMap::new();
    let mut responses = 0;
    for m in run.messages.iter().filter(|m| m.role == Role::Assistant) {
        responses += 1;
        for p in &m.parts {
            if let Part::ToolCall { name, .. } = p {
                *by_tool.entry(name.as_str()).or_default() += 1;
            }
        }
    }
    let calls: usize = by_tool.values().sum();
    let tools = by_tool
        .iter()
        .map(|(n, c)| {
            if *c > 1 {
                format!("{n} ×{c}")
            } else {
                n.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let tokens = run.usage.input_tokens + run.usage.output_tokens;
    let how = match &run.outcome {
        TurnOutcome::Completed => "finished",
        TurnOutcome::Cancelled => "was cancelled",
        TurnOutcome::TurnLimit { .. } => "hit its turn limit",
        TurnOutcome::Failed { .. } => "failed",
    };
    let tool_part = if calls == 0 {
        "no tool calls".to_string()
    } else {
        format!(
            "{calls} tool call{} ({tools})",
            if calls == 1 { "" } else { "s" }
        )
    };
    format!(
        "sub-agent {} {how}: {tool_part}, {responses} model response{}, {tokens} tokens, {:.1} s",
        def.name,
        if responses == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    )
}

/// What the parent's model receives: the last answer, capped, and the
/// account; a failure or a turn limit is an error result it can read.
fn answer(def: &AgentDef, run: ChildRun, account: &str) -> ToolOutput {
    let last = run
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.text().trim().is_empty())
        .map(|m| m.text())
        .unwrap_or_default();
    let mut text = crate::text::truncate_chars(&last, ANSWER_CAP);
    let total = last.chars().count();
    if total > ANSWER_CAP {
        text.push_str(&format!(
            "\n[the answer was cut at {ANSWER_CAP} of {total} characters]"
        ));
    }
    match run.outcome {
        TurnOutcome::Completed if !last.trim().is_empty() => {
            ToolOutput::text(format!("{text}\n\n[{account}]"))
        }
        TurnOutcome::Completed => ToolOutput::error(format!(
            "The sub-agent `{}` ended without an answer. [{account}]",
            def.name
        )),
        TurnOutcome::Failed { error } => ToolOutput::error(format!(
            "The sub-agent `{}` failed: {error}.{}\n[{account}]",
            def.name,
            said_before(&text)
        )),
        TurnOutcome::TurnLimit { limit } => ToolOutput::error(format!(
            "The sub-agent `{}` stopped after {limit} model calls without finishing.{}\n[{account}]",
            def.name,
            said_before(&text)
        )),
        TurnOutcome::Cancelled => ToolOutput::error(format!(
            "The sub-agent `{}` was cancelled.{}\n[{account}]",
            def.name,
            said_before(&text)
        )),
    }
}

fn said_before(text: &str) -> String {
    if text.trim().is_empty() {
        String::new()
    } else {
        format!(" What it said last:\n{text}")
    }
}

#[cfg(test)]
mod tests;
