//! Acting tools through the agent loop and the permission gate, against the
//! scripted model: what the person is asked, and what lands on disk.

use crate::mock_model;
use std::sync::Arc;
use std::time::Duration;

use cairn::agent::{Agent, AgentOptions};

use cairn::llm::{ModelCatalog, ProviderKind, ProviderSettings, build_provider};
use cairn::permission::rules::Rules;
use cairn::permission::{Gate, Mode};
use cairn::protocol::Decision;
use cairn::protocol::{AgentCommand, AgentEvent, ToolStatus, TurnOutcome};
use cairn::tools::{Preview, Registry};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use tokio::sync::mpsc;

struct Run {
    tx: mpsc::UnboundedSender<AgentCommand>,
    rx: mpsc::UnboundedReceiver<AgentEvent>,
    dir: tempfile::TempDir,
}

async fn start(mock: &MockModel, mode: Mode, interactive: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let provider = build_provider(ProviderSettings {
        name: "mock".into(),
        kind: ProviderKind::Anthropic,
        base_url: mock.url(),
        api_key: Some("k".into()),
        headers: vec![],
        query: vec![],
        azure: false,
        request_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        cloud: Default::default(),
        wire: Default::default(),
    })
    .unwrap();
    let opts = AgentOptions {
        workspace: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        provider_name: "mock".into(),
        model: "claude-sonnet-4-5".into(),
        model_info: ModelCatalog::global().lookup("claude-sonnet-4-5"),
        max_turns: 10,
        max_tokens: Some(1000),
        reasoning: false,
        effort: None,
        web_search: None,
        interactive,
        global_config_dir: None,
        trust_store: None,
        instructions_max_bytes: 1000,
        rules_file: Some(dir.path().join("own/rules.toml")),
        compact_threshold: 0.8,
        small_window: 0,
        small_model: None,
        auto_title: false,
        retry: cairn::llm::retry::RetryPolicy {
            max_attempts: 1,
            ..Default::default()
        },
        pinned: Default::default(),
        trusted_grants: None,
    };
    let gate = Gate::new(mode, Rules::new(), 3);
    let (agent, rx) = Agent::new(opts, Arc::from(provider), Registry::builtin(), gate);
    let (tx, _h) = agent.spawn();
    Run { tx, rx, dir }
}

impl Run {
    fn submit(&self, t: &str) {
        self.tx
            .send(AgentCommand::Submit {
                text: t.into(),
                images: vec![],
            })
            .unwrap();
    }
    async fn next(&mut self) -> AgentEvent {
        tokio::time::timeout(Duration::from_secs(15), self.rx.recv())
            .await
            .expect("an event")
            .expect("agent alive")
    }
    /// Events until the turn ends; permission requests are answered by `answer`.
    async fn turn(
        &mut self,
        mut answer: impl FnMut(&cairn::protocol::PermissionRequest) -> Decision,
    ) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        loop {
            let ev = self.next().await;
            if let AgentEvent::PermissionRequested { id, request } = &ev {
                let d = answer(request);
                self.tx
                    .send(AgentCommand::PermissionReply {
                        id: *id,
                        decision: d,
                    })
                    .unwrap();
            }
            let done = matches!(ev, AgentEvent::TurnFinished { .. });
            out.push(ev);
            if done {
                return out;
            }
        }
    }
    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }
}

fn asked(ev: &[AgentEvent]) -> Vec<cairn::protocol::PermissionRequest> {
    ev.iter()
        .filter_map(|e| match e {
            AgentEvent::PermissionRequested { request, .. } => Some(request.clone()),
            _ => None,
        })
        .collect()
}

fn statuses(ev: &[AgentEvent]) -> Vec<ToolStatus> {
    ev.iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallFinished { status, .. } => Some(*status),
            _ => None,
        })
        .collect()
}

fn tool_results(req: &Value) -> Vec<String> {
    req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"][0]["text"].as_str().unwrap_or("").to_string())
        .collect()
}

fn view_then_edit() -> Vec<Reply> {
    vec![
        Reply::tool("v1", "view", json!({"file_path": "lib.rs"})),
        Reply::tool(
            "e1",
            "edit",
            json!({"file_path": "lib.rs", "old_string": "fn a() {}", "new_string": "fn a() { println!(\"hi\"); }"}),
        ),
        Reply::text("done"),
    ]
}

#[tokio::test]
async fn an_edit_in_smart_mode_asks_with_the_diff_and_allow_once_applies_it() {
    let mock = MockModel::start(Format::Anthropic, view_then_edit()).await;
    let mut run = start(&mock, Mode::Smart, true).await;
    std::fs::write(run.path("lib.rs"), "fn a() {}\n").unwrap();
    run.submit("change a");
    let ev = run.turn(|_| Decision::AllowOnce).await;
    let asks = asked(&ev);
    assert_eq!(asks.len(), 1, "view runs without asking; the edit asks");
    match &asks[0].preview {
        Some(Preview::Diff(cairn::diff::FileDiff {
            path,
            old,
            new,
            added,
            removed,
        })) => {
            assert_eq!(path, "lib.rs");
            assert_eq!(old, "fn a() {}\n");
            assert!(new.contains("println!"));
            assert_eq!((*added, *removed), (1, 1));
        }
        other => panic!("expected a diff preview, got {other:?}"),
    }
    assert!(
        asks[0].rules.iter().any(|r| r.contains("lib.rs")),
        "{:?}",
        asks[0].rules
    );
    assert_eq!(
        std::fs::read_to_string(run.path("lib.rs")).unwrap(),
        "fn a() { println!(\"hi\"); }\n"
    );
}

#[tokio::test]
async fn deny_leaves_the_file_byte_identical_and_the_model_reads_the_reason() {
    let mock = MockModel::start(Format::Anthropic, view_then_edit()).await;
    let mut run = start(&mock, Mode::Smart, true).await;
    let original = b"fn a() {}\r\n\xef\xbb\xbf// odd bytes\n".to_vec();
    std::fs::write(run.path("lib.rs"), &original).unwrap();
    run.submit("change a");
    let ev = run
        .turn(|_| Decision::Deny {
            reason: Some("keep it quiet".into()),
        })
        .await;
    assert!(statuses(&ev).contains(&ToolStatus::Denied));
    assert_eq!(std::fs::read(run.path("lib.rs")).unwrap(), original);
    let results = tool_results(mock.requests().last().unwrap());
    assert!(
        results
            .iter()
            .any(|r| r.contains("denied") && r.contains("keep it quiet")),
        "{results:?}"
    );
}

#[tokio::test]
async fn allow_always_stores_a_rule_and_the_same_call_later_runs_without_asking() {
    let mut replies = view_then_edit();
    replies.extend([
        Reply::tool("v2", "view", json!({"file_path": "lib.rs"})),
        Reply::tool(
            "e2",
            "edit",
            json!({"file_path": "lib.rs", "old_string": "hi", "new_string": "hello"}),
        ),
        Reply::text("again"),
    ]);
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let mut run = start(&mock, Mode::Smart, true).await;
    std::fs::write(run.path("lib.rs"), "fn a() {}\n").unwrap();
    run.submit("change a");
    let ev = run
        .turn(|r| Decision::AllowAlways {
            rule: r.rules[0].clone(),
        })
        .await;
    assert_eq!(asked(&ev).len(), 1);
    let stored = std::fs::read_to_string(run.path("own/rules.toml")).unwrap();
    assert!(stored.contains("edit(lib.rs)"), "{stored}");
    assert!(!run.path(".cairn/config.toml").exists());
    run.submit("change it again");
    let ev = run.turn(|_| panic!("must not ask again")).await;
    assert!(asked(&ev).is_empty());
    assert!(
        std::fs::read_to_string(run.path("lib.rs"))
            .unwrap()
            .contains("hello")
    );
}

#[tokio::test]
async fn a_dangerous_command_is_blocked_even_in_auto_mode() {
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "b1",
                "bash",
                json!({"command": "rm -rf / --no-preserve-root"}),
            ),
            Reply::text("ok"),
        ],
    )
    .await;
    let mut run = start(&mock, Mode::Auto, true).await;
    run.submit("clean up");
    let ev = run.turn(|_| panic!("never offered for approval")).await;
    assert_eq!(statuses(&ev), vec![ToolStatus::Blocked]);
    let results = tool_results(mock.requests().last().unwrap());
    assert!(results[0].to_lowercase().contains("block"), "{results:?}");
}

#[tokio::test]
async fn the_repetition_limit_stops_the_same_call() {
    let same = || Reply::tool("g", "grep", json!({"pattern": "needle"}));
    let mock = MockModel::start(
        Format::Anthropic,
        vec![same(), same(), same(), Reply::text("ok")],
    )
    .await;
    let mut run = start(&mock, Mode::Smart, true).await;
    run.submit("search");
    let ev = run.turn(|_| Decision::AllowOnce).await;
    assert_eq!(
        statuses(&ev),
        vec![ToolStatus::Done, ToolStatus::Done, ToolStatus::Blocked]
    );
    assert!(matches!(
        ev.last(),
        Some(AgentEvent::TurnFinished {
            outcome: TurnOutcome::Completed,
            ..
        })
    ));
}
