//! One user turn: request, stream, tools, repeat.

use std::collections::BTreeMap;

use futures::StreamExt;

use super::compaction;
use super::fixed::{build_system_prompt, fixed_tokens, offered_specs};
use super::turn_context::{ParsedCall, PendingCall, TurnContext};
use crate::context::Tracker;
use crate::conversation::{Message, Part, Role, Source, repair_tool_pairs};
use crate::llm::{LlmError, Request, StopReason, StreamEvent, Usage};
use crate::protocol::{AgentEvent, NoticeLevel, TurnOutcome};
use crate::tools::state::lock;

/// One model response, gathered.
#[derive(Debug, Default)]
struct Response {
    text: String,
    reasoning: String,
    signature: Option<String>,
    calls: BTreeMap<usize, PendingCall>,
    /// What the provider sends back unchanged and its own searches, in the
    /// order they came ([`Part::ProviderData`], [`Part::WebSearch`]).
    extra: Vec<Part>,
    /// The sources the answer cites, each once.
    citations: Vec<Source>,
    usage: Option<Usage>,
    stop: Option<StopReason>,
}

enum StreamEnd {
    Done,
    Cancelled,
    Failed(LlmError),
}

/// Running totals the turn updates.
pub(crate) struct Totals<'a> {
    pub usage: &'a mut Usage,
    pub cost: &'a mut Option<f64>,
    pub tracker: &'a mut Tracker,
}

/// What the turn does after a response's stream ended.
enum AfterStream {
    /// Go on with the response's calls.
    Proceed,
    /// Compacted after a context-length error: ask again.
    Retry,
    /// The turn is over.
    End(TurnOutcome),
}

pub(crate) async fn run(
    ctx: &TurnContext,
    messages: &mut Vec<Message>,
    totals: Totals<'_>,
) -> TurnOutcome {
    let Totals {
        usage: total_usage,
        cost: total_cost,
        tracker,
    } = totals;
    let system = build_system_prompt(ctx);
    let mut retried_for_context = false;
    let mut warned_full = false;
    let mut calls_made = 0;
    while calls_made < ctx.opts.max_turns.max(1) {
        calls_made += 1;
        if !ctx.refresh_tools().await {
            return TurnOutcome::Cancelled;
        }
        let fixed = fixed_tokens(ctx, &system);
        if !compact_if_full(ctx, fixed, messages, tracker, &mut warned_full).await {
            return TurnOutcome::Cancelled;
        }
        let estimate = tracker.estimate(fixed, messages);
        if let Some(error) = over_window(ctx, estimate, fixed) {
            return TurnOutcome::Failed { error };
        }
        let request = build_request(ctx, &system, messages, estimate);
        ctx.shared.emit(AgentEvent::ResponseStarted);
        let mut response = Response::default();
        let end = stream_response(ctx, &request, &mut response).await;
        let response_usage = response.usage;
        if let Some(usage) = response.usage {
            add_usage(ctx, usage, total_usage, total_cost);
        }
        let after = after_stream(
            ctx,
            end,
            &mut response,
            messages,
            tracker,
            &mut retried_for_context,
        )
        .await;
        match after {
            AfterStream::End(outcome) => return outcome,
            AfterStream::Retry => {
                calls_made -= 1;
                continue;
            }
            AfterStream::Proceed => {}
        }
        let stop = response.stop.clone();
        let (msg, mut calls) = assistant_message(response);
        for part in &msg.parts {
            if let Part::Citations { sources } = part {
                ctx.shared.emit(AgentEvent::Citations(sources.clone()));
            }
        }
        super::stop::surface(
            ctx,
            stop.as_ref(),
            &mut calls,
            request.max_tokens,
            response_usage.as_ref(),
        );
        if msg.parts.is_empty() {
            // An empty answer ends the turn rather than looping on nothing,
            // and is said: a blank screen looks like a hang.
            ctx.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: "The model answered with nothing.".into(),
            });
            return TurnOutcome::Completed;
        }
        ctx.shared.emit(AgentEvent::MessageAdded(msg.clone()));
        messages.push(msg);
        if let Some(u) = response_usage {
            tracker.report(u.context_tokens(), messages.len());
        }
        if calls.is_empty() && stop == Some(StopReason::Paused) {
            // The provider's own search paused a long turn: ask again with
            // the answer so far, and it goes on where it stopped.
            continue;
        }
        if calls.is_empty() {
            return TurnOutcome::Completed;
        }
        let outcome = run_calls(ctx, calls, messages).await;
        absorb_subagents(ctx, total_usage, total_cost);
        if let Some(outcome) = outcome {
            return outcome;
        }
        if let Some(why) = lock(&ctx.hook_stop).take() {
            ctx.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!("A hook stopped this turn: {why}"),
            });
            return TurnOutcome::Completed;
        }
    }
    TurnOutcome::TurnLimit {
        limit: ctx.opts.max_turns,
    }
}

/// Why a request estimated at `estimate` tokens must not be sent: it would
/// not fit the model's window even after compaction had its chance.
fn over_window(ctx: &TurnContext, estimate: u64, fixed: u64) -> Option<String> {
    let window = ctx.opts.model_info.context_window;
    if estimate <= window {
        return None;
    }
    let why = if fixed >= window {
        format!(
            "the system prompt and tool descriptions alone take about {fixed} tokens; switch to plan or chat mode (fewer tools), or use a model with a larger window"
        )
    } else {
        "compaction could not shrink it; start a new session, or leave large tool output out of the conversation".to_string()
    };
    Some(format!(
        "the next request would be about {estimate} tokens, more than the {window}-token window of `{}`, so it was not sent: {why}. If the server's window is larger, set it with `[models.\"{}\"] context_window`.",
        ctx.opts.model, ctx.opts.model
    ))
}

/// Compacts before a request when the context is nearly full. False when
/// the turn was cancelled meanwhile; a failure is a warning, given once.
async fn compact_if_full(
    ctx: &TurnContext,
    fixed: u64,
    messages: &mut Vec<Message>,
    tracker: &mut Tracker,
    warned_full: &mut bool,
) -> bool {
    let window = ctx.opts.model_info.context_window;
    let estimate = tracker.estimate(fixed, messages);
    if estimate as f64 <= ctx.opts.compact_threshold * window as f64 {
        return true;
    }
    super::hooks::pre_compact(ctx, false, None).await;
    let Err(e) = compaction::compact(ctx, messages, None, false, tracker).await else {
        return true;
    };
    if ctx.cancel.is_cancelled() {
        return false;
    }
    if !*warned_full {
        *warned_full = true;
        ctx.shared.emit(AgentEvent::Notice {
            level: NoticeLevel::Warning,
            text: format!("The context is nearly full and could not be compacted: {e}"),
        });
    }
    true
}

/// The request for the conversation so far, estimated at `estimate` tokens:
/// its output limit leaves the prompt room in the window (a server such as
/// vLLM refuses a request whose prompt and limit together exceed it).
fn build_request(ctx: &TurnContext, system: &str, messages: &[Message], estimate: u64) -> Request {
    let mut history = messages.to_vec();
    repair_tool_pairs(&mut history);
    Request {
        model: ctx.opts.model.clone(),
        system: system.to_string(),
        messages: history,
        tools: offered_specs(ctx),
        max_tokens: output_limit(ctx, estimate),
        temperature: None,
        reasoning: ctx.opts.reasoning && ctx.opts.model_info.supports_reasoning,
        effort: ctx.opts.effort.or(ctx.opts.model_info.effort),
        web_search: native_search(ctx),
    }
}

/// The provider's own web search, when this request may offer it: the
/// provider has one for this model, no search service of cairn's is
/// configured, and the person's rules allow `web_search` outright. It runs
/// on the provider's side in the middle of an answer, where no question
/// can be asked, so without such a rule it is not offered at all.
fn native_search(ctx: &TurnContext) -> Option<u32> {
    let uses = ctx.opts.web_search?;
    let allowed = lock(&ctx.shared.gate).rules().allows_outright("web_search");
    (allowed && ctx.provider.native_search(&ctx.opts.model)).then_some(uses)
}

/// The output limit of a request estimated at `estimate` tokens: the
/// configured or catalogued one, lowered to the room left in the window
/// (at least 256, so a nearly full window still gets an answer).
fn output_limit(ctx: &TurnContext, estimate: u64) -> u32 {
    let limit = ctx
        .opts
        .max_tokens
        .unwrap_or(ctx.opts.model_info.max_output as u32);
    let room = ctx
        .opts
        .model_info
        .context_window
        .saturating_sub(estimate)
        .max(256);
    limit.min(u32::try_from(room).unwrap_or(u32::MAX))
}

/// Adds a response's usage to the totals and reports them.
fn add_usage(
    ctx: &TurnContext,
    usage: Usage,
    total_usage: &mut Usage,
    total_cost: &mut Option<f64>,
) {
    total_usage.add(&usage);
    if let Some(c) = ctx.opts.model_info.cost(&usage) {
        *total_cost = Some(total_cost.unwrap_or(0.0) + c);
    }
    ctx.shared.emit(AgentEvent::Usage {
        usage,
        context_tokens: usage.context_tokens(),
        context_window: ctx.opts.model_info.context_window,
        cost: *total_cost,
    });
}

/// Decides what follows a stream's end: a cancel keeps what was said, a
/// context-length error compacts hard once and asks again.
async fn after_stream(
    ctx: &TurnContext,
    end: StreamEnd,
    response: &mut Response,
    messages: &mut Vec<Message>,
    tracker: &mut Tracker,
    retried_for_context: &mut bool,
) -> AfterStream {
    match end {
        StreamEnd::Done => AfterStream::Proceed,
        StreamEnd::Cancelled => {
            // Keep what was said; calls that were still streaming are
            // dropped, so no call lacks its result.
            if !response.text.is_empty() || !response.reasoning.is_empty() {
                response.calls.clear();
                let msg = assistant_message(std::mem::take(response)).0;
                ctx.shared.emit(AgentEvent::MessageAdded(msg.clone()));
                messages.push(msg);
            }
            AfterStream::End(TurnOutcome::Cancelled)
        }
        StreamEnd::Failed(LlmError::ContextLength { message }) if !*retried_for_context => {
            *retried_for_context = true;
            if !response.text.is_empty() {
                ctx.shared.emit(AgentEvent::ResponseReset);
            }
            ctx.shared.emit(AgentEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!(
                    "The model's context window is full ({message}); compacting and retrying."
                ),
            });
            super::hooks::pre_compact(ctx, false, None).await;
            match compaction::compact(ctx, messages, None, true, tracker).await {
                Ok(_) => AfterStream::Retry,
                Err(_) if ctx.cancel.is_cancelled() => AfterStream::End(TurnOutcome::Cancelled),
                Err(e) => AfterStream::End(TurnOutcome::Failed {
                    error: format!(
                        "the conversation is too long for the model and could not be compacted: {e}"
                    ),
                }),
            }
        }
        StreamEnd::Failed(e) => AfterStream::End(TurnOutcome::Failed {
            error: e.to_string(),
        }),
    }
}

/// Runs a response's calls and adds their results; the outcome when the
/// turn was cancelled meanwhile.
async fn run_calls(
    ctx: &TurnContext,
    calls: Vec<ParsedCall>,
    messages: &mut Vec<Message>,
) -> Option<TurnOutcome> {
    let results = super::calls::execute(ctx, calls).await;
    // Files the calls changed are recorded now, not at the end of the
    // turn, so a crash mid-turn cannot lose what undo needs.
    store_new_versions(&ctx.shared, &ctx.session);
    let result_msg = Message {
        role: Role::User,
        parts: results,
    };
    ctx.shared
        .emit(AgentEvent::MessageAdded(result_msg.clone()));
    messages.push(result_msg);
    ctx.cancel.is_cancelled().then_some(TurnOutcome::Cancelled)
}

/// Adds what the calls' sub-agents spent to the turn's totals; the next
/// usage report carries it.
fn absorb_subagents(ctx: &TurnContext, total_usage: &mut Usage, total_cost: &mut Option<f64>) {
    let (usage, cost) = std::mem::take(&mut *crate::tools::state::lock(&ctx.shared.sub_totals));
    total_usage.add(&usage);
    if let Some(c) = cost {
        *total_cost = Some(total_cost.unwrap_or(0.0) + c);
    }
}

/// Hands the file versions recorded since the last call to the store.
/// A sub-agent leaves them to its parent, whose turn they belong to.
pub(crate) fn store_new_versions(
    shared: &super::Shared,
    session: &crate::tools::state::SessionState,
) {
    if shared.route.is_some() {
        return;
    }
    let versions = session.take_unsent();
    if let (Some(sink), false) = (&shared.sink, versions.is_empty()) {
        sink.file_versions(&versions);
    }
    let lost: Vec<_> = session
        .take_unsent_lost()
        .into_iter()
        .map(|(path, turn, why)| crate::store::LostFile { turn, path, why })
        .collect();
    if let (Some(sink), false) = (&shared.sink, lost.is_empty()) {
        sink.lost_files(&lost);
    }
}

async fn stream_response(ctx: &TurnContext, request: &Request, out: &mut Response) -> StreamEnd {
    let mut stream = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => return StreamEnd::Cancelled,
        r = ctx.provider.stream(request) => match r {
            Ok(s) => s,
            Err(e) => return StreamEnd::Failed(e),
        },
    };
    loop {
        let item = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return StreamEnd::Cancelled,
            item = stream.next() => item,
        };
        let event = match item {
            None => return StreamEnd::Done,
            Some(Err(e)) => return StreamEnd::Failed(e),
            Some(Ok(ev)) => ev,
        };
        match event {
            StreamEvent::TextDelta(t) => {
                out.text.push_str(&t);
                ctx.shared.emit(AgentEvent::TextDelta(t));
            }
            StreamEvent::ReasoningDelta(t) => {
                out.reasoning.push_str(&t);
                ctx.shared.emit(AgentEvent::ReasoningDelta(t));
            }
            StreamEvent::ReasoningSignature(s) => out.signature = Some(s),
            StreamEvent::ToolCallStart { index, id, name } => {
                // What came before this call has finished: keep it now.
                let partial = finished_parts(out);
                if !partial.is_empty() {
                    ctx.shared.emit(AgentEvent::PartialMessage(Message {
                        role: Role::Assistant,
                        parts: partial,
                    }));
                }
                let id = unique_call_id(out, index, id);
                let c = out.calls.entry(index).or_default();
                c.id = id;
                c.name = name;
            }
            StreamEvent::ToolCallDelta { index, fragment } => {
                out.calls.entry(index).or_default().args.push_str(&fragment);
            }
            StreamEvent::Usage(u) => {
                // Providers report in pieces (input first, output last):
                // keep the largest figure seen for each.
                let cur = out.usage.get_or_insert_with(Usage::default);
                cur.input_tokens = cur.input_tokens.max(u.input_tokens);
                cur.output_tokens = cur.output_tokens.max(u.output_tokens);
                cur.cache_read_tokens = cur.cache_read_tokens.max(u.cache_read_tokens);
                cur.cache_write_tokens = cur.cache_write_tokens.max(u.cache_write_tokens);
            }
            StreamEvent::Reset => {
                let usage = out.usage.take();
                *out = Response::default();
                out.usage = usage;
                ctx.shared.emit(AgentEvent::ResponseReset);
            }
            StreamEvent::ProviderData { format, data } => {
                out.extra.push(Part::ProviderData { format, data })
            }
            StreamEvent::WebSearch(search) => {
                ctx.shared.emit(AgentEvent::WebSearch(search.clone()));
                out.extra.push(Part::WebSearch(search));
            }
            StreamEvent::Citation(source) => Source::add_unique(&mut out.citations, source),
            StreamEvent::Done(stop) => {
                out.stop = Some(stop);
                return StreamEnd::Done;
            }
        }
    }
}

/// Some servers repeat a tool-call id within one response; each call needs
/// its own, or two results answer one id (and the provider rejects the
/// next request) while the interface shows one pane for two calls. A
/// repeat gets a suffix; the model reads it back with the result.
fn unique_call_id(r: &Response, index: usize, id: String) -> String {
    let taken = |candidate: &str| {
        r.calls
            .iter()
            .any(|(i, c)| *i != index && !candidate.is_empty() && c.id == candidate)
    };
    if !taken(&id) {
        return id;
    }
    (2..)
        .map(|n| format!("{id}_{n}"))
        .find(|c| !taken(c))
        .unwrap_or(id)
}

/// The parts of a response still streaming that are complete: its
/// reasoning, its text, and the calls whose arguments read as JSON.
fn finished_parts(r: &Response) -> Vec<Part> {
    let mut parts = Vec::new();
    if !r.reasoning.is_empty() || r.signature.is_some() {
        parts.push(Part::Reasoning {
            text: r.reasoning.clone(),
            signature: r.signature.clone(),
        });
    }
    parts.extend(r.extra.iter().cloned());
    if !r.text.is_empty() {
        parts.push(Part::Text {
            text: r.text.clone(),
        });
    }
    for call in r.calls.values() {
        if call.id.is_empty() {
            continue;
        }
        if let Ok(input) = parse_args(&call.args) {
            parts.push(Part::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                input,
            });
        }
    }
    parts
}

/// The assistant message for a response, and its calls with parsed input
/// (or the reason the arguments could not be read).
fn assistant_message(r: Response) -> (Message, Vec<ParsedCall>) {
    let mut parts = Vec::new();
    if !r.reasoning.is_empty() || r.signature.is_some() {
        parts.push(Part::Reasoning {
            text: r.reasoning,
            signature: r.signature,
        });
    }
    parts.extend(r.extra);
    if !r.text.is_empty() {
        parts.push(Part::Text { text: r.text });
    }
    if !r.citations.is_empty() {
        parts.push(Part::Citations {
            sources: r.citations,
        });
    }
    let mut calls = Vec::new();
    for (n, (_, mut call)) in r.calls.into_iter().enumerate() {
        if call.id.is_empty() {
            call.id = format!("call_{}_{n}", uuid::Uuid::new_v4().simple());
        }
        let parsed = parse_args(&call.args);
        let input = match &parsed {
            Ok(v) => v.clone(),
            Err(_) => serde_json::json!({}),
        };
        parts.push(Part::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input,
        });
        calls.push((call, parsed));
    }
    (
        Message {
            role: Role::Assistant,
            parts,
        },
        calls,
    )
}

fn parse_args(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, got: {}",
            crate::text::truncate_chars(&other.to_string(), 200)
        )),
        Err(e) => Err(format!(
            "the arguments were not valid JSON ({e}): {}",
            crate::text::truncate_chars(raw, 200)
        )),
    }
}
