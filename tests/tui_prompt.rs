//! The prompt line in the real binary: slash commands typed with their
//! arguments, prompts that only look like commands, `@` mentions.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

fn start(home: &TestHome, mock: &MockModel, rows: u16, cols: u16) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        rows,
        cols,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn quit(mut app: PtyApp) {
    app.ctrl_c_to_quit();
    let screen = app.screen();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit:\n{screen}"
    );
}

fn wait_requests(mock: &MockModel, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while mock.requests().len() < n {
        assert!(
            Instant::now() < deadline,
            "the model got {:?}",
            mock.requests()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_typed_with_its_title_renames_the_stored_session() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Done adding."), Reply::text("Adding numbers")],
    )
    .await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("add two numbers");
    app.send(b"\r");
    app.wait_for_text("Done adding.");
    wait_requests(&mock, 2);
    app.type_text("/rename Calculator fixes");
    app.wait_for_text("/rename Calculator fixes");
    app.send(b"\r");
    app.wait_for("the prompt emptied", |s| !s.contains("/rename Calculator"));
    app.send(b"\x13");
    app.wait_for_text("Calculator fixes");
    app.send(b"\x1b");
    app.wait_for("the browser closed", |s| s.contains("Ask cairn"));
    // Esc and Ctrl+C pressed within a few milliseconds read as Alt+Ctrl+C.
    std::thread::sleep(Duration::from_millis(300));
    quit(app);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sessions", "list", "--json"])
        .env_clear()
        .envs(home.vars(&mock.url()))
        .current_dir(home.project.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("\"Calculator fixes\""), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mode_opens_the_mode_picker() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("/mode");
    app.wait_for("the menu offering /mode first", |s| {
        s.contains("/mode [mode]")
    });
    app.send(b"\r");
    let screen = app.wait_for_text("Permission mode");
    assert!(screen.contains("always-ask"), "{screen}");
    assert!(!screen.contains("Model (type any id"), "{screen}");
    app.type_text("auto");
    app.send(b"\r");
    app.wait_for("the status line in auto mode", |s| {
        s.lines().last().is_some_and(|l| l.contains("auto"))
    });
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_starting_with_a_path_is_sent_to_the_model() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Install python3."), Reply::text("Python")],
    )
    .await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("/usr/bin/python3 is missing, why?");
    app.send(b"\r");
    app.wait_for_text("Install python3.");
    let sent = mock.requests()[0].to_string();
    assert!(sent.contains("/usr/bin/python3 is missing, why?"), "{sent}");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_at_mention_attaches_the_file_and_shows_a_chip() {
    let home = TestHome::new();
    std::fs::write(home.path("notes.md"), "alpha beta gamma\nsecond line\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("The notes list three words."),
            Reply::text("Notes"),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("summarise ");
    app.type_text("@");
    app.wait_for_text("Files (@)");
    app.type_text("notes");
    app.send(b"\r");
    app.wait_for_text("summarise @notes.md");
    app.send(b"\r");
    let screen = app.wait_for_text("The notes list three words.");
    assert!(
        screen.contains("@notes.md") && screen.contains("2 lines"),
        "{screen}"
    );
    let sent = mock.requests()[0].to_string();
    assert!(sent.contains("alpha beta gamma\\nsecond line"), "{sent}");
    assert!(sent.contains("summarise @notes.md"), "{sent}");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_clears_the_prompt_then_arms_then_quits() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("a draft\x0aon two lines");
    app.wait_for_text("on two lines");
    app.send(b"\x03");
    app.wait_for("the prompt cleared", |s| {
        s.contains("Ask cairn") && !s.contains("a draft")
    });
    app.send(b"\x1f");
    app.wait_for_text("on two lines");
    app.send(b"\x03");
    app.wait_for("the prompt cleared again", |s| !s.contains("a draft"));
    std::thread::sleep(Duration::from_millis(1600));
    app.send(b"\x03");
    app.wait_for_text("Ctrl+C again to quit");
    app.send(b"\x03");
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "the second press quits"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_prompt_typed_as_a_dialog_appears_does_not_answer_it() {
    // Send a prompt, and at once start the next one: the dialog that
    // appears between two keystrokes must not take the `s` (Allow always).
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::default().tool_call("c1", "bash", serde_json::json!({"command": "echo hi"})),
            Reply::text("Ran it."),
            Reply::text("A title"),
        ],
    )
    .await;
    let mut vars = home.vars(&mock.url());
    vars.push(("CAIRN_DIALOG_PAUSE_MS".into(), "600".into()));
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["--mode", "always-ask"],
        &vars,
        home.project.path(),
        30,
        100,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("run it");
    app.send(b"\r");
    app.wait_for_text("Allow once");
    app.type_text("so next");
    app.wait_for_text("so next");
    let screen = app.screen();
    assert!(screen.contains("Allow once"), "the dialog went:\n{screen}");
    assert!(
        !home.project.path().join(".cairn/config.toml").exists(),
        "a rule was stored:\n{screen}"
    );
    // Once the person has paused, the dialog answers.
    std::thread::sleep(Duration::from_millis(1700));
    app.send(b"a");
    app.wait_for_text("Ran it.");
    assert!(!home.project.path().join(".cairn/config.toml").exists());
    quit(app);
}

/// Ctrl+G hands the prompt to the person's `$EDITOR`, which runs outside
/// the sandbox: it starts in the temporary file's folder, never in the
/// workspace, whose editor settings (`.exrc`, `.helix/languages.toml`) a
/// command could have written. The edited text comes back as the prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_edits_the_prompt_in_the_editor_started_outside_the_workspace() {
    let home = TestHome::new();
    let editor = home.home.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'edited in %s after %s' \"$PWD\" \"$(cat \"$1\")\" > \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    let mut vars = home.vars(&mock.url());
    vars.push(("EDITOR".into(), editor.display().to_string()));
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &vars,
        home.project.path(),
        24,
        200,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("draft");
    app.send(b"\x07");
    let screen = app.wait_for_text("edited in ");
    assert!(screen.contains("after draft"), "{screen}");
    let project = home.project.path().canonicalize().unwrap();
    let line = (screen.lines())
        .find(|l| l.contains("edited in "))
        .unwrap()
        .to_string();
    assert!(
        !line.contains(&project.display().to_string())
            && !line.contains(&home.project.path().display().to_string()),
        "the editor started in the workspace: {line}"
    );
    quit(app);
}
