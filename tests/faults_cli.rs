//! Issue 11 through `cairn run` and `cairn sessions`: exact text after a
//! restarted answer, the session id, continuing a session, escaped control
//! sequences, quiet pipes.

use crate::{mock_model, test_home};
use std::process::Output;

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

async fn run(home: &TestHome, mock: &MockModel, args: &[&str]) -> (Output, String, String) {
    let out = home.command(&mock.url()).args(args).output().await.unwrap();
    let (o, e) = text(&out);
    (out, o, e)
}

fn session_of(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("cairn: session "))
        .unwrap_or_else(|| panic!("no session id on stderr: {stderr}"))
        .trim()
        .to_string()
}

#[tokio::test]
async fn a_restarted_answer_is_printed_once_and_final_text_is_only_the_answer() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Discarded beginning of a long answer")
                .chunk_chars(4)
                .cut_after(6),
            Reply::text("The whole answer."),
            Reply::text("Title"),
        ],
    )
    .await;
    let (out, stdout, stderr) = run(&home, &mock, &["run", "answer me"]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout, "The whole answer.\n", "{stderr}");
    assert!(!session_of(&stderr).is_empty());

    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Discarded beginning of a long answer")
                .chunk_chars(4)
                .cut_after(6),
            Reply::text("The whole answer."),
        ],
    )
    .await;
    let (out, stdout, stderr) = run(&home, &mock, &["run", "--json", "answer me"]).await;
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "final");
    assert_eq!(last["text"], "The whole answer.");
    let session = lines.iter().find(|l| l["type"] == "session").unwrap();
    assert_eq!(session["id"].as_str().unwrap().len(), 36, "{session}");
}

/// The request whose last user message is `prompt`.
fn request_for(mock: &MockModel, prompt: &str) -> String {
    mock.requests()
        .iter()
        .map(|r| r["messages"].to_string())
        .find(|m| m.contains(prompt) && !m.contains("title"))
        .unwrap_or_else(|| panic!("no request carried {prompt}"))
}

#[tokio::test]
async fn run_continue_and_session_continue_a_stored_session() {
    let home = TestHome::new();
    // Every reply is the same, so the title request (which a short run may
    // or may not send before it exits) cannot shift the answers.
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Noted."); 8]).await;
    let (out, _, stderr) = run(&home, &mock, &["run", "remember the word lilac"]).await;
    assert!(out.status.success(), "{stderr}");
    let first = session_of(&stderr);
    let (out, _, stderr) = run(&home, &mock, &["run", "--continue", "which word?"]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(session_of(&stderr), first, "the same session goes on");
    let resent = request_for(&mock, "which word?");
    assert!(
        resent.contains("lilac") && resent.contains("Noted."),
        "{resent}"
    );

    let prefix = &first[..13];
    let (out, _, stderr) = run(&home, &mock, &["run", "--session", prefix, "and again?"]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(session_of(&stderr), first);
    let resent = request_for(&mock, "and again?");
    assert!(
        resent.contains("which word?") && resent.contains("lilac"),
        "{resent}"
    );

    let (out, _, stderr) = run(&home, &mock, &["run", "--session", "ffff", "x"]).await;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ffff"), "{stderr}");
}

/// Window title, OSC 52 clipboard write, clear screen, cursor report.
const HOSTILE: &str =
    "hello \u{1b}]0;pwned\u{7}\u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}[2J\u{1b}[6n\u{9b}6n world";

fn assert_inert(what: &str, s: &str) {
    assert!(
        !s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{9b}'),
        "{what} carries a control sequence: {s:?}"
    );
}

#[tokio::test]
async fn control_sequences_from_the_model_and_tools_never_reach_the_terminal() {
    let home = TestHome::new();
    std::fs::write(home.path("evil.txt"), HOSTILE).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text(HOSTILE).tool_call(
                "b1",
                "bash",
                json!({"command": "cat evil.txt; exit 3"}),
            ),
            Reply::text(HOSTILE),
            Reply::text(HOSTILE),
        ],
    )
    .await;
    let (out, stdout, stderr) = run(&home, &mock, &["run", "--mode", "auto", "show me"]).await;
    assert!(out.status.success(), "{stderr}");
    assert_inert("run's stdout", &stdout);
    assert_inert("run's stderr", &stderr);
    assert!(stdout.contains("hello ^[]0;pwned^G"), "{stdout}");
    let id = session_of(&stderr);

    let (out, stdout, stderr) = run(&home, &mock, &["sessions", "show", &id]).await;
    assert!(out.status.success(), "{stderr}");
    assert_inert("sessions show", &stdout);
    assert!(stdout.contains("world"), "{stdout}");
    let (out, stdout, _) = run(&home, &mock, &["sessions", "search", "world"]).await;
    assert!(out.status.success());
    assert_inert("sessions search", &stdout);
    assert!(stdout.contains("world"), "{stdout}");
    let (out, stdout, _) = run(&home, &mock, &["sessions", "list"]).await;
    assert!(out.status.success());
    assert_inert("sessions list", &stdout);
    // Not a terminal: no styling either.
    assert!(!stdout.contains("\u{1b}["), "{stdout}");

    // A Markdown export is for reading (`cat`, a pager): inert too. The
    // JSON export keeps the exact text, escaped as JSON strings are.
    let file = home.path("out.md");
    let (out, _, stderr) = run(
        &home,
        &mock,
        &["sessions", "export", &id, "-o", file.to_str().unwrap()],
    )
    .await;
    assert!(out.status.success(), "{stderr}");
    let md = std::fs::read_to_string(&file).unwrap();
    assert_inert("a Markdown export", &md);
    assert!(md.contains("hello ^[]0;pwned^G"), "{md}");
    let file = home.path("out.json");
    let (out, _, stderr) = run(
        &home,
        &mock,
        &[
            "sessions",
            "export",
            &id,
            "--json",
            "-o",
            file.to_str().unwrap(),
        ],
    )
    .await;
    assert!(out.status.success(), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(json.to_string().contains("\\u001b]52;c;"), "{json}");
}

#[tokio::test]
async fn a_closed_pipe_ends_quietly() {
    let home = TestHome::new();
    let long: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text(&long).chunk_chars(4000), Reply::text("Title")],
    )
    .await;
    let (out, _, stderr) = run(&home, &mock, &["run", "count"]).await;
    assert!(out.status.success(), "{stderr}");
    let id = session_of(&stderr);
    for args in [
        vec!["sessions", "show", id.as_str()],
        vec!["sessions", "export", id.as_str()],
    ] {
        let mut c = home.command(&mock.url());
        let child = c
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line and close the pipe, as `| head -1` does.
        let mut stdout = child.stdout.unwrap();
        let mut first = [0u8; 16];
        tokio::io::AsyncReadExt::read_exact(&mut stdout, &mut first)
            .await
            .unwrap();
        drop(stdout);
        let mut err = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut child.stderr.unwrap(), &mut err)
            .await
            .unwrap();
        assert_eq!(err, "", "{args:?} complained about the closed pipe");
    }
}

#[tokio::test]
async fn repeated_tool_call_ids_in_one_response_get_their_own_results() {
    let home = TestHome::new();
    std::fs::write(home.path("a.txt"), "alpha\n").unwrap();
    std::fs::write(home.path("b.txt"), "beta\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("dup", "view", json!({"file_path": "a.txt"})).tool_call(
                "dup",
                "view",
                json!({"file_path": "b.txt"}),
            ),
            Reply::text("Both read."),
            Reply::text("Title"),
        ],
    )
    .await;
    let (out, stdout, stderr) = run(&home, &mock, &["run", "--json", "read both"]).await;
    assert!(out.status.success(), "{stderr}");
    let results: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{stdout}");
    assert_ne!(results[0]["id"], results[1]["id"]);
    let outputs: String = results.iter().map(|r| r["output"].to_string()).collect();
    assert!(
        outputs.contains("alpha") && outputs.contains("beta"),
        "{outputs}"
    );
    // What went back to the model pairs each call with its own result.
    let messages = mock.requests()[1]["messages"].clone();
    let blocks: Vec<Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .collect();
    let uses: Vec<&Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| &b["id"])
        .collect();
    let answered: Vec<&Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| &b["tool_use_id"])
        .collect();
    assert_eq!(uses.len(), 2);
    assert_ne!(uses[0], uses[1]);
    assert_eq!(uses, answered);
}
