//! The real binary in a pseudo-terminal against the scripted model: what a
//! person sees, and what is on disk afterwards.

use crate::{mock_model, pty, test_home};
use std::path::{Path, PathBuf};
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

/// The test home with a way to run the full-screen binary in a pty.
struct Env(TestHome);

impl Env {
    fn new() -> Env {
        Env(TestHome::new())
    }

    fn start(&self, mock: &MockModel, args: &[&str], rows: u16, cols: u16) -> PtyApp {
        let app = PtyApp::spawn(
            Path::new(env!("CARGO_BIN_EXE_cairn")),
            args,
            &self.0.vars(&mock.url()),
            self.0.project.path(),
            rows,
            cols,
        );
        app.wait_for_text("Ask cairn");
        app
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.path(rel)
    }
}

fn quit(mut app: PtyApp) {
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_is_answered_and_a_resize_reflows() {
    let env = Env::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("# Plan\n\nFirst we **read** the code, then we change it. This sentence is long enough to wrap when the terminal is narrow.").usage(1200, 40),
            Reply::text("A title"),
        ],
    )
    .await;
    let mut app = env.start(&mock, &[], 30, 100);
    app.type_text("make a plan");
    app.send(b"\r");
    let screen = app.wait_for_text("then we change it.");
    assert!(screen.contains("› make a plan"), "{screen}");
    assert!(screen.contains("Plan"), "{screen}");
    // The status line shows the model and the context used.
    app.wait_for("usage in the status line", |s| {
        s.contains("claude-sonnet-4-5") && s.contains("1.2k")
    });
    app.resize(30, 44);
    let narrow = app.wait_for("the answer rewrapped to 44 columns", |s| {
        s.lines().all(|l| l.chars().count() <= 44) && s.contains("then we")
    });
    assert!(
        !narrow.contains("then we change it. This sentence is long enough"),
        "{narrow}"
    );
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_stops_a_streaming_answer() {
    let env = Env::new();
    let long = "word ".repeat(2000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text(&long).chunk_delay(Duration::from_millis(30)),
            Reply::text("title"),
        ],
    )
    .await;
    let mut app = env.start(&mock, &[], 24, 80);
    app.type_text("talk");
    app.send(b"\r");
    app.wait_for_text("word word");
    app.send(b"\x1b");
    app.wait_for_text("cancelled");
    let before = app.screen();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(before, app.screen(), "nothing streams after Esc");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_shows_the_same_transcript_after_a_restart() {
    let env = Env::new();
    std::fs::write(env.path("notes.md"), "alpha beta\n").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Reading.").tool_call("t1", "view", json!({"file_path": "notes.md"})),
            Reply::text("It says alpha beta."),
            Reply::text("Notes title"),
        ],
    )
    .await;
    let app = {
        let mut app = env.start(&mock, &[], 30, 100);
        app.type_text("what do the notes say?");
        app.send(b"\r");
        app.wait_for_text("It says alpha beta.");
        app
    };
    quit(app);
    let app = env.start(&mock, &["-c"], 30, 100);
    let screen = app.wait_for_text("It says alpha beta.");
    assert!(screen.contains("› what do the notes say?"), "{screen}");
    assert!(screen.contains("view notes.md"), "{screen}");
    assert!(screen.contains("Resumed session"), "{screen}");
    quit(app);
}

fn edit_replies() -> Vec<Reply> {
    vec![
        Reply::tool("v1", "view", json!({"file_path": "lib.rs"})),
        Reply::tool(
            "e1",
            "edit",
            json!({"file_path": "lib.rs", "old_string": "fn old_name() {}", "new_string": "fn new_name() {}"}),
        ),
        Reply::text("Renamed."),
        Reply::text("Rename"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_edit_dialog_shows_the_diff_and_allow_changes_the_file() {
    let env = Env::new();
    std::fs::write(env.path("lib.rs"), "fn old_name() {}\n").unwrap();
    let mock = MockModel::start(Format::Anthropic, edit_replies()).await;
    let mut app = env.start(&mock, &[], 36, 120);
    app.type_text("rename it");
    app.send(b"\r");
    let dialog = app.wait_for("the whole dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    assert!(
        dialog.contains("fn old_name() {}") && dialog.contains("fn new_name() {}"),
        "{dialog}"
    );
    assert!(dialog.contains("lib.rs"), "{dialog}");
    assert_eq!(
        std::fs::read_to_string(env.path("lib.rs")).unwrap(),
        "fn old_name() {}\n"
    );
    app.send(b"a");
    app.wait_for_text("Renamed.");
    assert_eq!(
        std::fs::read_to_string(env.path("lib.rs")).unwrap(),
        "fn new_name() {}\n"
    );
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_leaves_the_file_byte_identical() {
    let env = Env::new();
    let original = b"fn old_name() {}\r\n// \xe2\x9c\x93 kept\r\n".to_vec();
    std::fs::write(env.path("lib.rs"), &original).unwrap();
    let mock = MockModel::start(Format::Anthropic, edit_replies()).await;
    let mut app = env.start(&mock, &[], 36, 120);
    app.type_text("rename it");
    app.send(b"\r");
    app.wait_for("the whole dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    app.send(b"d");
    app.type_text("not now");
    app.send(b"\r");
    app.wait_for_text("Renamed.");
    assert_eq!(std::fs::read(env.path("lib.rs")).unwrap(), original);
    let last = mock.requests()[2].to_string();
    assert!(last.contains("not now"), "the reason reaches the model");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_stores_its_rule_and_the_next_identical_call_is_not_asked() {
    let env = Env::new();
    std::fs::write(env.path("lib.rs"), "fn old_name() {}\n").unwrap();
    // The title request follows the first turn, so its reply is fourth.
    let mut replies = edit_replies();
    replies.extend([
        Reply::tool(
            "e2",
            "edit",
            json!({"file_path": "lib.rs", "old_string": "fn new_name() {}", "new_string": "fn third() {}"}),
        ),
        Reply::text("Again."),
    ]);
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let mut app = env.start(&mock, &[], 36, 120);
    app.type_text("rename it");
    app.send(b"\r");
    let dialog = app.wait_for("the whole dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    assert!(
        dialog.contains("edit(lib.rs)"),
        "the rule is shown before agreeing:\n{dialog}"
    );
    app.send(b"s");
    app.wait_for_text("Renamed.");
    app.type_text("once more");
    app.send(b"\r");
    let screen = app.wait_for_text("Again.");
    assert!(!screen.contains("Allow once"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(env.path("lib.rs")).unwrap(),
        "fn third() {}\n",
        "{screen}\n{}",
        mock.requests().last().unwrap()
    );
    let stored = env.0.own_rules();
    assert!(stored.contains("edit(lib.rs)"), "{stored}");
    assert!(!env.path(".cairn/config.toml").exists());
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_restores_an_edit_and_a_sed_change_byte_exact() {
    let env = Env::new();
    let a = b"alpha = 1\r\nbeta = 2\r\n".to_vec();
    let b = b"x x x\n\xff raw byte\n".to_vec();
    std::fs::write(env.path("a.txt"), &a).unwrap();
    std::fs::write(env.path("b.txt"), &b).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "a.txt"})),
            Reply::tool("e1", "edit", json!({"file_path": "a.txt", "old_string": "alpha = 1", "new_string": "alpha = 100"})),
            Reply::tool("b1", "bash", json!({"command": "sed -i s/x/y/g b.txt"})),
            Reply::text("Changed both."),
            Reply::text("Changes"),
        ],
    )
    .await;
    let mut app = env.start(&mock, &["--mode", "auto"], 36, 120);
    app.type_text("change both files");
    app.send(b"\r");
    app.wait_for_text("Changed both.");
    assert_ne!(std::fs::read(env.path("a.txt")).unwrap(), a);
    assert_ne!(std::fs::read(env.path("b.txt")).unwrap(), b);
    app.type_text("/undo");
    app.send(b"\r");
    let confirm = app.wait_for_text("Undo the file changes");
    assert!(
        confirm.contains("a.txt") && confirm.contains("b.txt"),
        "{confirm}"
    );
    // Nothing is restored before the person confirms.
    assert_ne!(std::fs::read(env.path("a.txt")).unwrap(), a);
    app.send(b"y");
    app.wait_for_text("Undone: restored");
    assert_eq!(std::fs::read(env.path("a.txt")).unwrap(), a);
    assert_eq!(std::fs::read(env.path("b.txt")).unwrap(), b);
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_redraws_an_edit_with_its_real_line_numbers_and_statuses() {
    let env = Env::new();
    let body: String = (1..=30).map(|i| format!("let v{i} = {i};\n")).collect();
    std::fs::write(env.path("lib.rs"), &body).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "lib.rs"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "lib.rs", "old_string": "let v27 = 27;", "new_string": "let v27 = 2700;"}),
            ),
            // Needs the network: asks even with the sandbox.
            Reply::tool("b1", "bash", json!({"command": "touch made-by-bash && git push"})),
            Reply::text("Changed v27."),
            Reply::text("Edit title"),
        ],
    )
    .await;
    let mut app = env.start(&mock, &[], 40, 120);
    app.type_text("change v27");
    app.send(b"\r");
    app.wait_for("the whole dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    app.send(b"a");
    app.wait_for_text("touch made-by-bash");
    app.wait_for("the whole dialog", |s| {
        s.contains("Allow once") && s.contains(" d  Deny")
    });
    app.send(b"d");
    app.send(b"\r");
    let before = app.wait_for_text("Changed v27.");
    quit(app);
    assert!(!env.path("made-by-bash").exists());

    let app = env.start(&mock, &["-c"], 40, 120);
    let after = app.wait_for_text("Changed v27.");
    // The diff is drawn against the whole file, so its line numbers are the
    // file's (27), not ones counted from the edited snippet.
    let numbered = |s: &str| {
        s.lines()
            .any(|l| l.trim_start().starts_with("27 + let v27 = 2700;"))
    };
    assert!(numbered(&before), "{before}");
    assert!(numbered(&after), "{after}");
    assert!(after.contains("denied"), "{after}");
    // The status line carries on from the session's cost and size.
    app.wait_for("the session's cost and size in the status line", |s| {
        s.contains("$0.00") && s.contains("(0%)")
    });
    quit(app);
}
