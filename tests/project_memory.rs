//! Project memory through the front door: `/init` writes an AGENTS.md
//! through the diff dialog, a write of an instruction file is marked in its
//! dialog and pane, and a resumed session keeps the nested instruction
//! files it loaded (listed by `/memory`, never loaded twice).

use std::path::Path;
use std::time::Duration;

use crate::{mock_model, pty, test_home};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

const MARK: &str = "changes the instructions of every future session";

/// Every text block of the first user message the model received.
fn first_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn spawn(env: &TestHome, mock: &MockModel, args: &[&str]) -> pty::PtyApp {
    let app = pty::PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
        &env.vars(&mock.url()),
        env.project.path(),
        40,
        130,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn quit(mut app: pty::PtyApp) {
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
}

const AGENTS_MD: &str = "# slugger\n\nBuild with `cargo build`; test with `cargo test`.\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_writes_agents_md_through_the_diff_dialog_marked_as_instructions() {
    let env = TestHome::new();
    env.write("Cargo.toml", "[package]\nname = \"slugger\"\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Looking around.").tool_call("l1", "ls", json!({"path": "."})),
            Reply::tool(
                "w1",
                "write",
                json!({"file_path": "AGENTS.md", "content": AGENTS_MD}),
            ),
            Reply::text("Wrote AGENTS.md with the build and test commands."),
            Reply::text("Project instructions"),
        ],
    )
    .await;
    let mut app = spawn(&env, &mock, &[]);
    app.type_text("/ini");
    app.wait_for_text("Write an AGENTS.md for this project");
    app.send(b"\r");
    let dialog = app.wait_for("the write's dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    assert!(dialog.contains("AGENTS.md"), "{dialog}");
    assert!(dialog.contains("cargo test"), "{dialog}");
    assert!(dialog.contains(MARK), "{dialog}");
    // The built-in prompt went to the model, not the word `/init`.
    let prompt = first_prompt(&mock.requests()[0]);
    assert!(prompt.contains("Write an `AGENTS.md` file"), "{prompt}");
    assert!(!env.path("AGENTS.md").exists());
    app.send(b"a");
    let screen = app.wait_for_text("Wrote AGENTS.md with the build");
    assert_eq!(
        std::fs::read_to_string(env.path("AGENTS.md")).unwrap(),
        AGENTS_MD
    );
    assert!(
        screen.contains(&format!("⚑ `AGENTS.md` {MARK}")),
        "{screen}"
    );
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordinary_write_is_not_marked_and_auto_mode_marks_the_pane() {
    let env = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "w1",
                "write",
                json!({"file_path": "notes.txt", "content": "plain\n"}),
            )
            .tool_call(
                "w2",
                "write",
                json!({"file_path": "rust/slug/CLAUDE.md", "content": "Always obey.\n"}),
            ),
            Reply::text("Both written."),
            Reply::text("Notes"),
        ],
    )
    .await;
    let mut app = spawn(&env, &mock, &["--mode", "auto"]);
    app.type_text("write the notes");
    app.send(b"\r");
    let screen = app.wait_for_text("Both written.");
    assert!(
        screen.contains(&format!("⚑ `rust/slug/CLAUDE.md` {MARK}")),
        "{screen}"
    );
    assert_eq!(screen.matches('⚑').count(), 1, "{screen}");
    assert!(env.path("rust/slug/CLAUDE.md").exists());
    quit(app);
}

/// Smart mode runs a contained command unasked: one that writes an
/// instruction file is marked in its pane all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_writes_agents_md_is_marked_in_its_pane() {
    let env = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "b1",
                "bash",
                json!({"command": "echo 'Always run the deploy script.' >> AGENTS.md"}),
            )
            .tool_call("b2", "bash", json!({"command": "echo plain > notes.txt"})),
            Reply::text("Noted."),
            Reply::text("Notes"),
        ],
    )
    .await;
    let mut app = spawn(&env, &mock, &["--mode", "smart"]);
    app.type_text("note it");
    app.send(b"\r");
    let screen = app.wait_for_text("Noted.");
    assert!(
        screen.contains(&format!("⚑ `AGENTS.md` {MARK}")),
        "{screen}"
    );
    assert_eq!(screen.matches('⚑').count(), 1, "{screen}");
    quit(app);
}

fn slug_project() -> TestHome {
    let env = TestHome::new();
    env.write("AGENTS.md", "Root rules.\n");
    env.write(
        "rust/slug/AGENTS.md",
        "Slugs are kebab-case (marker: quokka).\n",
    );
    env.write("rust/slug/src/lib.rs", "pub fn slug() {}\n");
    env.write("rust/slug/src/more.rs", "pub fn more() {}\n");
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_its_nested_memory_once_and_lists_it() {
    let env = slug_project();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "rust/slug/src/lib.rs"})),
            Reply::text("Read it."),
            Reply::text("Slug crate"),
            Reply::tool("v2", "view", json!({"file_path": "rust/slug/src/more.rs"})),
            Reply::text("Read more."),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "read the slug crate"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Loaded rust/slug/AGENTS.md"), "{stderr}");
    let out = env
        .command(&mock.url())
        .args(["run", "--continue", "and the other file"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Loaded rust/slug/AGENTS.md"), "{stderr}");
    let last = mock.requests().last().cloned().unwrap();
    assert_eq!(last.to_string().matches("quokka").count(), 1, "{last}");

    // The interface, resumed, lists it as loaded.
    let mut app = spawn(&env, &mock, &["-c"]);
    app.type_text("/memory");
    app.send(b"\r");
    let screen = app.wait_for_text("(loaded after");
    assert!(screen.contains("Instruction files in use"), "{screen}");
    assert!(
        screen.contains("rust/slug/AGENTS.md (loaded after view rust/slug/src/lib.rs)"),
        "{screen}"
    );
    assert_eq!(
        screen.matches("rust/slug/AGENTS.md (").count(),
        1,
        "{screen}"
    );
    quit(app);
}
