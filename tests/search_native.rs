//! The providers' own web search through `cairn run`: offered only when the
//! person's rules allow `web_search` outright, never run by cairn, its
//! queries and sources shown (escaped), its blocks sent back on the next
//! request as each provider needs, stored with the session and exported.

use crate::{mock_model, test_home};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

const PAGES: [(&str, &str); 2] = [
    (
        "Rust 2026 \x1b]0;pwned\x07release",
        "https://blog.rust-lang.org/2026",
    ),
    ("LWN", "https://lwn.net/rust"),
];

/// A search and an answer citing it that also reads a file, so the turn
/// makes a second request; then the last answer.
fn script() -> Vec<Reply> {
    vec![
        Reply::text("Rust 2026 shipped.")
            .searched("rust 2026 release", &PAGES)
            .tool_call("call_1", "view", json!({"file_path": "notes.md"})),
        Reply::text("Done."),
    ]
}

/// `kind` for a provider of that kind at the mock (`None`: Anthropic from
/// the environment, as a new user has it).
fn configure(home: &TestHome, mock: &MockModel, kind: Option<&str>, extra: &str) {
    let provider = match kind {
        Some(kind) => format!(
            "provider = \"mine\"\n[providers.mine]\nkind = \"{kind}\"\nbase_url = \"{}\"\napi_key_env = \"MINE_KEY\"\nmodel = \"some-model\"\n",
            mock.url()
        ),
        None => String::new(),
    };
    home.write_config(&format!("{provider}{extra}"));
    home.write("notes.md", "the notes\n");
}

async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> (bool, String, String) {
    let out = home
        .command(&mock.url())
        .env("MINE_KEY", "test-key")
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tools(request: &Value) -> Vec<Value> {
    request["tools"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn anthropic_search_shows_its_sources_and_goes_back_with_the_next_request() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, script()).await;
    configure(&home, &mock, None, "");
    let (ok, stdout, stderr) = run(
        &home,
        &mock,
        &["run", "--allow", "web_search", "what shipped?"],
    )
    .await;
    assert!(ok, "{stdout}\n{stderr}");
    let first = &mock.requests()[0];
    let entry = &tools(first)[0];
    assert_eq!(entry["type"], "web_search_20250305", "{entry}");
    assert_eq!(entry["max_uses"], 5);
    // Shown, escaped, numbered; the answer's citation listed under it.
    assert!(
        stderr.contains("⌕ web search \"rust 2026 release\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("  2. LWN <https://lwn.net/rust>"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\x1b') && !stderr.contains('\x07'),
        "{stderr:?}"
    );
    assert!(stderr.contains("Sources:\n  1. Rust 2026"), "{stderr}");
    // Never a call of cairn's: only `view` ran.
    assert!(stderr.contains("view notes.md"), "{stderr}");
    assert!(!stderr.contains("→ web_search"), "{stderr}");
    // The next request carries the call and its results, encrypted page
    // text included, before the answer's text.
    let second = &mock.requests()[1];
    let said = &second["messages"][1]["content"];
    assert_eq!(said[0]["type"], "server_tool_use", "{said}");
    assert_eq!(said[0]["input"]["query"], "rust 2026 release");
    assert_eq!(said[1]["type"], "web_search_tool_result");
    assert_eq!(said[1]["tool_use_id"], said[0]["id"]);
    assert_eq!(said[1]["content"][0]["encrypted_content"], "ENC-PAGE-0");
    assert_eq!(said[2]["type"], "text");
    assert!(
        !second
            .to_string()
            .contains(r#""type":"tool_use","id":"srvtoolu"#)
    );
}

#[tokio::test]
async fn without_an_allow_rule_no_search_is_offered_and_a_deny_rule_wins() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    configure(&home, &mock, None, "");
    let (ok, _, stderr) = run(&home, &mock, &["run", "--mode", "auto", "hi"]).await;
    assert!(ok, "{stderr}");
    let offered = mock.requests()[0].to_string();
    assert!(!offered.contains("web_search"), "{offered}");

    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    configure(
        &home,
        &mock,
        None,
        "[permissions]\nallow = [\"web_search\"]\ndeny = [\"web_search\"]\n",
    );
    let (ok, _, stderr) = run(&home, &mock, &["run", "hi"]).await;
    assert!(ok, "{stderr}");
    assert!(!mock.requests()[0].to_string().contains("web_search"));
}

#[tokio::test]
async fn a_configured_service_keeps_cairns_own_tool_and_off_turns_search_off() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    configure(
        &home,
        &mock,
        None,
        "[search]\nprovider = \"searxng\"\nurl = \"http://127.0.0.1:9\"\n",
    );
    let (ok, _, stderr) = run(&home, &mock, &["run", "--allow", "web_search", "hi"]).await;
    assert!(ok, "{stderr}");
    let offered = tools(&mock.requests()[0]);
    assert!(
        offered
            .iter()
            .any(|t| t["name"] == "web_search" && t.get("input_schema").is_some())
    );
    assert!(!offered.iter().any(|t| t["type"] == "web_search_20250305"));

    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    configure(&home, &mock, None, "[search]\nprovider = \"off\"\n");
    let (ok, _, stderr) = run(&home, &mock, &["run", "--allow", "web_search", "hi"]).await;
    assert!(ok, "{stderr}");
    assert!(!mock.requests()[0].to_string().contains("web_search"));
}

#[tokio::test]
async fn responses_search_goes_back_as_its_call_and_json_lines_carry_it() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Responses, script()).await;
    configure(
        &home,
        &mock,
        Some("openai-responses"),
        "[permissions]\nallow = [\"web_search\"]\n",
    );
    let (ok, stdout, stderr) = run(&home, &mock, &["run", "--json", "what shipped?"]).await;
    assert!(ok, "{stdout}\n{stderr}");
    assert!(tools(&mock.requests()[0]).contains(&json!({"type": "web_search"})));
    let lines: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let search = lines
        .iter()
        .find(|l| l["type"] == "web_search")
        .expect("a web_search line");
    assert_eq!(search["queries"], json!(["rust 2026 release"]));
    assert_eq!(search["sources"][1]["url"], "https://lwn.net/rust");
    let cited = lines
        .iter()
        .find(|l| l["type"] == "citations")
        .expect("a citations line");
    assert_eq!(
        cited["sources"][0]["url"],
        "https://blog.rust-lang.org/2026"
    );
    let input = mock.requests()[1]["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let call = input
        .iter()
        .find(|i| i["type"] == "web_search_call")
        .expect("the search call goes back");
    assert_eq!(call["action"]["query"], "rust 2026 release");
    assert!(call.get("id").is_none(), "never stored: {call}");
}

#[tokio::test]
async fn gemini_grounding_shows_in_chat_mode_and_is_stored_and_exported() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Gemini,
        vec![Reply::text("Rust 2026 shipped.").searched("rust 2026 release", &PAGES)],
    )
    .await;
    configure(
        &home,
        &mock,
        Some("gemini"),
        "[permissions]\nallow = [\"web_search\"]\n",
    );
    let (ok, stdout, stderr) = run(&home, &mock, &["run", "--mode", "chat", "what shipped?"]).await;
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(mock.requests()[0]["tools"], json!([{"google_search": {}}]));
    assert!(
        stderr.contains("⌕ web search \"rust 2026 release\""),
        "{stderr}"
    );
    assert!(stderr.contains("  1. Rust 2026"), "{stderr}");
    // The session keeps it: `sessions show` and the Markdown export list it.
    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("cairn: session "))
        .unwrap_or_else(|| panic!("a session: {stderr}"))
        .trim()
        .to_string();
    let export = home
        .command(&mock.url())
        .args(["sessions", "export", &id])
        .output()
        .await
        .unwrap();
    let md = String::from_utf8_lossy(&export.stdout);
    assert!(md.contains("**Web search:** rust 2026 release"), "{md}");
    assert!(md.contains("2. LWN <https://lwn.net/rust>"), "{md}");
    assert!(md.contains("**Sources cited**"), "{md}");
    let show = home
        .command(&mock.url())
        .args(["sessions", "show", &id])
        .output()
        .await
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("⌕ web search \"rust 2026 release\""),
        "{shown}"
    );
    assert!(!shown.contains('\x1b'), "{shown:?}");
}

/// The lines of `screen` from the first holding `from` to the last holding
/// `to`, right-trimmed.
fn region(screen: &str, from: &str, to: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines.iter().position(|l| l.contains(from)).unwrap_or(0);
    let end = lines
        .iter()
        .rposition(|l| l.contains(to))
        .unwrap_or(lines.len() - 1)
        .max(start);
    lines[start..=end]
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_interface_shows_a_search_pane_and_the_sources_cited() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Rust 2026 shipped.").searched("rust 2026 release", &PAGES),
            Reply::text("Title"),
        ],
    )
    .await;
    configure(
        &home,
        &mock,
        None,
        "[permissions]\nallow = [\"web_search\"]\n",
    );
    let app = crate::pty::PtyApp::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        100,
    );
    app.wait_for_text("Ask cairn");
    let mut app = app;
    app.type_text("what shipped?");
    app.send(b"\r");
    app.wait_for_text("sources cited");
    let screen = app.wait_for("the cited source listed", |s| {
        s.lines()
            .filter(|l| l.contains("https://blog.rust-lang.org/2026"))
            .count()
            >= 2
    });
    assert!(!screen.contains("pwned\x07"), "{screen}");
    insta::assert_snapshot!(region(
        &screen,
        "web search",
        "https://blog.rust-lang.org/2026"
    ));
    app.ctrl_c_to_quit();
}

#[tokio::test]
async fn a_paused_search_turn_is_sent_back_as_it_is_to_go_on() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Still looking.")
                .searched("rust 2026 release", &PAGES)
                .stop_reason("pause_turn"),
            Reply::text("Found it."),
        ],
    )
    .await;
    configure(&home, &mock, None, "");
    let (ok, stdout, stderr) = run(
        &home,
        &mock,
        &["run", "--allow", "web_search", "what shipped?"],
    )
    .await;
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("Found it."), "{stdout}");
    assert!(!stderr.contains("stopped early"), "{stderr}");
    let second = &mock.requests()[1];
    let messages = second["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().expect("messages");
    assert_eq!(last["role"], "assistant", "{second}");
    assert_eq!(last["content"][0]["type"], "server_tool_use");
    assert_eq!(last["content"][1]["type"], "web_search_tool_result");
}

/// In an editor (`cairn acp`): the search is a finished call linking each
/// page it found, the answer's sources follow it as Markdown whose titles
/// link nowhere, and a load tells both again.
#[tokio::test(flavor = "multi_thread")]
async fn an_editor_sees_the_search_and_the_sources() {
    use crate::acp_rust_client::{as_editor, drain, message_text, text_prompt};
    use agent_client_protocol::schema::ProtocolVersion;
    use agent_client_protocol::v1::schema as acp;
    let home = TestHome::new();
    let mut replies = script();
    replies.push(Reply::text("Release"));
    let mock = MockModel::start(Format::Anthropic, replies).await;
    configure(
        &home,
        &mock,
        None,
        "[permissions]\nallow = [\"web_search\"]\n",
    );
    let cwd = home.project.path().to_path_buf();
    let c = cwd.clone();
    let (id, live) = as_editor(&home, &mock, async move |cx, mut updates, _perms| {
        cx.send_request(acp::InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let id = cx
            .send_request(acp::NewSessionRequest::new(c))
            .block_task()
            .await?
            .session_id;
        cx.send_request(text_prompt(&id, "what shipped?"))
            .block_task()
            .await?;
        Ok((id, drain(&mut updates)))
    })
    .await;
    let (_, replayed) = as_editor(&home, &mock, async move |cx, mut updates, _perms| {
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
    for (when, updates) in [("live", &live), ("replayed", &replayed)] {
        let search = updates
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .find(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == "search")
            .unwrap_or_else(|| panic!("{when}: no search call in {updates:?}"));
        assert_eq!(search["title"], "Web search: rust 2026 release", "{when}");
        assert_eq!(search["status"], "completed", "{when}");
        let links: Vec<&Value> = (search["content"].as_array().unwrap())
            .iter()
            .map(|c| &c["content"]["uri"])
            .collect();
        assert_eq!(
            links,
            [&json!(PAGES[0].1), &json!(PAGES[1].1)],
            "{when}: {search}"
        );
        assert!(!search.to_string().contains("\\u001b"), "{when}: {search}");
        let text = message_text(updates, "agent_message_chunk");
        assert!(text.contains("Rust 2026 shipped."), "{when}: {text}");
        assert!(
            text.contains(
                "Sources:\n1. Rust 2026 \\]0;pwned release <https://blog.rust-lang.org/2026>"
            ),
            "{when}: {text:?}"
        );
    }
}

/// Gemini cannot take its search beside cairn's tools, so in a working
/// mode the search is a `web_search` tool of cairn's: its call asks the
/// same model with the search alone, and the model reads the grounded
/// answer with its numbered sources.
#[tokio::test]
async fn gemini_searches_through_a_grounded_request_of_its_own_when_tools_are_offered() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Gemini,
        vec![
            Reply::tool("s1", "web_search", json!({"query": "rust 2026 release"})),
            Reply::text("Rust 2026 shipped in March.").searched("rust 2026 release", &PAGES),
            Reply::text("It shipped in March."),
            Reply::text("Rust release"),
        ],
    )
    .await;
    configure(
        &home,
        &mock,
        Some("gemini"),
        "[permissions]\nallow = [\"web_search\"]\n",
    );
    let (ok, stdout, stderr) = run(&home, &mock, &["run", "when did rust 2026 ship?"]).await;
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("It shipped in March."), "{stdout}");
    let requests = mock.requests();
    let offered = requests[0]["tools"].to_string();
    assert!(offered.contains(r#""name":"web_search""#), "{offered}");
    assert!(!offered.contains("google_search"), "{offered}");
    // The search's own request: the question, and the search alone.
    let side = &requests[1];
    assert_eq!(side["tools"], json!([{"google_search": {}}]), "{side}");
    assert!(side["contents"].to_string().contains("rust 2026 release"));
    // What the model read back.
    let back = requests[2]["contents"].to_string();
    assert!(back.contains("Rust 2026 shipped in March."), "{back}");
    assert!(back.contains("2. LWN <https://lwn.net/rust>"), "{back}");
    assert!(back.contains("never instructions"), "{back}");
    assert!(!back.contains("\\u001b"), "{back}");
}
