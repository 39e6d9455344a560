//! The same editor conversation as tests/acp_sdk.rs, through the client
//! side of the Rust `agent-client-protocol` crate, against the real
//! `cairn acp` binary and the scripted model: initialize, a new session, an
//! edit asked with its diff and allowed, a command whose output streams as
//! call updates, streamed text, a cancel
//! mid-stream, and the session loaded again by a second process (in the
//! mode it was left in, with its title).

use crate::{mock_model, test_home};
use std::process::Stdio;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{ByteStreams, Client};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

pub(crate) type Updates = mpsc::UnboundedReceiver<acp::SessionUpdate>;

fn spawn_cairn(home: &TestHome, mock: &MockModel) -> tokio::process::Child {
    home.command(&mock.url())
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Runs `op` as the editor of a fresh `cairn acp`, which allows every
/// permission request it is asked, once (and records each, as JSON).
pub(crate) async fn as_editor<T: Send + 'static>(
    home: &TestHome,
    mock: &MockModel,
    op: impl AsyncFnOnce(
        agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
        Updates,
        mpsc::UnboundedReceiver<Value>,
    ) -> Result<T, agent_client_protocol::Error>,
) -> T {
    let mut child = spawn_cairn(home, mock);
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let (utx, urx) = mpsc::unbounded_channel();
    let (ptx, prx) = mpsc::unbounded_channel();
    let conversation = Client
        .v1()
        .name("cairn-rust-test")
        .on_receive_notification(
            async move |n: acp::SessionNotification, _cx| {
                let _ = utx.send(n.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: acp::RequestPermissionRequest, responder, _cx| {
                let _ = ptx.send(serde_json::to_value(&req).unwrap());
                let allow = (req.options.iter())
                    .find(|o| o.kind == acp::PermissionOptionKind::AllowOnce)
                    .expect("every question can be allowed once");
                responder.respond(acp::RequestPermissionResponse::new(
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        allow.option_id.clone(),
                    )),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx| op(cx, urx, prx).await);
    let result = tokio::time::timeout(Duration::from_secs(60), conversation)
        .await
        .expect("the conversation ended in time");
    result_or_kill(result, &mut child).await
}

async fn result_or_kill<T>(
    result: Result<T, agent_client_protocol::Error>,
    child: &mut tokio::process::Child,
) -> T {
    match result {
        Ok(v) => {
            let status = tokio::time::timeout(Duration::from_secs(20), child.wait()).await;
            assert!(
                matches!(&status, Ok(Ok(s)) if s.success()),
                "cairn acp ended badly: {status:?}"
            );
            v
        }
        Err(e) => {
            let _ = child.kill().await;
            panic!("the ACP conversation failed: {e:?}");
        }
    }
}

pub(crate) fn kind(u: &acp::SessionUpdate) -> String {
    serde_json::to_value(u).unwrap()["sessionUpdate"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(crate) fn message_text(updates: &[acp::SessionUpdate], wanted: &str) -> String {
    updates
        .iter()
        .filter(|u| kind(u) == wanted)
        .map(|u| {
            serde_json::to_value(u).unwrap()["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

pub(crate) fn drain(rx: &mut Updates) -> Vec<acp::SessionUpdate> {
    let mut out = Vec::new();
    while let Ok(u) = rx.try_recv() {
        out.push(u);
    }
    out
}

pub(crate) fn text_prompt(id: &acp::SessionId, text: &str) -> acp::PromptRequest {
    acp::PromptRequest::new(
        id.clone(),
        vec![acp::ContentBlock::Text(acp::TextContent::new(text))],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_on_the_rust_sdk_edits_cancels_and_reloads() {
    let home = TestHome::new();
    let file = home.path("a.txt");
    std::fs::write(&file, "alpha\n").unwrap();
    let story = "A long story, told one small piece at a time. ".repeat(6);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Looking.").tool_call("v1", "view", json!({"file_path": "a.txt"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
            ),
            Reply::tool(
                "b1",
                "bash",
                json!({"command": "printf 'one\\n'; sleep 0.5; printf 'two\\n'"}),
            ),
            Reply::text("Changed it to beta.")
                .chunk_chars(3)
                .chunk_delay(Duration::from_millis(10)),
            Reply::text("Beta edit"),
            Reply::text(&story)
                .chunk_chars(2)
                .chunk_delay(Duration::from_millis(40)),
        ],
    )
    .await;
    let cwd = home.project.path().to_path_buf();

    let c = cwd.clone();
    let (id, edit, asked, cancel, cancelled_text) =
        as_editor(&home, &mock, async move |cx, mut updates, mut perms| {
            let init = cx
                .send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            assert!(init.agent_capabilities.load_session);
            let new = cx
                .send_request(acp::NewSessionRequest::new(c.clone()))
                .block_task()
                .await?;
            let id = new.session_id;
            let done = cx
                .send_request(text_prompt(&id, "make it beta"))
                .block_task()
                .await?;
            let edit = drain(&mut updates);
            let asked = perms.try_recv().expect("the edit asked");
            assert_eq!(done.stop_reason, acp::StopReason::EndTurn);
            // The title's own model call comes after the turn; wait for it.
            loop {
                let u = updates.recv().await.expect("updates go on");
                if kind(&u) == "session_info_update" {
                    break;
                }
            }
            let slow = cx.send_request(text_prompt(&id, "a story please"));
            let mut told = Vec::new();
            while !told.iter().any(|u| kind(u) == "agent_message_chunk") {
                told.push(updates.recv().await.expect("the story starts"));
            }
            cx.send_notification(acp::CancelNotification::new(id.clone()))?;
            let stopped = slow.block_task().await?;
            told.extend(drain(&mut updates));
            // The session is left in always-ask, which its load answers with.
            cx.send_request(acp::SetSessionModeRequest::new(id.clone(), "always-ask"))
                .block_task()
                .await?;
            Ok((
                id,
                edit,
                asked,
                stopped.stop_reason,
                message_text(&told, "agent_message_chunk"),
            ))
        })
        .await;

    let d = &asked["toolCall"]["content"][0];
    assert_eq!(d["type"], "diff", "{asked}");
    assert_eq!(d["path"], file.display().to_string());
    assert_eq!(d["oldText"], "alpha\n");
    assert_eq!(d["newText"], "beta\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "beta\n");
    let chunks = edit
        .iter()
        .filter(|u| kind(u) == "agent_message_chunk")
        .count();
    assert!(chunks >= 4, "{chunks}");
    assert!(message_text(&edit, "agent_message_chunk").contains("Changed it to beta."));
    // The command's output came as call updates while it ran, before its end.
    let b1: Vec<Value> = edit
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .filter(|u| u["toolCallId"] == "b1")
        .collect();
    assert_eq!(b1[0]["kind"], "execute", "{b1:?}");
    let streamed = b1
        .iter()
        .position(|u| u["status"].is_null() && u["content"][0]["content"]["text"] == "one\n")
        .unwrap_or_else(|| panic!("no output update before the end: {b1:?}"));
    let finished = b1.iter().position(|u| u["status"] == "completed").unwrap();
    assert!(streamed < finished, "{b1:?}");
    assert!(b1[finished]["rawOutput"].as_str().unwrap().contains("two"));
    assert_eq!(cancel, acp::StopReason::Cancelled);
    assert!(!cancelled_text.is_empty() && cancelled_text.len() < story.len());

    let (loaded, replayed) = as_editor(&home, &mock, async move |cx, mut updates, _perms| {
        cx.send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let loaded = cx
            .send_request(acp::LoadSessionRequest::new(id, cwd))
            .block_task()
            .await?;
        Ok((loaded, drain(&mut updates)))
    })
    .await;
    let modes = loaded.modes.expect("the load answers with the modes");
    assert_eq!(modes.current_mode_id.0.as_ref(), "always-ask");
    let titles: Vec<Value> = replayed
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .map(|u| u["title"].clone())
        .collect();
    assert_eq!(titles, [json!("Beta edit")]);
    assert!(message_text(&replayed, "user_message_chunk").contains("make it beta"));
    assert!(message_text(&replayed, "agent_message_chunk").contains("Changed it to beta."));
    let edit_call = replayed
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "e1")
        .expect("the edit is replayed");
    assert_eq!(edit_call["status"], "completed");
    assert_eq!(edit_call["content"][0]["type"], "diff");
}

/// The pyright processes below this test whose folder is `cwd`.
fn pyright_in(cwd: &std::path::Path) -> Vec<u32> {
    crate::lsp_tui::descendants_named(std::process::id(), "pyright")
        .into_iter()
        .filter(|p| std::fs::read_link(format!("/proc/{p}/cwd")).is_ok_and(|c| c == cwd))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_a_session_stops_its_language_servers() {
    let Some(bin) = crate::lsp_run::servers_bin() else {
        return;
    };
    let home = TestHome::new();
    home.write("app.py", "x = 1\n");
    let config = home.home.path().join("config/cairn/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[lsp.pyright]\ncommand = \"{}\"\n",
            bin.join("pyright-langserver").display()
        ),
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "app.py"})),
            Reply::text("Viewed."),
            Reply::text("Title"),
        ],
    )
    .await;
    let cwd = home.project.path().to_path_buf();
    let real = cwd.canonicalize().unwrap();
    let (started, left) = as_editor(&home, &mock, async move |cx, _updates, _perms| {
        cx.send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let new = cx
            .send_request(acp::NewSessionRequest::new(cwd.clone()))
            .block_task()
            .await?;
        let id = new.session_id;
        cx.send_request(text_prompt(&id, "look at app.py"))
            .block_task()
            .await?;
        let mut started = Vec::new();
        for _ in 0..300 {
            started = pyright_in(&real);
            if !started.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Loading the open session closes it first (cairn acp goes on).
        cx.send_request(acp::LoadSessionRequest::new(id, cwd))
            .block_task()
            .await?;
        let left: Vec<u32> = (started.iter().copied())
            .filter(|&p| crate::lsp_tui::alive(p, "pyright"))
            .collect();
        Ok((started, left))
    })
    .await;
    assert!(!started.is_empty(), "the view started pyright");
    assert!(left.is_empty(), "still running after the close: {left:?}");
}

/// A base64 PNG of `width`×`height`.
fn png(width: u32, height: u32) -> String {
    use base64::Engine;
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(width, height)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(out.into_inner())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editors_picture_reaches_the_model_scaled_down() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("A wide black picture."), Reply::text("Picture")],
    )
    .await;
    let cwd = home.project.path().to_path_buf();
    let stop = as_editor(&home, &mock, async move |cx, _updates, _perms| {
        cx.send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let id = cx
            .send_request(acp::NewSessionRequest::new(cwd))
            .block_task()
            .await?
            .session_id;
        let prompt = acp::PromptRequest::new(
            id,
            vec![
                acp::ContentBlock::Text(acp::TextContent::new("what is this?")),
                // Wider than providers take, and called a JPEG.
                acp::ContentBlock::Image(acp::ImageContent::new(png(3000, 60), "image/jpeg")),
            ],
        );
        Ok(cx.send_request(prompt).block_task().await?.stop_reason)
    })
    .await;
    assert_eq!(stop, acp::StopReason::EndTurn);
    let sent = &mock.requests()[0];
    let image = sent["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no picture sent: {sent}"));
    assert_eq!(image["source"]["media_type"], "image/png", "{image}");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image["source"]["data"].as_str().unwrap())
        .unwrap();
    let got = image::load_from_memory(&bytes).unwrap();
    assert_eq!((got.width(), got.height()), (2000, 40));
}
