//! The loop against an in-process scripted provider and test tools.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

use super::*;
use crate::llm::{EventStream, LlmError, Request, StopReason, StreamEvent};
use crate::permission::Mode;
use crate::protocol::ToolStatus;
use crate::tools::{Tool, ToolContext, ToolOutput};

type Script = Vec<(Duration, Result<StreamEvent, LlmError>)>;

#[derive(Default)]
struct FakeProvider {
    replies: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<Request>>,
}

impl FakeProvider {
    fn new(replies: Vec<Script>) -> Arc<Self> {
        Arc::new(FakeProvider {
            replies: Mutex::new(replies.into()),
            requests: Mutex::default(),
        })
    }
    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl Provider for FakeProvider {
    fn name(&self) -> &str {
        "fake"
    }
    async fn stream(&self, request: &Request) -> Result<EventStream, LlmError> {
        self.requests.lock().unwrap().push(request.clone());
        let script = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .ok_or_else(|| LlmError::Server {
                status: 500,
                message: "script exhausted".into(),
            })?;
        let s = futures::stream::iter(script).then(|(delay, ev)| async move {
            tokio::time::sleep(delay).await;
            ev
        });
        Ok(Box::pin(s))
    }
}

fn text(parts: &[&str]) -> Script {
    let mut s: Script = parts
        .iter()
        .map(|p| (Duration::ZERO, Ok(StreamEvent::TextDelta(p.to_string()))))
        .collect();
    s.push((Duration::ZERO, Ok(StreamEvent::Done(StopReason::EndTurn))));
    s
}

fn calls(list: &[(&str, &str, Value)]) -> Script {
    let mut s = Script::new();
    for (i, (id, name, args)) in list.iter().enumerate() {
        s.push((
            Duration::ZERO,
            Ok(StreamEvent::ToolCallStart {
                index: i,
                id: id.to_string(),
                name: name.to_string(),
            }),
        ));
        let raw = args.to_string();
        let (a, b) = raw.split_at(raw.len() / 2);
        for frag in [a, b] {
            s.push((
                Duration::ZERO,
                Ok(StreamEvent::ToolCallDelta {
                    index: i,
                    fragment: frag.to_string(),
                }),
            ));
        }
    }
    s.push((Duration::ZERO, Ok(StreamEvent::Done(StopReason::ToolUse))));
    s
}

/// Echoes its `text` argument; read-only unless built as a writer.
struct Echo {
    read_only: bool,
}

#[async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        if self.read_only { "echo" } else { "poke" }
    }
    fn description(&self) -> &str {
        "test"
    }
    fn schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn read_only(&self) -> bool {
        self.read_only
    }
    async fn run(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let times = input["times"].as_u64().unwrap_or(1) as usize;
        ToolOutput::text(format!(
            "echo: {}",
            input["text"].as_str().unwrap_or("").repeat(times)
        ))
    }
}

/// Waits until `n` calls are inside at once: fails if run one by one.
struct Rendezvous(Arc<tokio::sync::Barrier>);

#[async_trait]
impl Tool for Rendezvous {
    fn name(&self) -> &str {
        "meet"
    }
    fn description(&self) -> &str {
        "test"
    }
    fn schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn read_only(&self) -> bool {
        true
    }
    async fn run(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
        match tokio::time::timeout(Duration::from_secs(5), self.0.wait()).await {
            Ok(_) => ToolOutput::text("met"),
            Err(_) => ToolOutput::error("alone"),
        }
    }
}

/// Overwrites `notes.txt` in the workspace, keeping its old content.
struct Scribble;

#[async_trait]
impl Tool for Scribble {
    fn name(&self) -> &str {
        "scribble"
    }
    fn description(&self) -> &str {
        "test"
    }
    fn schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn read_only(&self) -> bool {
        true
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let path = ctx.workspace.join("notes.txt");
        let before = std::fs::read(&path).ok();
        ctx.session.record_version(&path, before);
        std::fs::write(&path, input["text"].as_str().unwrap_or("")).unwrap();
        if input["big"].as_bool() == Some(true) {
            ctx.session
                .record_unrestorable(&ctx.workspace.join("big.bin"), "too large to keep");
        }
        ToolOutput::text("written")
    }
}

/// Runs until cancelled.
struct Sleeper;

#[async_trait]
impl Tool for Sleeper {
    fn name(&self) -> &str {
        "sleep"
    }
    fn description(&self) -> &str {
        "test"
    }
    fn schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn read_only(&self) -> bool {
        true
    }
    async fn run(&self, _input: Value, ctx: &ToolContext) -> ToolOutput {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(60)) => ToolOutput::text("woke"),
            _ = ctx.cancel.cancelled() => ToolOutput::error("partial output"),
        }
    }
}

struct Harness {
    tx: mpsc::UnboundedSender<AgentCommand>,
    rx: mpsc::UnboundedReceiver<AgentEvent>,
    provider: Arc<FakeProvider>,
    dir: tempfile::TempDir,
}

fn harness(replies: Vec<Script>, mode: Mode, interactive: bool) -> Harness {
    harness_with_window(replies, mode, interactive, None)
}

fn harness_with_window(
    replies: Vec<Script>,
    mode: Mode,
    interactive: bool,
    window: Option<u64>,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let provider = FakeProvider::new(replies);
    let mut registry = Registry::new();
    registry.register(Arc::new(Echo { read_only: true }));
    registry.register(Arc::new(Echo { read_only: false }));
    registry.register(Arc::new(Rendezvous(Arc::new(tokio::sync::Barrier::new(2)))));
    registry.register(Arc::new(Sleeper));
    registry.register(Arc::new(Scribble));
    let mut opts = test_options(dir.path());
    opts.interactive = interactive;
    if let Some(w) = window {
        // `w` is the room for the conversation: every request also carries
        // the system prompt and the tool specifications.
        let specs: u64 = registry.specs().iter().map(fixed::spec_tokens).sum();
        let env =
            prompt::Environment::gather(dir.path(), dir.path(), &crate::sandbox::Sandbox::off());
        let system = crate::context::estimate_tokens(&prompt::system_prompt(&env, &[]));
        opts.model_info.context_window = w + specs + system;
    }
    let gate = test_gate(mode);
    let (agent, rx) = Agent::new(opts, provider.clone(), registry, gate);
    let (tx, _handle) = agent.spawn();
    Harness {
        tx,
        rx,
        provider,
        dir,
    }
}

pub(crate) fn test_options(dir: &std::path::Path) -> AgentOptions {
    AgentOptions {
        workspace: dir.to_path_buf(),
        cwd: dir.to_path_buf(),
        provider_name: "fake".into(),
        model: "fake-model".into(),
        model_info: crate::llm::ModelCatalog::global().lookup("fake-model"),
        max_turns: 5,
        max_tokens: None,
        reasoning: false,
        effort: None,
        web_search: None,
        interactive: true,
        global_config_dir: None,
        trust_store: None,
        instructions_max_bytes: 1000,
        rules_file: Some(dir.join("own-rules.toml")),
        compact_threshold: 0.8,
        small_window: 0,
        small_model: None,
        auto_title: false,
        retry: crate::llm::retry::RetryPolicy {
            max_attempts: 1,
            ..Default::default()
        },
        pinned: Default::default(),
        trusted_grants: None,
    }
}

fn test_gate(mode: Mode) -> Gate {
    Gate::new(mode, crate::permission::rules::Rules::new(), 3)
}

impl Harness {
    fn submit(&self, text: &str) {
        self.tx
            .send(AgentCommand::Submit {
                text: text.into(),
                images: vec![],
            })
            .unwrap();
    }

    async fn next(&mut self) -> AgentEvent {
        tokio::time::timeout(Duration::from_secs(10), self.rx.recv())
            .await
            .expect("no event within 10 s")
            .expect("agent stopped")
    }

    /// Events up to and including the next TurnFinished.
    async fn until_finished(&mut self) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        loop {
            let ev = self.next().await;
            let done = matches!(ev, AgentEvent::TurnFinished { .. });
            out.push(ev);
            if done {
                return out;
            }
        }
    }
}

fn outcome(events: &[AgentEvent]) -> TurnOutcome {
    match events.last() {
        Some(AgentEvent::TurnFinished { outcome, .. }) => outcome.clone(),
        other => panic!("not finished: {other:?}"),
    }
}

fn streamed_text(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn results_in(req: &Request) -> Vec<(String, String, bool)> {
    req.messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match p {
            Part::ToolResult {
                call_id,
                content,
                is_error,
            } => Some((
                call_id.clone(),
                crate::conversation::result_text(content),
                *is_error,
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plain_answer_streams_and_completes() {
    let mut h = harness(vec![text(&["Hel", "lo", "!"])], Mode::Smart, true);
    h.submit("hi");
    let ev = h.until_finished().await;
    assert!(matches!(&ev[0], AgentEvent::TurnStarted { prompt, .. } if prompt == "hi"));
    assert_eq!(streamed_text(&ev), "Hello!");
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    let req = &h.provider.requests()[0];
    assert!(req.system.contains("You are cairn"));
    assert_eq!(req.messages, vec![Message::user_text("hi")]);
    assert!(req.tools.iter().any(|t| t.name == "echo"));
}

#[tokio::test]
async fn tool_result_goes_into_the_next_request() {
    let mut h = harness(
        vec![
            calls(&[("c1", "echo", json!({"text": "ping"}))]),
            text(&["done"]),
        ],
        Mode::Smart,
        true,
    );
    h.submit("use the tool");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    assert!(ev.iter().any(|e| matches!(e,
        AgentEvent::ToolCallFinished { call_id, status: ToolStatus::Done, output, .. }
            if call_id == "c1" && output == "echo: ping")));
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        results_in(&reqs[1]),
        vec![("c1".into(), "echo: ping".into(), false)]
    );
    // The call itself, with its reassembled arguments, precedes the result.
    let call = reqs[1].messages[1].tool_calls().next().unwrap();
    assert_eq!(call.2, &json!({"text": "ping"}));
}

#[tokio::test]
async fn two_calls_in_one_response_run_concurrently() {
    let mut h = harness(
        vec![
            calls(&[("a", "meet", json!({})), ("b", "meet", json!({}))]),
            text(&["ok"]),
        ],
        Mode::Smart,
        true,
    );
    h.submit("go");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    let results = results_in(&h.provider.requests()[1]);
    assert_eq!(
        results,
        vec![
            ("a".into(), "met".into(), false),
            ("b".into(), "met".into(), false)
        ]
    );
}

#[tokio::test]
async fn unknown_tool_and_bad_arguments_are_answered_as_errors() {
    let mut bad = calls(&[("x", "nosuch", json!({}))]);
    bad.insert(
        bad.len() - 1,
        (
            Duration::ZERO,
            Ok(StreamEvent::ToolCallStart {
                index: 1,
                id: "y".into(),
                name: "echo".into(),
            }),
        ),
    );
    bad.insert(
        bad.len() - 1,
        (
            Duration::ZERO,
            Ok(StreamEvent::ToolCallDelta {
                index: 1,
                fragment: "{\"text\": ".into(),
            }),
        ),
    );
    let mut h = harness(vec![bad, text(&["sorry"])], Mode::Smart, true);
    h.submit("go");
    h.until_finished().await;
    let results = results_in(&h.provider.requests()[1]);
    assert_eq!(results.len(), 2);
    assert!(results[0].1.contains("no tool named `nosuch`") && results[0].2);
    assert!(results[1].1.contains("not valid JSON") && results[1].2);
}

#[tokio::test]
async fn cancel_during_stream_keeps_a_valid_conversation() {
    let mut slow = Script::new();
    for w in ["one ", "two ", "three ", "four "] {
        slow.push((
            Duration::from_millis(150),
            Ok(StreamEvent::TextDelta(w.into())),
        ));
    }
    slow.push((Duration::ZERO, Ok(StreamEvent::Done(StopReason::EndTurn))));
    let mut h = harness(vec![slow, text(&["again"])], Mode::Smart, true);
    h.submit("count");
    loop {
        if let AgentEvent::TextDelta(_) = h.next().await {
            break;
        }
    }
    h.tx.send(AgentCommand::Cancel).unwrap();
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Cancelled);
    h.submit("next");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    let req = &h.provider.requests()[1];
    // The partial answer is kept and the history alternates properly.
    assert_eq!(req.messages.len(), 3);
    assert_eq!(req.messages[1].role, Role::Assistant);
    assert!(req.messages[1].text().starts_with("one "));
    assert!(!req.messages[1].text().contains("four"));
}

#[tokio::test]
async fn cancel_during_a_tool_answers_every_call() {
    let mut h = harness(
        vec![
            calls(&[
                ("s1", "sleep", json!({})),
                ("e1", "echo", json!({"text": "x"})),
            ]),
            text(&["after"]),
        ],
        Mode::Smart,
        true,
    );
    h.submit("sleep");
    loop {
        if let AgentEvent::ToolCallFinished { call_id, .. } = h.next().await
            && call_id == "e1"
        {
            break;
        }
    }
    h.tx.send(AgentCommand::Cancel).unwrap();
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Cancelled);
    assert!(ev.iter().any(|e| matches!(e,
        AgentEvent::ToolCallFinished { call_id, status: ToolStatus::Cancelled, .. } if call_id == "s1")));
    h.submit("and now?");
    h.until_finished().await;
    let results = results_in(&h.provider.requests()[1]);
    assert_eq!(results.len(), 2);
    assert!(results[0].1.contains("cancelled") && results[0].1.contains("partial output"));
    assert_eq!(results[1].1, "echo: x");
}

#[tokio::test]
async fn ask_then_allow_once_runs_and_deny_sends_the_reason() {
    let mut h = harness(
        vec![
            calls(&[("p1", "poke", json!({"text": "a"}))]),
            calls(&[("p2", "poke", json!({"text": "b"}))]),
            text(&["ok"]),
        ],
        Mode::Smart,
        true,
    );
    h.submit("poke twice");
    let id = loop {
        if let AgentEvent::PermissionRequested { id, request } = h.next().await {
            assert_eq!(request.tool, "poke");
            break id;
        }
    };
    h.tx.send(AgentCommand::PermissionReply {
        id,
        decision: Decision::AllowOnce,
    })
    .unwrap();
    let id = loop {
        if let AgentEvent::PermissionRequested { id, .. } = h.next().await {
            break id;
        }
    };
    h.tx.send(AgentCommand::PermissionReply {
        id,
        decision: Decision::Deny {
            reason: Some("not that file".into()),
        },
    })
    .unwrap();
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    let reqs = h.provider.requests();
    assert_eq!(results_in(&reqs[1])[0].1, "echo: a");
    let denied = &results_in(&reqs[2])[1];
    assert!(denied.2 && denied.1.contains("not that file"), "{denied:?}");
}

#[tokio::test]
async fn allow_always_stores_only_an_offered_rule() {
    let mut h = harness(
        vec![
            calls(&[("p1", "poke", json!({"text": "a"}))]),
            text(&["ok"]),
        ],
        Mode::Smart,
        true,
    );
    h.submit("poke");
    let id = loop {
        if let AgentEvent::PermissionRequested { id, request } = h.next().await {
            assert!(!request.rules.contains(&"bash".to_string()));
            break id;
        }
    };
    h.tx.send(AgentCommand::PermissionReply {
        id,
        decision: Decision::AllowAlways {
            rule: "bash".into(),
        },
    })
    .unwrap();
    let ev = h.until_finished().await;
    assert!(ev.iter().any(|e| matches!(e,
        AgentEvent::Notice { level: NoticeLevel::Warning, text } if text.contains("Not stored"))));
    assert!(!h.dir.path().join(".cairn/config.toml").exists());
    assert_eq!(results_in(&h.provider.requests()[1])[0].1, "echo: a");
}

#[tokio::test]
async fn non_interactive_ask_is_a_denial_the_model_reads() {
    let mut h = harness(
        vec![calls(&[("p1", "poke", json!({}))]), text(&["fine"])],
        Mode::Smart,
        false,
    );
    h.submit("poke");
    let ev = h.until_finished().await;
    assert!(
        !ev.iter()
            .any(|e| matches!(e, AgentEvent::PermissionRequested { .. }))
    );
    let r = &results_in(&h.provider.requests()[1])[0];
    assert!(r.2 && r.1.contains("non-interactively"), "{r:?}");
}

#[tokio::test]
async fn turn_limit_stops_a_model_that_never_stops_calling() {
    let replies = (0..6)
        .map(|i| calls(&[(&*format!("c{i}"), "echo", json!({"text": i.to_string()}))]))
        .collect::<Vec<_>>();
    // Echo's arguments differ each time, so repetition does not interfere.
    let mut h = harness(replies, Mode::Smart, true);
    h.submit("loop");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::TurnLimit { limit: 5 });
    assert_eq!(h.provider.requests().len(), 5);
}

#[tokio::test]
async fn a_prompt_sent_during_a_turn_is_queued() {
    let mut slow = text(&["first"]);
    slow.insert(
        0,
        (
            Duration::from_millis(200),
            Ok(StreamEvent::TextDelta("".into())),
        ),
    );
    let mut h = harness(vec![slow, text(&["second"])], Mode::Smart, true);
    h.submit("one");
    h.submit("two");
    let a = h.until_finished().await;
    let b = h.until_finished().await;
    assert_eq!(streamed_text(&a), "first");
    assert!(matches!(&b[0], AgentEvent::TurnStarted { prompt, .. } if prompt == "two"));
    assert_eq!(streamed_text(&b), "second");
}

#[tokio::test]
async fn provider_error_fails_the_turn_with_its_message() {
    let mut h = harness(
        vec![vec![(
            Duration::ZERO,
            Err(LlmError::Auth {
                status: 401,
                message: "invalid x-api-key".into(),
            }),
        )]],
        Mode::Smart,
        true,
    );
    h.submit("hi");
    let ev = h.until_finished().await;
    match outcome(&ev) {
        TurnOutcome::Failed { error } => {
            assert!(error.contains("invalid x-api-key") && error.contains("API key"))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn old_tool_outputs_are_elided_at_the_threshold() {
    // One result fills at most half the window (result_bound), so two
    // rounds of a wide result pass the threshold within the turn.
    let mut h = harness_with_window(
        vec![
            calls(&[("c1", "echo", json!({"text": "o", "times": 6_000}))]),
            calls(&[("c2", "echo", json!({"text": "p", "times": 6_000}))]),
            text(&["read it"]),
            text(&["second answer"]),
        ],
        Mode::Smart,
        true,
        Some(2_000),
    );
    h.submit("first");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    assert!(
        ev.iter()
            .any(|e| matches!(e, AgentEvent::Compacted { summary: None, .. }))
    );
    h.submit("second");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    let reqs = h.provider.requests();
    assert_eq!(
        reqs.len(),
        4,
        "elision alone was enough: no summary request"
    );
    let out = &results_in(&reqs[2])[0].1;
    assert!(out.starts_with("[output elided"), "{out}");
}

#[tokio::test]
async fn older_turns_are_summarised_when_elision_is_not_enough() {
    let long = "word ".repeat(1_400);
    let mut h = harness_with_window(
        vec![
            text(&[&long]),
            text(&["They asked to talk."]),
            text(&["We discussed words."]),
            text(&["ok"]),
        ],
        Mode::Smart,
        true,
        Some(2_000),
    );
    h.submit("talk a lot");
    h.until_finished().await;
    h.submit("second prompt");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    let reqs = h.provider.requests();
    // The long answer does not fit one summary request in a 2k window:
    // it is summarised in two pieces, the second carrying the first's
    // summary, and no request is larger than the window.
    assert_eq!(reqs.len(), 4);
    for r in &reqs[1..3] {
        assert!(r.tools.is_empty());
        assert!(r.messages[0].text().contains("summarising"));
        assert!(crate::context::estimate_messages(&r.messages) < 2_000);
    }
    assert!(reqs[1].messages[0].text().contains("USER: talk a lot"));
    let second = reqs[2].messages[0].text();
    assert!(second.contains("<summary so far>\nThey asked to talk."));
    assert!(second.contains("cut to fit the summary"));
    let next = &reqs[3];
    assert_eq!(next.messages.len(), 1);
    let t = next.messages[0].text();
    assert!(t.contains(crate::context::SUMMARY_TAG) && t.contains("We discussed words."));
    assert!(t.ends_with("second prompt"));
    assert!(ev.iter().any(|e| matches!(e, AgentEvent::Compacted { summary: Some(s), .. } if s == "We discussed words.")));
}

#[tokio::test]
async fn context_length_error_compacts_and_retries_once() {
    let too_long = vec![(
        Duration::ZERO,
        Err(LlmError::ContextLength {
            message: "prompt is too long".into(),
        }),
    )];
    let mut h = harness(
        vec![
            text(&["first answer"]),
            too_long,
            text(&["summary"]),
            text(&["recovered"]),
        ],
        Mode::Smart,
        true,
    );
    h.submit("one");
    h.until_finished().await;
    h.submit("two");
    let ev = h.until_finished().await;
    assert_eq!(outcome(&ev), TurnOutcome::Completed);
    assert_eq!(streamed_text(&ev), "recovered");
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 4);
    assert!(reqs[3].messages[0].text().contains("summary"));
}

#[tokio::test]
async fn compact_command_summarises_on_demand_with_focus() {
    let mut h = harness(
        vec![text(&["a"]), text(&["b"]), text(&["focused summary"])],
        Mode::Smart,
        true,
    );
    h.submit("one");
    h.until_finished().await;
    h.submit("two");
    h.until_finished().await;
    h.tx.send(AgentCommand::Compact {
        focus: Some("the tests".into()),
    })
    .unwrap();
    loop {
        if let AgentEvent::Compacted { summary, .. } = h.next().await {
            assert_eq!(summary.as_deref(), Some("focused summary"));
            break;
        }
    }
    let reqs = h.provider.requests();
    assert!(reqs[2].messages[0].text().contains("focus on: the tests"));
}

#[tokio::test]
async fn undo_shows_its_plan_then_restores_the_turns_files() {
    let mut h = harness(
        vec![
            calls(&[("w1", "scribble", json!({"text": "first"}))]),
            text(&["wrote"]),
            calls(&[
                ("w2", "scribble", json!({"text": "second"})),
                ("w3", "scribble", json!({"text": "third"})),
            ]),
            text(&["wrote again"]),
            text(&["noted"]),
        ],
        Mode::Smart,
        true,
    );
    let notes = h.dir.path().join("notes.txt");
    std::fs::write(&notes, "original").unwrap();
    h.submit("one");
    h.until_finished().await;
    h.submit("two");
    h.until_finished().await;
    assert_eq!(std::fs::read_to_string(&notes).unwrap().len(), 5);
    h.tx.send(AgentCommand::PrepareUndo).unwrap();
    let plan = loop {
        if let AgentEvent::UndoPlanned(plan) = h.next().await {
            break plan;
        }
    };
    assert_eq!(plan.turn, 2);
    assert_eq!(
        plan.files,
        vec![(
            "notes.txt".to_string(),
            crate::tools::restore::FileAction::Restore
        )]
    );
    // Nothing changes before the confirmation.
    assert_ne!(std::fs::read_to_string(&notes).unwrap(), "first");
    h.tx.send(AgentCommand::ConfirmUndo { turn: 2 }).unwrap();
    loop {
        if let AgentEvent::UndoApplied {
            restored, failed, ..
        } = h.next().await
        {
            assert_eq!(restored, vec!["notes.txt".to_string()]);
            assert!(failed.is_empty());
            break;
        }
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "first");
    h.submit("what now?");
    h.until_finished().await;
    let last = h.provider.requests().pop().unwrap();
    let sent = last.messages.last().unwrap();
    // The model reads the note; it is not part of the person's words.
    let note = match &sent.parts[0] {
        crate::conversation::Part::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(note.starts_with(crate::conversation::ATTACHED_TAG) && note.contains("undid the file"));
    assert_eq!(sent.text(), "what now?");
}

#[tokio::test]
async fn rewind_returns_to_a_prompt_and_optionally_the_files() {
    let mut h = harness(
        vec![
            calls(&[("w1", "scribble", json!({"text": "one"}))]),
            text(&["a"]),
            calls(&[("w2", "scribble", json!({"text": "two"}))]),
            text(&["b"]),
            text(&["c"]),
            text(&["again"]),
        ],
        Mode::Smart,
        true,
    );
    let notes = h.dir.path().join("notes.txt");
    std::fs::write(&notes, "orig").unwrap();
    for p in ["first", "second", "third"] {
        h.submit(p);
        h.until_finished().await;
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "two");
    h.tx.send(AgentCommand::PrepareRewind { turn: 2 }).unwrap();
    let files = loop {
        if let AgentEvent::RewindPlanned { prompt, files, .. } = h.next().await {
            assert_eq!(prompt, "second");
            break files;
        }
    };
    assert_eq!(
        files.files,
        vec![(
            "notes.txt".to_string(),
            crate::tools::restore::FileAction::Restore
        )]
    );
    h.tx.send(AgentCommand::Rewind {
        turn: 2,
        restore_files: true,
        fork: false,
    })
    .unwrap();
    loop {
        if let AgentEvent::Rewound {
            prompt, restored, ..
        } = h.next().await
        {
            assert_eq!(prompt, "second");
            assert_eq!(restored, vec!["notes.txt".to_string()]);
            break;
        }
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "one");
    h.submit("second, differently");
    let ev = h.until_finished().await;
    assert!(matches!(&ev[0], AgentEvent::TurnStarted { turn: 2, .. }));
    let last = h.provider.requests().pop().unwrap();
    let texts: Vec<String> = last.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts.first().map(String::as_str), Some("first"));
    assert_eq!(
        texts.last().map(String::as_str),
        Some("second, differently")
    );
    assert!(!texts.iter().any(|t| t == "third" || t == "second"));
}

/// A session database in a temporary directory, a workspace beside it, and
/// a sink recording into the database.
fn recording_sink() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    tempfile::TempDir,
    Arc<crate::agent::store_sink::StoreSink>,
) {
    use crate::agent::store_sink::{SessionInfo, StoreSink};
    let db = tempfile::tempdir().unwrap();
    let path = db.path().join("s.db");
    let dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(StoreSink::start(
        crate::store::Store::open(&path).unwrap(),
        SessionInfo {
            cwd: dir.path().into(),
            project_root: dir.path().into(),
            provider: "fake".into(),
            model: "fake-model".into(),
            mode: None,
        },
        None,
    ));
    (db, path, dir, sink)
}

#[tokio::test]
async fn the_store_sink_records_messages_usage_versions_and_rewinds() {
    use crate::store::Store;
    let (_db, path, dir, sink) = recording_sink();
    let mut answer = text(&["hello"]);
    answer.insert(
        1,
        (
            Duration::ZERO,
            Ok(StreamEvent::Usage(Usage {
                input_tokens: 100,
                output_tokens: 7,
                ..Usage::default()
            })),
        ),
    );
    let provider = FakeProvider::new(vec![
        calls(&[("w1", "scribble", json!({"text": "new"}))]),
        answer,
        text(&["two"]),
    ]);
    let mut registry = Registry::new();
    registry.register(Arc::new(Scribble));
    let mut opts = test_options(dir.path());
    opts.model = "fake-model".into();
    let (agent, mut rx) = Agent::new(opts, provider, registry, test_gate(Mode::Auto));
    let (tx, _h) = agent.with_sink(sink.clone()).spawn();
    for p in ["first", "second"] {
        tx.send(AgentCommand::Submit {
            text: p.into(),
            images: vec![],
        })
        .unwrap();
        while !matches!(rx.recv().await, Some(AgentEvent::TurnFinished { .. })) {}
    }
    sink.flush();
    let store = Store::open(&path).unwrap();
    let id = sink.flush().session.expect("a session was created");
    let msgs = store.load_messages(&id).unwrap();
    let texts: Vec<String> = msgs.iter().map(|m| m.1.text()).collect();
    assert_eq!(texts, ["first", "", "", "hello", "second", "two"]);
    assert_eq!(msgs[3].2.usage.map(|u| u.input_tokens), Some(100));
    assert_eq!(msgs[4].2.turn, 2);
    let v = store.file_versions(&id, 1).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].content, None, "notes.txt did not exist before turn 1");
    // How the call ended is kept for the resumed transcript.
    let runs = store.tool_runs(&id).unwrap();
    let w1 = &runs["w1"];
    assert_eq!((w1.status.as_str(), w1.turn), ("done", 1));
    assert!(w1.elapsed_ms.is_some(), "the run's duration is recorded");
    // Rewinding in place to turn 2 drops its messages from the store.
    tx.send(AgentCommand::Rewind {
        turn: 2,
        restore_files: false,
        fork: false,
    })
    .unwrap();
    while !matches!(rx.recv().await, Some(AgentEvent::Rewound { .. })) {}
    sink.flush();
    assert_eq!(store.load_messages(&id).unwrap().len(), 4);
}

#[tokio::test]
async fn a_resumed_session_keeps_adding_to_its_stored_cost() {
    use crate::agent::store_sink::{SessionInfo, StoreSink};
    use crate::store::{MessageMeta, NewSession, Store};
    let db = tempfile::tempdir().unwrap();
    let path = db.path().join("s.db");
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&path).unwrap();
    let id = store
        .create_session(&NewSession {
            cwd: dir.path().into(),
            project_root: Some(dir.path().into()),
            provider: "fake".into(),
            model: "claude-sonnet-4-5".into(),
            parent_id: None,
        })
        .unwrap();
    store
        .append_message(&id, &Message::user_text("earlier"), &MessageMeta::default())
        .unwrap();
    store
        .append_message(
            &id,
            &Message::assistant_text("earlier answer"),
            &MessageMeta {
                cost: Some(0.5),
                ..Default::default()
            },
        )
        .unwrap();
    let sink = Arc::new(StoreSink::start(
        Store::open(&path).unwrap(),
        SessionInfo {
            cwd: dir.path().into(),
            project_root: dir.path().into(),
            provider: "fake".into(),
            model: "claude-sonnet-4-5".into(),
            mode: None,
        },
        None,
    ));
    let mut answer = text(&["more"]);
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 0,
        ..Usage::default()
    };
    answer.insert(1, (Duration::ZERO, Ok(StreamEvent::Usage(usage))));
    let mut opts = test_options(dir.path());
    opts.model = "claude-sonnet-4-5".into();
    opts.model_info = crate::llm::ModelCatalog::global().lookup("claude-sonnet-4-5");
    let price = opts.model_info.cost(&usage).expect("a priced model");
    let (agent, mut rx) = Agent::new(
        opts,
        FakeProvider::new(vec![answer]),
        Registry::new(),
        test_gate(Mode::Auto),
    );
    let (tx, _h) = agent.with_sink(sink.clone()).spawn();
    tx.send(AgentCommand::LoadHistory {
        messages: vec![
            Message::user_text("earlier"),
            Message::assistant_text("earlier answer"),
        ],
        versions: vec![],
        session_id: Some(id.clone()),
        cost: Some(0.5),
        lost: vec![],
        read_only: false,
        compacted: None,
        note: None,
        settings: None,
    })
    .unwrap();
    tx.send(AgentCommand::Submit {
        text: "again".into(),
        images: vec![],
    })
    .unwrap();
    let mut last_cost = None;
    loop {
        match rx.recv().await {
            Some(AgentEvent::Usage { cost, .. }) => last_cost = cost,
            Some(AgentEvent::TurnFinished { .. }) => break,
            Some(_) => {}
            None => panic!("the agent stopped"),
        }
    }
    assert!((last_cost.unwrap() - (0.5 + price)).abs() < 1e-9);
    sink.flush();
    let stored = Store::open(&path).unwrap().session(&id).unwrap().cost;
    assert!(
        (stored - (0.5 + price)).abs() < 1e-9,
        "stored {stored}, expected {}",
        0.5 + price
    );
}

#[tokio::test]
async fn a_rewind_that_keeps_the_files_leaves_nothing_of_those_turns_to_undo() {
    let mut h = harness(
        vec![
            calls(&[("w1", "scribble", json!({"text": "one"}))]),
            text(&["a"]),
            calls(&[("w2", "scribble", json!({"text": "two"}))]),
            text(&["b"]),
            text(&["again"]),
        ],
        Mode::Smart,
        true,
    );
    let notes = h.dir.path().join("notes.txt");
    std::fs::write(&notes, "orig").unwrap();
    for p in ["first", "second"] {
        h.submit(p);
        h.until_finished().await;
    }
    h.tx.send(AgentCommand::Rewind {
        turn: 2,
        restore_files: false,
        fork: false,
    })
    .unwrap();
    while !matches!(h.next().await, AgentEvent::Rewound { .. }) {}
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "two");
    // Undo now concerns turn 1 only: putting back what was there before it.
    h.tx.send(AgentCommand::PrepareUndo).unwrap();
    loop {
        if let AgentEvent::UndoPlanned(plan) = h.next().await {
            assert_eq!(plan.turn, 1, "{plan:?}");
            break;
        }
    }
}

#[tokio::test]
async fn file_versions_reach_the_store_before_the_turn_ends() {
    use crate::store::Store;
    let (_db, path, dir, sink) = recording_sink();
    // The answer after the call streams slowly: the turn is still running
    // while the store is checked.
    let slow: Script = vec![
        (
            Duration::from_millis(800),
            Ok(StreamEvent::TextDelta("done".into())),
        ),
        (Duration::ZERO, Ok(StreamEvent::Done(StopReason::EndTurn))),
    ];
    let provider = FakeProvider::new(vec![
        calls(&[("w1", "scribble", json!({"text": "new"}))]),
        slow,
    ]);
    let mut registry = Registry::new();
    registry.register(Arc::new(Scribble));
    let (agent, mut rx) = Agent::new(
        test_options(dir.path()),
        provider,
        registry,
        test_gate(Mode::Auto),
    );
    let (tx, _h) = agent.with_sink(sink.clone()).spawn();
    tx.send(AgentCommand::Submit {
        text: "write".into(),
        images: vec![],
    })
    .unwrap();
    loop {
        match rx.recv().await {
            Some(AgentEvent::MessageAdded(m))
                if m.parts.iter().any(|p| matches!(p, Part::ToolResult { .. })) =>
            {
                break;
            }
            Some(AgentEvent::TurnFinished { .. }) | None => panic!("the turn ended too soon"),
            _ => {}
        }
    }
    sink.flush();
    let id = sink.flush().session.unwrap();
    let versions = Store::open(&path).unwrap().file_versions(&id, 1).unwrap();
    assert_eq!(versions.len(), 1, "stored while the turn still runs");
    while !matches!(rx.recv().await, Some(AgentEvent::TurnFinished { .. })) {}
    sink.flush();
    let versions = Store::open(&path).unwrap().file_versions(&id, 1).unwrap();
    assert_eq!(versions.len(), 1, "and not stored twice");
}

#[test]
fn a_write_waits_out_another_process_holding_the_database() {
    use crate::agent::recording::SessionSink;
    use crate::agent::store_sink::{SessionInfo, StoreSink};
    use crate::store::Store;
    let db = tempfile::tempdir().unwrap();
    let path = db.path().join("s.db");
    let sink = StoreSink::start(
        Store::open(&path).unwrap(),
        SessionInfo {
            cwd: db.path().into(),
            project_root: db.path().into(),
            provider: "fake".into(),
            model: "fake-model".into(),
            mode: None,
        },
        None,
    );
    // Another process takes the write lock for longer than the busy timeout.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    sink.event(&AgentEvent::MessageAdded(Message::user_text("kept")));
    std::thread::sleep(crate::store::BUSY_TIMEOUT + Duration::from_millis(1500));
    other.execute_batch("COMMIT").unwrap();
    sink.flush();
    let state = sink.flush();
    assert_eq!(state.error, None);
    let id = state.session.expect("the session was created");
    let msgs = Store::open(&path).unwrap().load_messages(&id).unwrap();
    assert_eq!(msgs.len(), 1);
}

#[tokio::test]
async fn a_response_that_fails_after_a_partial_save_leaves_no_trace_in_the_store() {
    use crate::store::Store;
    let (_db, path, dir, sink) = recording_sink();
    let script: Script = vec![
        (Duration::ZERO, Ok(StreamEvent::TextDelta("Let me".into()))),
        (
            Duration::ZERO,
            Ok(StreamEvent::ToolCallStart {
                index: 0,
                id: "c1".into(),
                name: "scribble".into(),
            }),
        ),
        (
            Duration::ZERO,
            Err(LlmError::Auth {
                status: 401,
                message: "key revoked".into(),
            }),
        ),
    ];
    let (agent, mut rx) = Agent::new(
        test_options(dir.path()),
        FakeProvider::new(vec![script]),
        Registry::new(),
        test_gate(Mode::Auto),
    );
    let (tx, _h) = agent.with_sink(sink.clone()).spawn();
    tx.send(AgentCommand::Submit {
        text: "go".into(),
        images: vec![],
    })
    .unwrap();
    let mut saw_partial = false;
    loop {
        match rx.recv().await {
            Some(AgentEvent::PartialMessage(m)) => {
                saw_partial = true;
                assert_eq!(m.text(), "Let me");
            }
            Some(AgentEvent::TurnFinished { outcome, .. }) => {
                assert!(matches!(outcome, TurnOutcome::Failed { .. }));
                break;
            }
            Some(_) => {}
            None => panic!("the agent stopped"),
        }
    }
    assert!(saw_partial, "the text was saved once the call began");
    sink.flush();
    let id = sink.flush().session.unwrap();
    let store = Store::open(&path).unwrap();
    let texts: Vec<String> = store
        .load_messages(&id)
        .unwrap()
        .iter()
        .map(|m| m.1.text())
        .collect();
    assert_eq!(texts, ["go"]);
    assert_eq!(store.session(&id).unwrap().message_count, 1);
}

#[tokio::test]
async fn files_that_cannot_be_restored_are_named_after_a_resume_too() {
    use crate::store::Store;
    let (_db, path, dir, sink) = recording_sink();
    let mut registry = Registry::new();
    registry.register(Arc::new(Scribble));
    let (agent, mut rx) = Agent::new(
        test_options(dir.path()),
        FakeProvider::new(vec![
            calls(&[("w1", "scribble", json!({"text": "new", "big": true}))]),
            text(&["ok"]),
        ]),
        registry.clone(),
        test_gate(Mode::Auto),
    );
    let (tx, _h) = agent.with_sink(sink.clone()).spawn();
    tx.send(AgentCommand::Submit {
        text: "write".into(),
        images: vec![],
    })
    .unwrap();
    while !matches!(rx.recv().await, Some(AgentEvent::TurnFinished { .. })) {}
    sink.flush();
    let id = sink.flush().session.unwrap();
    let store = Store::open(&path).unwrap();
    let lost = store.lost_files(&id).unwrap();
    assert_eq!(lost.len(), 1);
    assert_eq!(
        (lost[0].turn, lost[0].why.as_str()),
        (1, "too large to keep")
    );

    // A new run resumes the session: undo still names the file.
    let versions = store
        .file_versions(&id, 1)
        .unwrap()
        .into_iter()
        .map(|v| crate::tools::state::FileVersion {
            path: v.path,
            before: v.content,
            turn: v.turn,
        })
        .collect();
    let messages = store
        .load_messages(&id)
        .unwrap()
        .into_iter()
        .map(|m| m.1)
        .collect();
    let (agent, mut rx) = Agent::new(
        test_options(dir.path()),
        FakeProvider::new(vec![]),
        registry,
        test_gate(Mode::Auto),
    );
    let (tx, _h) = agent.spawn();
    tx.send(AgentCommand::LoadHistory {
        messages,
        versions,
        session_id: None,
        cost: None,
        lost,
        read_only: false,
        compacted: None,
        note: None,
        settings: None,
    })
    .unwrap();
    tx.send(AgentCommand::PrepareUndo).unwrap();
    loop {
        match rx.recv().await {
            Some(AgentEvent::UndoPlanned(plan)) => {
                assert_eq!(plan.turn, 1);
                assert_eq!(
                    plan.unrestorable,
                    vec![("big.bin".to_string(), "too large to keep".to_string())]
                );
                break;
            }
            Some(_) => {}
            None => panic!("the agent stopped"),
        }
    }
}

#[tokio::test]
async fn the_repetition_guard_starts_afresh_at_each_prompt() {
    // The limit is 3: the third identical call within one prompt is
    // blocked, but a person asking three times is not a loop.
    let same = json!({"text": "tests"});
    let mut replies = Vec::new();
    for i in 0..3 {
        replies.push(calls(&[(&*format!("c{i}"), "echo", same.clone())]));
        replies.push(text(&["ran"]));
    }
    let mut h = harness(replies, Mode::Smart, true);
    for _ in 0..3 {
        h.submit("run the tests again");
        let ev = h.until_finished().await;
        assert_eq!(outcome(&ev), TurnOutcome::Completed);
        let statuses: Vec<_> = ev
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCallFinished { status, .. } => Some(*status),
                _ => None,
            })
            .collect();
        assert_eq!(statuses, vec![ToolStatus::Done], "{ev:?}");
    }
}
