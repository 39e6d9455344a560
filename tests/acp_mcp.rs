//! The MCP servers an editor passes with `session/new`, through the client
//! side of the Rust `agent-client-protocol` crate against the real `cairn
//! acp`: cairn says it takes HTTP and SSE servers besides stdio, starts the
//! editor's server (the MCP reference server from npm) for the session, and
//! the model's call of its tool runs after the editor allowed it.

use crate::acp_rust_client::{as_editor, text_prompt};
use crate::mcp_everything::{FETCHED, PACKAGE, fetch_package};
use crate::{mock_model, test_home};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::TestHome;

#[tokio::test(flavor = "multi_thread")]
async fn the_editors_mcp_servers_serve_the_session() {
    if let Err(why) = FETCHED.get_or_init(fetch_package).await {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: the_editors_mcp_servers_serve_the_session: {why}"
        );
        return;
    }
    let Some(npx) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("npx"))
        .find(|p| p.is_file())
    else {
        eprintln!("skipped: the_editors_mcp_servers_serve_the_session: no npx");
        return;
    };
    // The package as fetched above, from the cache of this test's user.
    let cache = std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".npm");
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "m1",
                "mcp__everything__echo",
                json!({"message": "from the editor's server"}),
            ),
            Reply::text("It echoed."),
            Reply::text("Echo"),
        ],
    )
    .await;
    let cwd = home.project.path().to_path_buf();
    let server = acp::McpServer::Stdio(
        acp::McpServerStdio::new("everything", npx)
            .args(vec!["-y".into(), "--prefer-offline".into(), PACKAGE.into()])
            .env(vec![
                acp::EnvVariable::new("NPM_CONFIG_CACHE", cache.display().to_string()),
                acp::EnvVariable::new("NPM_CONFIG_UPDATE_NOTIFIER", "false"),
            ]),
    );
    let (init, asked, stop) = as_editor(&home, &mock, async move |cx, _updates, mut perms| {
        let init = cx
            .send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let id = cx
            .send_request(acp::NewSessionRequest::new(cwd).mcp_servers(vec![server]))
            .block_task()
            .await?
            .session_id;
        let done = cx
            .send_request(text_prompt(&id, "echo something"))
            .block_task()
            .await?;
        Ok((init, perms.try_recv().ok(), done.stop_reason))
    })
    .await;
    let mcp = &init.agent_capabilities.mcp_capabilities;
    assert!(mcp.http && mcp.sse, "{mcp:?}");
    assert_eq!(stop, acp::StopReason::EndTurn);
    let asked = asked.expect("the server's tool asked first");
    assert_eq!(asked["toolCall"]["toolCallId"], "m1", "{asked}");
    let requests = mock.requests();
    let first = requests[0].to_string();
    assert!(
        first.contains("mcp__everything__echo"),
        "no tool offered: {first}"
    );
    let result = requests[1].to_string();
    assert!(
        result.contains("Echo: from the editor's server"),
        "{result}"
    );
}
