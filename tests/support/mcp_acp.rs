//! `cairn acp` with the test MCP server of tests/mcp_tui.rs (a module of
//! that binary, which serves as the server): the server's questions reach
//! an editor as options, or are declined at once.

use std::time::Duration;

use agent_client_protocol::v1::schema as acp;
use serde_json::json;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::mock_model::Reply;
use super::test_home::TestHome;
use super::{model, test_server};

/// Over ACP (the Rust crate's client side): the server's single choice
/// reaches the editor as `session/request_permission` with the choices as
/// options, and the pick is the server's answer; a form of several fields,
/// which an editor has no form for, is declined at once with a note in the
/// thread, and the turn ends instead of waiting.
pub fn in_an_editor_a_choice_is_asked_and_a_form_declined() {
    let (rt, mock) = model(vec![
        Reply::text("A title").when("Write a title for the coding session"),
        Reply::tool("p1", "mcp__test__ask", json!({"pick": true})).when("first"),
        Reply::text("Deploying.").when("first"),
        Reply::tool("f1", "mcp__test__ask", json!({})).when("second"),
        Reply::text("No answer then.").when("second"),
    ]);
    let home = TestHome::new();
    let dir = home.home.path().join("config").join("cairn");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("config.toml"),
        test_server("test", "trusted = true"),
    )
    .unwrap();
    let editor = Editor::default();
    let stops = rt.block_on(converse(&home, &mock.url(), &editor));
    assert_eq!(stops, [acp::StopReason::EndTurn, acp::StopReason::EndTurn]);
    let asked = editor.asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "only the choice was asked: {asked:?}");
    let names: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["staging", "production", "Decline"]);
    assert!(
        asked[0]["toolCall"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Where to deploy?")
    );
    let sent: String = mock.requests().iter().map(|r| r.to_string()).collect();
    let accepted = sent
        .find("answer: Accept")
        .expect("the pick was the answer");
    let answer: String = sent[accepted..].chars().take(80).collect();
    assert!(answer.contains("production"), "{answer}");
    assert!(sent.contains("answer: Decline"), "{sent}");
    assert!(
        editor.notes.lock().unwrap().contains("cairn declined it"),
        "{}",
        editor.notes.lock().unwrap()
    );
}

type Shared<T> = std::sync::Arc<std::sync::Mutex<T>>;

/// What the editor was asked, and the agent's text it was shown.
#[derive(Default)]
struct Editor {
    asked: Shared<Vec<serde_json::Value>>,
    notes: Shared<String>,
}

/// Two prompts from an editor that picks "production" when offered it.
async fn converse(home: &TestHome, url: &str, editor: &Editor) -> Vec<acp::StopReason> {
    let cwd = home.project.path().to_path_buf();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("acp")
        .current_dir(&cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(url))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cairn acp starts");
    let transport = agent_client_protocol::ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let (a, n) = (editor.asked.clone(), editor.notes.clone());
    let talk = agent_client_protocol::Client
        .v1()
        .name("cairn-mcp-test")
        .on_receive_notification(
            async move |note: acp::SessionNotification, _cx| {
                if let acp::SessionUpdate::AgentMessageChunk(c) = note.update
                    && let acp::ContentBlock::Text(t) = c.content
                {
                    n.lock().unwrap().push_str(&t.text);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: acp::RequestPermissionRequest, responder, _cx| {
                let pick = req
                    .options
                    .iter()
                    .find(|o| o.name == "production")
                    .map(|o| o.option_id.0.to_string())
                    .unwrap_or_else(|| "decline".into());
                a.lock().unwrap().push(serde_json::to_value(&req).unwrap());
                responder.respond(acp::RequestPermissionResponse::new(
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        pick,
                    )),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx| {
            let init =
                acp::InitializeRequest::new(agent_client_protocol::schema::ProtocolVersion::V1);
            cx.send_request(init).block_task().await?;
            let new = acp::NewSessionRequest::new(cwd.clone());
            let id = cx.send_request(new).block_task().await?.session_id;
            let mut stops = Vec::new();
            for text in ["first: deploy", "second: who am I"] {
                let block = acp::ContentBlock::Text(acp::TextContent::new(text));
                let req = acp::PromptRequest::new(id.clone(), vec![block]);
                stops.push(cx.send_request(req).block_task().await?.stop_reason);
            }
            Ok(stops)
        });
    let stops = tokio::time::timeout(Duration::from_secs(60), talk)
        .await
        .expect("no question was left waiting")
        .expect("the ACP conversation");
    let _ = child.kill().await;
    stops
}
