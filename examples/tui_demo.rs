//! A scripted agent behind the real interface, for trying it by hand:
//! `cargo run --example tui_demo`. Each prompt gets a streamed answer with
//! code, a bash call, and an edit that asks for permission.

use std::path::PathBuf;
use std::time::Duration;

use cairn::llm::Usage;
use cairn::permission::Mode;
use cairn::protocol::{
    AgentCommand, AgentEvent, Decision, PermissionRequest, ToolStatus, TurnOutcome,
};
use cairn::tools::state::{Todo, TodoStatus};
use cairn::tools::{Preview, ToolDisplay};
use cairn::tui::{TuiOptions, run};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::sleep;

const ANSWER: &str = "Here is the plan.\n\n1. Read `src/lib.rs`\n2. Fix `add`\n3. Run the tests\n\n```rust\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n```\n\nThat should be all; a **small** change.\n";
const OLD: &str = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n";
const NEW: &str = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (cmd_tx, cmd_rx) = unbounded_channel();
    let (ev_tx, ev_rx) = unbounded_channel();
    tokio::spawn(agent(cmd_rx, ev_tx));
    let opts = TuiOptions {
        commands: Default::default(),
        provider: "demo".into(),
        model: "scripted".into(),
        mode: Mode::Smart,
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        git_branch: Some("main".into()),
        context_window: 200_000,
        theme: std::env::var("CAIRN_THEME").unwrap_or_else(|_| "dark".into()),
        ..Default::default()
    };
    run(opts, cmd_tx, ev_rx).await
}

struct Agent {
    rx: UnboundedReceiver<AgentCommand>,
    tx: UnboundedSender<AgentEvent>,
    pending: Vec<String>,
    turn: u64,
}

async fn agent(rx: UnboundedReceiver<AgentCommand>, tx: UnboundedSender<AgentEvent>) {
    let mut a = Agent {
        rx,
        tx,
        pending: Vec::new(),
        turn: 0,
    };
    loop {
        let prompt = match a.pending.pop() {
            Some(p) => p,
            None => match a.rx.recv().await {
                Some(AgentCommand::Submit { text, .. }) => text,
                Some(AgentCommand::SetMode(m)) => {
                    let _ = a.tx.send(AgentEvent::ModeChanged(m));
                    continue;
                }
                Some(AgentCommand::Shutdown) | None => return,
                Some(_) => continue,
            },
        };
        a.turn += 1;
        let outcome = a.run_turn(prompt).await;
        let _ = a.tx.send(AgentEvent::TurnFinished {
            turn: a.turn,
            outcome,
        });
    }
}

impl Agent {
    fn send(&self, ev: AgentEvent) {
        let _ = self.tx.send(ev);
    }

    /// Waits `ms`, handling commands; false when the turn was cancelled.
    async fn pause(&mut self, ms: u64) -> bool {
        let deadline = sleep(Duration::from_millis(ms));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                _ = &mut deadline => return true,
                cmd = self.rx.recv() => match cmd {
                    Some(AgentCommand::Cancel) | None => return false,
                    Some(AgentCommand::Submit { text, .. }) => self.pending.insert(0, text),
                    Some(AgentCommand::SetMode(m)) => self.send(AgentEvent::ModeChanged(m)),
                    _ => {}
                },
            }
        }
    }

    async fn ask(&mut self, id: u64, request: PermissionRequest) -> Option<Decision> {
        self.send(AgentEvent::PermissionRequested { id, request });
        loop {
            match self.rx.recv().await {
                Some(AgentCommand::PermissionReply { id: got, decision }) if got == id => {
                    self.send(AgentEvent::PermissionResolved { id });
                    return Some(decision);
                }
                Some(AgentCommand::Cancel) | None => {
                    self.send(AgentEvent::PermissionResolved { id });
                    return None;
                }
                Some(AgentCommand::Submit { text, .. }) => self.pending.insert(0, text),
                _ => {}
            }
        }
    }

    async fn run_turn(&mut self, prompt: String) -> TurnOutcome {
        self.send(AgentEvent::TurnStarted {
            turn: self.turn,
            prompt,
        });
        self.send(AgentEvent::ResponseStarted);
        for word in [
            "The user wants a fix. ",
            "I should read the file ",
            "and run the tests.",
        ] {
            self.send(AgentEvent::ReasoningDelta(word.into()));
            if !self.pause(150).await {
                return TurnOutcome::Cancelled;
            }
        }
        for chunk in ANSWER.as_bytes().chunks(6) {
            self.send(AgentEvent::TextDelta(
                String::from_utf8_lossy(chunk).into_owned(),
            ));
            if !self.pause(25).await {
                return TurnOutcome::Cancelled;
            }
        }
        self.send(AgentEvent::Todos(vec![
            Todo {
                content: "Read src/lib.rs".into(),
                status: TodoStatus::Completed,
            },
            Todo {
                content: "Fix add".into(),
                status: TodoStatus::InProgress,
            },
            Todo {
                content: "Run the tests".into(),
                status: TodoStatus::Pending,
            },
        ]));
        self.send(AgentEvent::Usage {
            usage: Usage::default(),
            context_tokens: 12_400 * self.turn,
            context_window: 200_000,
            cost: Some(0.013 * self.turn as f64),
        });
        self.send(AgentEvent::ToolCallStarted {
            call_id: format!("b{}", self.turn),
            name: "bash".into(),
            input: serde_json::json!({"command": "cargo test"}),
            summary: "cargo test".into(),
        });
        for i in 0..20 {
            self.send(AgentEvent::ToolCallProgress {
                call_id: format!("b{}", self.turn),
                message: format!("Compiling crate {i}/20"),
            });
            if !self.pause(100).await {
                return TurnOutcome::Cancelled;
            }
        }
        let out: String = (1..=12).map(|i| format!("test t{i} ... ok\n")).collect();
        self.send(AgentEvent::ToolCallFinished {
            call_id: format!("b{}", self.turn),
            status: ToolStatus::Done,
            output: out,
            display: None,
        });
        let call_id = format!("e{}", self.turn);
        self.send(AgentEvent::ToolCallStarted {
            call_id: call_id.clone(),
            name: "edit".into(),
            input: serde_json::json!({"path": "src/lib.rs"}),
            summary: "src/lib.rs".into(),
        });
        let request = PermissionRequest {
            formatting: None,
            tool: "edit".into(),
            summary: "edit src/lib.rs".into(),
            reasons: vec!["writes a file".into()],
            preview: Some(Preview::Diff(cairn::diff::FileDiff {
                path: "src/lib.rs".into(),
                old: OLD.into(),
                new: NEW.into(),
                added: 1,
                removed: 1,
            })),
            rules: vec!["Edit(src/lib.rs)".into(), "Edit(src/**)".into()],
            sandbox: None,
        };
        let (status, output, display) = match self.ask(self.turn, request).await {
            None => return TurnOutcome::Cancelled,
            Some(Decision::Deny { reason }) => (
                ToolStatus::Denied,
                format!(
                    "denied{}",
                    reason.map(|r| format!(": {r}")).unwrap_or_default()
                ),
                None,
            ),
            Some(_) => (
                ToolStatus::Done,
                "edited src/lib.rs".to_string(),
                Some(ToolDisplay::Diff(cairn::diff::FileDiff {
                    path: "src/lib.rs".into(),
                    old: OLD.into(),
                    new: NEW.into(),
                    added: 1,
                    removed: 1,
                })),
            ),
        };
        self.send(AgentEvent::ToolCallFinished {
            call_id,
            status,
            output,
            display,
        });
        self.send(AgentEvent::ResponseStarted);
        self.send(AgentEvent::TextDelta("Done.".into()));
        TurnOutcome::Completed
    }
}
