//! The real `cairn` binary, headless, against the scripted model.

use crate::{mock_model, test_home};
use std::process::Output;

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

/// The test home with a way to run the binary headless in it.
struct Env(TestHome);

impl Env {
    fn new() -> Env {
        Env(TestHome::new())
    }

    fn command(&self, mock: &MockModel) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.current_dir(self.0.project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.0.vars(&mock.url()))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        c
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.0.path(rel)
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn results_in(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

#[tokio::test]
async fn run_prints_the_answer_and_tool_lines_and_exits_zero() {
    let env = Env::new();
    std::fs::write(
        env.path("notes.md"),
        "the secret word is heliotrope\nthe spare word is marigold\n",
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Looking.").tool_call("t1", "view", json!({"file_path": "notes.md"})),
            Reply::text("The word is heliotrope."),
            // The title request after the first exchange.
            Reply::text("Find the secret word"),
        ],
    )
    .await;
    let out = env
        .command(&mock)
        .args(["run", "what is the secret word?"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("Looking.") && stdout.contains("The word is heliotrope."),
        "{stdout}"
    );
    assert!(stderr.contains("→ view notes.md ✓"), "{stderr}");
    let reqs = mock.requests();
    let results = results_in(&reqs[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("heliotrope")
    );
    assert!(mock_model::system_text(&reqs[0]).contains("You are cairn"));

    // The session was stored and its tool output is searchable.
    let out = env
        .command(&mock)
        .args(["sessions", "search", "marigold", "--json"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // "marigold" was only ever in the view tool's output.
    let hits: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{stdout}");
    assert!(hits.to_string().contains("marigold"), "{stdout}");
    assert!(!mock.requests()[0].to_string().contains("marigold"));
    // As text, the match shows without SQLite's markers.
    let out = env
        .command(&mock)
        .args(["sessions", "search", "marigold"])
        .output()
        .await
        .unwrap();
    let (stdout, _) = text(&out);
    assert!(stdout.contains("marigold"), "{stdout}");
    assert!(
        !stdout.contains("^A") && !stdout.contains('\u{1}') && !stdout.contains("^B"),
        "{stdout:?}"
    );
    let out = env
        .command(&mock)
        .args(["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["message_count"], 4);
}

#[tokio::test]
async fn json_output_is_one_object_per_line() {
    let env = Env::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Hi!"), Reply::text("Greeting")],
    )
    .await;
    let out = env
        .command(&mock)
        .args(["run", "--json", "say hi"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"text") && kinds.contains(&"usage"));
    // Every line says which version of the format it follows.
    assert!(lines.iter().all(|l| l["schema"] == 1), "{stdout}");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "final");
    assert_eq!(last["text"], "Hi!");
    assert_eq!(last["outcome"]["outcome"], "completed");
}

#[tokio::test]
async fn json_final_text_is_the_answer_without_what_came_before_a_tool_call() {
    let env = Env::new();
    std::fs::write(env.path("notes.md"), "the word is heliotrope\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Let me look first.").tool_call(
                "t1",
                "view",
                json!({"file_path": "notes.md"}),
            ),
            Reply::text("The word is heliotrope."),
            Reply::text("Word"),
        ],
    )
    .await;
    let out = env
        .command(&mock)
        .args(["run", "--json", "which word?"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "final");
    assert_eq!(last["text"], "The word is heliotrope.");
}

#[tokio::test]
async fn a_bad_key_exits_one_with_a_message_and_no_prompt_exits_two() {
    let env = Env::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::status(401)]).await;
    let out = env
        .command(&mock)
        .args(["run", "hi"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("API key"), "{stderr}");
    let out = env.command(&mock).args(["run"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = env
        .command(&mock)
        .args(["run", "--mode", "nope", "x"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn a_broken_config_names_the_file_and_line() {
    let env = Env::new();
    std::fs::create_dir_all(env.path(".cairn")).unwrap();
    std::fs::write(
        env.path(".cairn/config.toml"),
        "[permissions]\nmode = \"smart\"\nalow = []\n",
    )
    .unwrap();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let out = env
        .command(&mock)
        .args(["run", "hi"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains(".cairn/config.toml")
            && stderr.contains("line 3")
            && stderr.contains("alow"),
        "{stderr}"
    );
    assert!(mock.requests().is_empty(), "nothing starts half-configured");
}

fn edit_script() -> Vec<Reply> {
    vec![
        Reply::tool("v1", "view", json!({"file_path": "lib.rs"})),
        Reply::tool(
            "e1",
            "edit",
            json!({"file_path": "lib.rs", "old_string": "old()", "new_string": "new()"}),
        ),
        Reply::text("Edited."),
        Reply::text("Title"),
    ]
}

#[tokio::test]
async fn run_applies_an_edit_in_auto_mode_and_refuses_it_in_smart_mode() {
    let env = Env::new();
    std::fs::write(env.path("lib.rs"), "fn f() { old() }\n").unwrap();
    let mock = MockModel::start(Format::Anthropic, edit_script()).await;
    let out = env
        .command(&mock)
        .args(["run", "--mode", "auto", "rename the call"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("→ edit lib.rs") && stderr.contains("✓"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("lib.rs")).unwrap(),
        "fn f() { new() }\n"
    );

    let env = Env::new();
    std::fs::write(env.path("lib.rs"), "fn f() { old() }\n").unwrap();
    let mock = MockModel::start(Format::Anthropic, edit_script()).await;
    let out = env
        .command(&mock)
        .args(["run", "rename the call"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&out);
    assert!(stderr.contains("denied"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(env.path("lib.rs")).unwrap(),
        "fn f() { old() }\n"
    );
    let results = results_in(&mock.requests()[2]);
    assert!(results.iter().any(|r| {
        r["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("non-interactively")
    }));
}

#[tokio::test]
async fn kill_9_mid_turn_keeps_every_finished_part() {
    let env = Env::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Checking both.")
                .tool_call("fast", "bash", json!({"command": "echo quick-result"}))
                .tool_call("slow", "bash", json!({"command": "sleep 8"})),
            Reply::text("never reached"),
        ],
    )
    .await;
    let mut child = env
        .command(&mock)
        .args(["run", "--mode", "auto", "check both"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let db = env.0.home.path().join("data/cairn/sessions.db");
    // Wait until the fast call's result is on disk while the slow one runs.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let stored_result = || -> bool {
        let Ok(store) = cairn::store::Store::open(&db) else {
            return false;
        };
        let Ok(Some(s)) = store.latest_session(env.0.project.path()) else {
            return false;
        };
        store
            .load_messages(&s.id)
            .map(|m| {
                m.iter().any(|m| {
                    m.1.role == cairn::conversation::Role::User
                        && format!("{:?}", m.1).contains("quick-result")
                })
            })
            .unwrap_or(false)
    };
    while !stored_result() {
        assert!(
            std::time::Instant::now() < deadline,
            "the finished result never reached the store"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    let store = cairn::store::Store::open(&db).unwrap();
    let s = store.latest_session(env.0.project.path()).unwrap().unwrap();
    let msgs: Vec<String> = store
        .load_messages(&s.id)
        .unwrap()
        .iter()
        .map(|m| format!("{:?}", m.1))
        .collect();
    assert_eq!(
        msgs.len(),
        3,
        "prompt, answer with both calls, finished result: {msgs:#?}"
    );
    assert!(msgs[0].contains("check both"));
    assert!(msgs[1].contains("Checking both.") && msgs[1].contains("sleep 8"));
    assert!(msgs[2].contains("quick-result") && !msgs[2].contains("\"slow\""));
    store.integrity_check().unwrap();
}

/// Against a server that serves only the main model, the title request
/// names the small model, is refused, and is asked again of the main one;
/// the run still exits 0 and the stored session has its title.
#[tokio::test]
async fn the_title_falls_back_to_the_main_model_on_a_single_model_server() {
    let env = Env::new();
    let config_dir = env.0.home.path().join("config/cairn");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        "[providers.anthropic]\nmodel = \"main-model\"\nsmall_model = \"tiny-model\"\n",
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Hello there."),
            Reply::text("Greeting the user"),
        ],
    )
    .await;
    mock.only_model("main-model");
    let out = env
        .command(&mock)
        .args(["run", "say hello"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("Hello there."), "{stdout}");
    let models: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(models, ["main-model", "tiny-model", "main-model"]);
    assert!(
        mock_model::system_text(&mock.requests()[2]).contains("title"),
        "the last request is the title request"
    );
    assert_eq!(mock.pending(), 0, "both scripted replies were used");
    let out = env
        .command(&mock)
        .args(["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["title"], "Greeting the user", "{list}");
}

/// Issue 24: an answer that cannot reach stdout (a full disk) is not a
/// success, and says where the answer is; the interface without a terminal
/// says it needs one and points to `cairn run`.
#[tokio::test]
async fn an_unwritable_stdout_exits_non_zero_and_no_terminal_points_to_run() {
    let env = Env::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("An answer with nowhere to go."),
            Reply::text("T"),
        ],
    )
    .await;
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = env
        .command(&mock)
        .args(["run", "hi"])
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .await
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
    let out = env.command(&mock).output().await.unwrap();
    let (_, stderr) = text(&out);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains("needs a terminal") && stderr.contains("cairn run"),
        "{stderr}"
    );
}
