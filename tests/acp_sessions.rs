//! `cairn acp` with an editor that offers its files and its terminals, on
//! the client side of the Rust `agent-client-protocol` crate, against the
//! real binary and the scripted model: two sessions in one process keep
//! their own mode and "always" rules; the file tools read the editor's
//! unsaved buffer and an edit lands on the disk after its question (never
//! through `fs/write_text_file`); the editor offers terminals but refuses
//! to open one, so each session asks once (naming cairn's own launcher)
//! and runs its commands inside cairn's sandbox; plan mode is offered and
//! its plan approved as a question.

use crate::{mock_model, test_home};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

type Cx = agent_client_protocol::v1::ConnectionTo<Agent>;
const TITLE: &str = "Write a title for the coding session";

/// The editor: its open buffers, and everything cairn asked of it, in order.
#[derive(Default)]
struct Editor {
    buffers: HashMap<PathBuf, String>,
    log: Vec<Value>,
    updates: Vec<(String, Value)>,
}

type Shared = Arc<Mutex<Editor>>;

fn log(editor: &Shared, entry: Value) {
    editor.lock().unwrap().log.push(entry);
}

/// "Always" (for the folder `out/`) at the first question about a write,
/// once otherwise; a plan is approved into smart mode.
fn answer(req: &acp::RequestPermissionRequest, always_given: &mut bool) -> String {
    let ids: Vec<String> = req
        .options
        .iter()
        .map(|o| o.option_id.0.to_string())
        .collect();
    if ids.iter().any(|i| i == "approve_smart") {
        return "approve_smart".into();
    }
    let title = req.tool_call.fields.title.clone().unwrap_or_default();
    if title.starts_with("write") && !*always_given {
        *always_given = true;
        if let Some(o) = req.options.iter().find(|o| o.name.contains("out/**")) {
            return o.option_id.0.to_string();
        }
    }
    "allow_once".into()
}

async fn as_editor<T: Send + 'static>(
    home: &TestHome,
    mock: &MockModel,
    editor: Shared,
    op: impl AsyncFnOnce(Cx) -> Result<T, Error>,
) -> T {
    let mut child = home
        .command(&mock.url())
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let (e1, e2, e3, e4, e5) = (
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor,
    );
    let mut always_given = false;
    let conversation = Client
        .v1()
        .name("cairn-sessions-test")
        .on_receive_notification(
            async move |n: acp::SessionNotification, _cx| {
                let u = serde_json::to_value(&n.update).unwrap();
                e1.lock()
                    .unwrap()
                    .updates
                    .push((n.session_id.0.to_string(), u));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: acp::RequestPermissionRequest, responder, _cx| {
                let picked = answer(&req, &mut always_given);
                let mut entry = serde_json::to_value(&req).unwrap();
                entry["what"] = json!("permission");
                entry["picked"] = json!(picked);
                log(&e2, entry);
                responder.respond(acp::RequestPermissionResponse::new(
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        picked,
                    )),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::ReadTextFileRequest, responder, _cx| {
                log(&e3, json!({"what": "read", "path": req.path}));
                let open = e3.lock().unwrap().buffers.get(&req.path).cloned();
                let text = open.unwrap_or_else(|| std::fs::read_to_string(&req.path).unwrap());
                responder.respond(acp::ReadTextFileResponse::new(text))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::WriteTextFileRequest, responder, _cx| {
                log(
                    &e4,
                    json!({"what": "write", "path": req.path, "content": req.content}),
                );
                e4.lock().unwrap().buffers.insert(req.path, req.content);
                responder.respond(acp::WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: acp::CreateTerminalRequest, responder, _cx| {
                log(
                    &e5,
                    json!({"what": "terminal", "command": req.command, "args": req.args}),
                );
                responder.respond_with_error(Error::new(
                    agent_client_protocol::ErrorCode::INVALID_REQUEST,
                    "this test editor runs no commands",
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx| op(cx).await);
    let result = tokio::time::timeout(Duration::from_secs(90), conversation)
        .await
        .expect("the conversation ended in time");
    match result {
        Ok(v) => v,
        Err(e) => {
            let _ = child.kill().await;
            panic!("the ACP conversation failed: {e:?}");
        }
    }
}

async fn prompt(cx: &Cx, id: &acp::SessionId, text: &str) -> Result<acp::StopReason, Error> {
    let req = acp::PromptRequest::new(
        id.clone(),
        vec![acp::ContentBlock::Text(acp::TextContent::new(text))],
    );
    Ok(cx.send_request(req).block_task().await?.stop_reason)
}

async fn new_session(cx: &Cx, cwd: &std::path::Path) -> Result<acp::SessionId, Error> {
    let req = acp::NewSessionRequest::new(cwd.to_path_buf());
    Ok(cx.send_request(req).block_task().await?.session_id)
}

fn script() -> Vec<Reply> {
    let write = |id: &str, when: &str| {
        let file = format!("out/{id}.txt");
        Reply::tool(id, "write", json!({"file_path": file, "content": "made\n"})).when(when)
    };
    let mut replies: Vec<Reply> = (0..3).map(|_| Reply::text("A title").when(TITLE)).collect();
    replies.extend([
        // Session A: a write allowed always (for out/), then another unasked,
        // and a command, which runs in cairn's sandbox.
        write("a1", "A-one"),
        Reply::text("made").when("A-one"),
        write("a2", "A-two"),
        Reply::tool("a5", "bash", json!({"command": "touch made.txt"})).when("A-two"),
        Reply::text("made again").when("A-two"),
        // Session B: a write to out/ still asks there.
        write("b1", "B-one"),
        Reply::text("made in B").when("B-one"),
        // A in always-ask: a command asks; B in smart: it does not.
        Reply::tool("a3", "bash", json!({"command": "touch a3.txt"})).when("A-three"),
        Reply::tool("a6", "view", json!({"file_path": "notes.txt"})).when("A-three"),
        Reply::tool(
            "a4",
            "edit",
            json!({"file_path": "notes.txt", "old_string": "buffer", "new_string": "edited"}),
        )
        .when("A-three"),
        Reply::text("notes edited").when("A-three"),
        Reply::tool("b2", "bash", json!({"command": "touch b2.txt"})).when("B-two"),
        Reply::text("read").when("B-two"),
        // B in plan mode: the plan is approved as a question.
        Reply::tool("b3", "exit_plan_mode", json!({"plan": "1. Write plan.txt"})).when("B-plan"),
        Reply::text("carrying it out").when("B-plan"),
        // A session started after the rule was stored: it no longer asks.
        write("c1", "C-one"),
        Reply::text("made in C").when("C-one"),
    ]);
    replies
}

fn permissions_for(editor: &Shared, call: &str) -> Vec<Value> {
    let e = editor.lock().unwrap();
    e.log
        .iter()
        .filter(|l| l["what"] == "permission" && l["toolCall"]["toolCallId"] == call)
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_keep_their_own_rules_and_modes_and_use_the_editors_files() {
    let home = TestHome::new();
    let notes = home.path("notes.txt");
    std::fs::write(&notes, "disk notes\n").unwrap();
    let editor: Shared = Arc::default();
    editor
        .lock()
        .unwrap()
        .buffers
        .insert(notes.clone(), "buffer notes\n".into());
    let mock = MockModel::start(Format::Anthropic, script()).await;
    let cwd = home.project.path().to_path_buf();

    let (a, b, c) = as_editor(&home, &mock, editor.clone(), async move |cx| {
        let caps = acp::ClientCapabilities::new()
            .fs(acp::FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true))
            .terminal(true);
        let init = acp::InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps);
        cx.send_request(init).block_task().await?;
        let a = new_session(&cx, &cwd).await?;
        let b = new_session(&cx, &cwd).await?;
        prompt(&cx, &a, "A-one").await?;
        prompt(&cx, &a, "A-two").await?;
        prompt(&cx, &b, "B-one").await?;
        let mode = |id: &acp::SessionId, m: &str| {
            acp::SetSessionModeRequest::new(id.clone(), m.to_string())
        };
        cx.send_request(mode(&a, "always-ask")).block_task().await?;
        prompt(&cx, &a, "A-three").await?;
        prompt(&cx, &b, "B-two").await?;
        cx.send_request(mode(&b, "plan")).block_task().await?;
        prompt(&cx, &b, "B-plan").await?;
        let c = new_session(&cx, &cwd).await?;
        prompt(&cx, &c, "C-one").await?;
        Ok((a, b, c))
    })
    .await;

    rules_and_modes_stay_in_their_session(&editor);
    the_editors_files_and_no_terminal(&editor, &mock, &home, &notes);
    the_plan_was_approved_as_a_question(&editor, [&a, &b, &c]);
}

/// The rule "always" stored in A: A's next write and C's (C started after
/// the rule was written to the config) do not ask; B, already running with
/// its own rules, does. A's mode is A's: its command asks in always-ask,
/// B's does not.
fn rules_and_modes_stay_in_their_session(editor: &Shared) {
    let a1 = permissions_for(editor, "a1");
    assert_eq!(a1.len(), 1);
    assert!(
        a1[0]["picked"]
            .as_str()
            .unwrap()
            .starts_with("allow_always"),
        "{a1:?}"
    );
    assert!(permissions_for(editor, "a2").is_empty());
    assert_eq!(permissions_for(editor, "b1").len(), 1, "B used A's rule");
    assert!(permissions_for(editor, "c1").is_empty());
    assert_eq!(permissions_for(editor, "a3").len(), 1);
    assert!(permissions_for(editor, "b2").is_empty());
}

/// The view read the buffer (the model saw it), the edit asked with the
/// buffer's diff, then landed on the disk; the editor was never asked to
/// write (it would open the name outside cairn's hold).
/// The editor refused its terminal: cairn asked for one with its own
/// launcher, then ran the commands itself.
fn the_editors_files_and_no_terminal(
    editor: &Shared,
    mock: &MockModel,
    home: &TestHome,
    notes: &std::path::Path,
) {
    let sent: String = mock.requests().iter().map(|r| r.to_string()).collect();
    assert!(
        sent.contains("buffer notes"),
        "the model was not shown the buffer"
    );
    assert!(!sent.contains("disk notes"));
    let e = editor.lock().unwrap();
    let at = |pred: &dyn Fn(&Value) -> bool| e.log.iter().position(pred);
    let path = notes.display().to_string();
    let asked = at(&|l| l["toolCall"]["toolCallId"] == "a4").expect("the edit asked");
    assert!(at(&|l| l["what"] == "write").is_none(), "{:?}", e.log);
    let read = at(&|l| l["what"] == "read" && l["path"] == path.as_str()).expect("read");
    assert!(read < asked, "{:?}", e.log);
    let diff = &e.log[asked]["toolCall"]["content"][0];
    assert_eq!(diff["oldText"], "buffer notes\n", "{diff}");
    assert_eq!(std::fs::read_to_string(notes).unwrap(), "edited notes\n");

    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_cairn"))
        .canonicalize()
        .unwrap();
    let asked: Vec<&Value> = e.log.iter().filter(|l| l["what"] == "terminal").collect();
    assert!(!asked.is_empty(), "{:?}", e.log);
    for t in asked {
        assert_eq!(t["command"], exe.display().to_string(), "{t}");
        assert_eq!(t["args"][0], "__contained", "{t}");
    }
    for made in ["made.txt", "a3.txt", "b2.txt"] {
        assert!(home.path(made).exists(), "{made}");
    }
    for id in ["a1", "a2", "b1", "c1"] {
        let made = std::fs::read_to_string(home.path(&format!("out/{id}.txt")));
        assert_eq!(made.ok().as_deref(), Some("made\n"), "{id}");
    }
}

/// Plan mode is offered; its plan was approved as a question, and the
/// session went on in smart mode with the plan as its todo list.
fn the_plan_was_approved_as_a_question(editor: &Shared, [a, b, c]: [&acp::SessionId; 3]) {
    let e = editor.lock().unwrap();
    let at = |pred: &dyn Fn(&Value) -> bool| e.log.iter().position(pred);
    let plan = at(&|l| l["what"] == "permission" && l["picked"] == "approve_smart")
        .expect("the plan was asked about");
    assert_eq!(
        e.log[plan]["toolCall"]["content"][0]["content"]["text"],
        "1. Write plan.txt"
    );
    let of = |id: &acp::SessionId, kind: &str| -> Vec<Value> {
        e.updates
            .iter()
            .filter(|(s, u)| s == id.0.as_ref() && u["sessionUpdate"] == kind)
            .map(|(_, u)| u.clone())
            .collect()
    };
    let modes: Vec<Value> = of(b, "current_mode_update")
        .iter()
        .map(|u| u["currentModeId"].clone())
        .collect();
    assert_eq!(modes, [json!("plan"), json!("smart")]);
    assert_eq!(of(b, "plan")[0]["entries"][0]["content"], "Write plan.txt");
    let a_modes: Vec<Value> = of(a, "current_mode_update")
        .iter()
        .map(|u| u["currentModeId"].clone())
        .collect();
    assert_eq!(a_modes, [json!("always-ask")]);
    assert!(of(c, "current_mode_update").is_empty());
}
