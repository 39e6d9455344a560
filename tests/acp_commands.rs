//! Slash commands from an editor, through the client side of the Rust
//! `agent-client-protocol` crate against the real `cairn acp`: the session
//! offers cairn's own commands and the person's custom ones (one named as
//! a built-in is hidden); `/undo` asks before restoring the file the last
//! turn edited; `/memory`, `/compact`, `/effort` and `/rename` answer as
//! message text and end their prompt without asking the model anything
//! but the compaction's summary; a custom command reaches the model
//! expanded.

use crate::acp_rust_client::{Updates, as_editor, drain, kind, message_text, text_prompt};
use crate::{mock_model, test_home};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_runs_cairns_commands_and_the_persons_own() {
    let home = TestHome::new();
    let file = home.path("a.txt");
    std::fs::write(&file, "alpha\n").unwrap();
    home.write("AGENTS.md", "Be brief.\n");
    let commands = home.home.path().join("config/cairn/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: Greet someone by name\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS, warmly.\n",
    )
    .unwrap();
    std::fs::write(
        commands.join("compact.md"),
        "---\ndescription: my own compact\n---\nShadowed.\n",
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "a.txt"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
            ),
            Reply::text("Changed it."),
            Reply::text("Beta edit"),
            Reply::text("You're welcome."),
            Reply::text("We changed alpha to beta and undid it."),
            Reply::text("Hello Bob!"),
        ],
    )
    .await;
    let cwd = home.project.path().to_path_buf();
    let f = file.clone();
    let (offered, said, asked, after_undo) =
        as_editor(&home, &mock, async move |cx, mut updates, mut perms| {
            cx.send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let id = cx
                .send_request(acp::NewSessionRequest::new(cwd))
                .block_task()
                .await?
                .session_id;
            let mut said = serde_json::Map::new();
            let run = async |text: &str, updates: &mut Updates| {
                let done = cx.send_request(text_prompt(&id, text)).block_task().await?;
                assert_eq!(done.stop_reason, acp::StopReason::EndTurn, "{text}");
                // The client hands notifications on as they are read, which
                // may be after the answer resolved: take them until quiet.
                let mut got = drain(updates);
                let quiet = std::time::Duration::from_millis(300);
                while let Ok(Some(u)) = tokio::time::timeout(quiet, updates.recv()).await {
                    got.push(u);
                }
                Ok::<_, agent_client_protocol::Error>(got)
            };
            let first = run("make it beta", &mut updates).await?;
            let offered = first
                .iter()
                .map(|u| serde_json::to_value(u).unwrap())
                .find(|u| u["sessionUpdate"] == "available_commands_update")
                .expect("the session offers its commands");
            // The title's own model call comes after the turn; wait for it.
            let mut titled = first.iter().any(|u| kind(u) == "session_info_update");
            while !titled {
                let u = updates.recv().await.expect("updates go on");
                titled = kind(&u) == "session_info_update";
            }
            perms.try_recv().expect("the edit asked");
            let undo = run("/undo", &mut updates).await?;
            let asked = perms.try_recv().expect("/undo asked");
            let after_undo = std::fs::read_to_string(&f).unwrap();
            said.insert(
                "undo".into(),
                json!(message_text(&undo, "agent_message_chunk")),
            );
            let undo_call: Vec<Value> = undo
                .iter()
                .map(|u| serde_json::to_value(u).unwrap())
                .filter(|u| u["toolCallId"] == "undo-1")
                .collect();
            said.insert("undo_call".into(), json!(undo_call));
            for text in [
                "/memory",
                "thanks",
                "/compact",
                "/effort hard",
                "/rename Better title",
                "/greet Bob",
            ] {
                let got = run(text, &mut updates).await?;
                let info: Vec<Value> = got
                    .iter()
                    .map(|u| serde_json::to_value(u).unwrap())
                    .filter(|u| u["sessionUpdate"] == "session_info_update")
                    .map(|u| u["title"].clone())
                    .collect();
                said.insert(
                    text.into(),
                    json!({"text": message_text(&got, "agent_message_chunk"), "titles": info}),
                );
            }
            Ok((offered, said, asked, after_undo))
        })
        .await;

    let names: Vec<&str> = offered["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for wanted in [
        "compact", "undo", "init", "memory", "lsp", "effort", "rename", "greet",
    ] {
        assert_eq!(
            names.iter().filter(|n| **n == wanted).count(),
            1,
            "{wanted} once in {names:?}"
        );
    }
    assert!(!names.contains(&"theme"), "{names:?}");
    let greet = (offered["availableCommands"].as_array().unwrap())
        .iter()
        .find(|c| c["name"] == "greet")
        .unwrap();
    assert_eq!(greet["input"]["hint"], "<name>", "{greet}");

    // /undo asked, with the file it restores, and restored it.
    assert_eq!(asked["toolCall"]["toolCallId"], "undo-1", "{asked}");
    assert!(
        asked["toolCall"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("restore a.txt"),
        "{asked}"
    );
    assert_eq!(after_undo, "alpha\n");
    assert!(
        said["undo"].as_str().unwrap().contains("Restored: a.txt"),
        "{said:?}"
    );
    let call: Vec<(&Value, &Value)> = (said["undo_call"].as_array().unwrap())
        .iter()
        .map(|u| (&u["sessionUpdate"], &u["status"]))
        .collect();
    assert_eq!(
        call,
        [
            (&json!("tool_call"), &Value::Null),
            (&json!("tool_call_update"), &json!("completed"))
        ]
    );

    let text = |k: &str| said[k]["text"].as_str().unwrap().to_string();
    assert!(text("/memory").contains("AGENTS.md (at start)"), "{said:?}");
    assert!(text("thanks").contains("You're welcome."));
    assert!(
        text("/compact").contains("the older turns are a summary now"),
        "{said:?}"
    );
    assert!(
        text("/effort hard").contains("not an effort level"),
        "{said:?}"
    );
    assert_eq!(
        said["/rename Better title"]["titles"],
        json!(["Better title"])
    );
    assert!(text("/greet Bob").contains("Hello Bob!"));

    // The model was asked for the turns, the title, the summary and the
    // custom command, expanded; never for cairn's own commands.
    let requests = mock.requests();
    assert_eq!(requests.len(), 7, "{requests:#?}");
    let last = requests.last().unwrap().to_string();
    assert!(last.contains("Say hello to Bob, warmly."), "{last}");
    assert!(!last.contains("/effort"), "{last}");
}
