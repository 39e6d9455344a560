//! `cairn acp` through the front door, the way an editor reaches it: an ACP
//! client written against the official TypeScript SDK
//! (`@agentclientprotocol/sdk`, tests/acp_client/, installed by `.ci/run`
//! with `npm ci`) starts the real binary on stdio, against the scripted
//! model. Without node or the installed SDK the test prints why it skips.
//!
//! One conversation: initialize, a new session, a prompt whose answer
//! edits a file (the permission request carries the diff; the file changes
//! only after the client allows it) and runs a command whose output
//! streams as tool call updates, bad requests answered with JSON-RPC
//! errors, a file the editor holds unsaved changes of (read and edited
//! through `fs/*`, its buffer changed and the disk not), a mode switch, a cancelled slow answer, the session list, and
//! the session loaded again by a second `cairn acp`.

use crate::{mock_model, test_home};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

/// Short prompts timed from `session/prompt` to the first update.
const PINGS: usize = 9;
const STORY: &str =
    "Once upon a time a cairn stood on a hill, and every traveller added one stone. ";

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_client")
}

/// Why the SDK client cannot run here, if it cannot.
fn skip_reason() -> Option<String> {
    match std::process::Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => return Some("node is not installed".into()),
    }
    let sdk = client_dir().join("node_modules/@agentclientprotocol/sdk/package.json");
    if !sdk.exists() {
        return Some(format!(
            "the ACP SDK is not installed (run `npm ci --prefix {}`, as .ci/run does)",
            client_dir().display()
        ));
    }
    None
}

fn script() -> Vec<Reply> {
    let mut replies = vec![
        Reply::text("Looking first.").tool_call("v1", "view", json!({"file_path": "a.txt"})),
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
        Reply::text("All done: a.txt now says beta.")
            .chunk_chars(4)
            .chunk_delay(Duration::from_millis(10)),
        Reply::text("Edited a file"),
        Reply::tool("n1", "view", json!({"file_path": "notes.txt"})),
        Reply::tool(
            "n2",
            "edit",
            json!({"file_path": "notes.txt", "old_string": "alpha notes", "new_string": "beta notes"}),
        ),
        Reply::text("Notes fixed."),
    ];
    replies.extend((0..PINGS).map(|_| Reply::text("pong")));
    replies.push(
        Reply::text(&STORY.repeat(4))
            .chunk_chars(2)
            .chunk_delay(Duration::from_millis(40)),
    );
    replies
}

async fn run_client(home: &TestHome, mock: &MockModel) -> Value {
    let out = tokio::process::Command::new("node")
        .arg(client_dir().join("client.mjs"))
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(home.project.path())
        .arg(PINGS.to_string())
        .current_dir(client_dir())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), out)
        .await
        .expect("the ACP client finished within 3 minutes")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("no report ({e}); stdout: {stdout}\nstderr: {stderr}"));
    assert!(
        report.get("failure").is_none(),
        "{}\nstderr: {stderr}",
        report["failure"]
    );
    report
}

fn updates_of<'a>(updates: &'a Value, call: &str) -> Vec<&'a Value> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["toolCallId"] == call)
        .collect()
}

fn has_diff(update: &Value, path: &Path, old: &str, new: &str) -> bool {
    update["content"].as_array().into_iter().flatten().any(|c| {
        c["type"] == "diff"
            && c["path"] == path.display().to_string()
            && c["oldText"].as_str().is_some_and(|t| t.contains(old))
            && c["newText"].as_str().is_some_and(|t| t.contains(new))
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_drives_cairn_through_the_official_sdk() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let home = TestHome::new();
    let file = home.path("a.txt");
    std::fs::write(&file, "alpha\n").unwrap();
    let notes = home.path("notes.txt");
    std::fs::write(&notes, "alpha notes\n").unwrap();
    let mock = MockModel::start(Format::Anthropic, script()).await;
    let r = run_client(&home, &mock).await;
    editor_buffers(&r, &notes, &mock);

    assert_eq!(r["initialize"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(r["initialize"]["authMethods"], json!([]));
    assert_eq!(r["modes"]["currentModeId"], "smart");

    // The edit asked, showing its diff, while the file was unchanged.
    let edit = &r["edit"];
    assert_eq!(edit["stopReason"], "end_turn");
    let asked = edit["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["toolCall"]["toolCallId"] == "e1")
        .expect("the edit asked for permission");
    assert!(
        has_diff(&asked["toolCall"], &file, "alpha", "beta"),
        "{asked}"
    );
    assert_eq!(asked["onDisk"], "alpha\n");
    let names: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"Allow once"), "{names:?}");
    assert_eq!(names.last(), Some(&"Deny"), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("Always allow `")),
        "{names:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "beta\n");

    // Each call: announced with its kind, then its status and content.
    let e1 = updates_of(&edit["updates"], "e1");
    assert_eq!(e1[0]["sessionUpdate"], "tool_call");
    assert_eq!(e1[0]["kind"], "edit");
    assert_eq!(e1[0]["locations"][0]["path"], file.display().to_string());
    let done = e1.last().unwrap();
    assert_eq!(done["status"], "completed");
    assert!(has_diff(done, &file, "alpha", "beta"), "{done}");

    // The command's output arrived while it ran, before it completed.
    let b1 = updates_of(&edit["updates"], "b1");
    assert_eq!(b1[0]["kind"], "execute");
    let streamed = b1
        .iter()
        .position(|u| u["status"].is_null() && u["content"][0]["content"]["text"] == "one\n")
        .unwrap_or_else(|| panic!("no output update before the end: {b1:?}"));
    let finished = b1.iter().position(|u| u["status"] == "completed").unwrap();
    assert!(streamed < finished, "{b1:?}");
    assert!(b1[finished]["rawOutput"].as_str().unwrap().contains("two"));

    // The answer streamed in pieces.
    assert!(
        edit["text"]
            .as_str()
            .unwrap()
            .contains("All done: a.txt now says beta.")
    );
    let chunks = edit["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .count();
    assert!(chunks >= 5, "{chunks} chunks");
    assert_eq!(r["title"], "Edited a file");

    // Bad requests get JSON-RPC errors that say what is wrong.
    assert_eq!(r["unknownSession"]["code"], -32602);
    assert!(
        r["unknownSession"]["message"]
            .as_str()
            .unwrap()
            .contains("no session")
    );
    assert_eq!(r["unknownMode"]["code"], -32602);
    assert!(
        r["unknownMode"]["message"]
            .as_str()
            .unwrap()
            .contains("always-ask")
    );
    assert_eq!(r["emptyPrompt"]["code"], -32602);
    assert_eq!(r["modeUpdate"]["currentModeId"], "always-ask");

    // Cancelled mid-stream: stopped, with part of the story told.
    assert_eq!(r["cancel"]["stopReason"], "cancelled");
    let told = r["cancel"]["text"].as_str().unwrap();
    assert!(!told.is_empty() && told.len() < STORY.len() * 4, "{told}");

    // An ordinary stored session: listed, with its title, and loaded again.
    let id = r["sessionId"].as_str().unwrap();
    let listed = r["list"]["sessions"].as_array().unwrap();
    let row = listed
        .iter()
        .find(|s| s["sessionId"] == id)
        .expect("listed");
    assert_eq!(row["title"], "Edited a file");
    let load = &r["load"];
    assert!(
        load["user"]
            .as_str()
            .unwrap()
            .contains("change alpha to beta")
    );
    assert!(load["agent"].as_str().unwrap().contains("All done"));
    let replayed = updates_of(&load["updates"], "e1");
    assert_eq!(replayed[0]["status"], "completed");
    assert!(
        has_diff(replayed[0], &file, "alpha", "beta"),
        "{replayed:?}"
    );
    // The session was switched to always-ask before the first cairn ended;
    // loaded again it goes on in that stricter mode (as a resumed session
    // in the full-screen app does), not in the default smart.
    assert_eq!(load["response"]["modes"]["currentModeId"], "always-ask");
    assert_eq!(r["loadMissing"]["code"], -32602);
    assert_eq!(r["firstExit"], 0);
    assert_eq!(r["secondExit"], 0);

    let sessions = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sessions", "list", "--json"])
        .current_dir(home.project.path())
        .env_clear()
        .envs(home.vars(&mock.url()))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&sessions.stdout).contains(id));

    eprintln!(
        "session/prompt → first session/update: median {:.1} ms; → first text chunk: median {:.1} ms ({PINGS} prompts)",
        r["pings"]["medianFirstUpdateMs"]
            .as_f64()
            .unwrap_or(f64::NAN),
        r["pings"]["medianFirstTextMs"].as_f64().unwrap_or(f64::NAN),
    );
}

/// The editor's files: the view read the unsaved buffer (and the model got
/// it), the edit asked with the buffer's diff and then landed on the disk
/// (never through `fs/write_text_file`, which the editor would resolve by
/// name outside cairn's hold).
fn editor_buffers(r: &Value, notes: &Path, mock: &MockModel) {
    let n = &r["notes"];
    assert_eq!(n["stopReason"], "end_turn", "{n}");
    let path = notes.display().to_string();
    let log = n["log"].as_array().unwrap();
    let at = |what: &str| {
        log.iter()
            .position(|e| {
                e["what"] == what && (e["path"] == path.as_str() || e["toolCallId"] == "n2")
            })
            .unwrap_or_else(|| panic!("no {what} in {log:?}"))
    };
    let (read, asked) = (at("read"), at("permission"));
    assert!(read < asked, "{log:?}");
    assert!(log.iter().all(|e| e["what"] != "write"), "{log:?}");
    assert_eq!(n["onDisk"], "UNSAVED beta notes\n");
    let saw = mock
        .requests()
        .iter()
        .any(|q| q.to_string().contains("UNSAVED alpha notes"));
    assert!(saw, "the model was not shown the buffer");
    let updates = n["updates"].as_array().unwrap();
    let done = updates
        .iter()
        .rfind(|u| u["toolCallId"] == "n2")
        .expect("the edit's updates");
    assert!(
        has_diff(done, notes, "UNSAVED alpha notes", "UNSAVED beta notes"),
        "{done}"
    );
    let terminals = r["fileLog"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["what"] == "terminal")
        .count();
    // This editor offers terminals but cannot open one: the command was
    // offered once, ran inside cairn (its output streamed, above), and the
    // person was told once.
    assert_eq!(terminals, 1, "{}", r["fileLog"]);
    let told = r["edit"]["text"].as_str().unwrap();
    assert_eq!(
        told.matches("the editor could not open a terminal").count(),
        1,
        "{told}"
    );
}
