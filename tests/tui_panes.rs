//! Tool panes and edit review through the front door: the real binary in
//! a pty against the scripted model.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

fn start(home: &TestHome, mock: &MockModel, rows: u16, cols: u16) -> PtyApp {
    start_with(home, mock, &[], rows, cols)
}

fn start_with(home: &TestHome, mock: &MockModel, args: &[&str], rows: u16, cols: u16) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
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
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
}

/// What the results of a request said, one string per tool result.
fn results(req: &serde_json::Value) -> String {
    let mut out = String::new();
    for m in req["messages"].as_array().into_iter().flatten() {
        for part in m["content"].as_array().into_iter().flatten() {
            if part["type"] == "tool_result" {
                out.push_str(&part["content"].to_string());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_command_streams_its_output_and_then_shows_it_in_colour() {
    let home = TestHome::new();
    // Outputs the command text itself does not contain.
    let command = "echo step-$((10+1)); sleep 1.5; echo step-$((20+2)); sleep 1.5; printf '\\033[31mred-%s\\033[0m plain-%s\\n' $((3*3)) $((4*4))";
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "b1",
                "bash",
                json!({"command": command, "description": "count slowly"}),
            ),
            Reply::text("Counted."),
            Reply::text("Count"),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 30, 110);
    app.type_text("count");
    app.send(b"\r");
    let mid = app.wait_for("the first line while the command runs", |s| {
        s.contains("│ step-11") && s.contains("running")
    });
    assert!(!mid.contains("step-22"), "{mid}");
    assert!(mid.contains("$ echo step-$((10+1)); sleep 1.5"), "{mid}");
    assert!(mid.contains("count slowly"), "{mid}");
    let done = app.wait_for_text("Counted.");
    assert!(
        done.contains("step-22") && done.contains("red-9 plain-16"),
        "{done}"
    );
    let output_rows: Vec<&str> = done.lines().filter(|l| l.contains("│ ")).collect();
    assert!(
        output_rows
            .iter()
            .all(|l| !l.contains("[31m") && !l.contains("[0m")),
        "{done}"
    );
    assert_eq!(
        app.fg_of("red-9"),
        Some(vt100::Color::Idx(1)),
        "{:?}",
        app.fg_of("plain-16")
    );
    assert_ne!(app.fg_of("plain-16"), Some(vt100::Color::Idx(1)));
    // The model reads the output without any escape sequence.
    let sent = results(&mock.requests()[1]);
    assert!(sent.contains("red-9 plain-16"), "{sent}");
    assert!(!sent.contains("\\u001b"), "{sent}");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_hunk_is_left_out_and_the_model_is_told_why() {
    let home = TestHome::new();
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(home.path("notes.txt"), &old).unwrap();
    let edits = json!([
        {"old_string": "line 3\n", "new_string": "line three\n"},
        {"old_string": "line 20\n", "new_string": "line twenty\n"},
        {"old_string": "line 37\n", "new_string": "line thirty-seven\n"},
    ]);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "notes.txt"})),
            Reply::tool(
                "e1",
                "multiedit",
                json!({"file_path": "notes.txt", "edits": edits}),
            ),
            Reply::text("Adjusted."),
            Reply::text("Notes"),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 40, 120);
    app.type_text("spell the numbers");
    app.send(b"\r");
    app.wait_for("the review", |s| {
        s.contains("hunk 1/3") && s.contains(" d  Deny")
    });
    app.send(b"n");
    app.send(b" ");
    app.wait_for_text("2 of 3 hunks accepted");
    app.send(b"a");
    app.wait_for_text("Why reject the rest");
    app.type_text("keep twenty as digits");
    app.send(b"\r");
    let screen = app.wait_for_text("Adjusted.");
    // The pane's diff is what was applied: two hunks, not three; and the
    // pane says the third was left out, and why.
    assert!(screen.contains("+2 −2"), "{screen}");
    assert!(
        screen.contains("1 of 3 hunks rejected by you, not applied: keep twenty as digits"),
        "{screen}"
    );
    let now = std::fs::read_to_string(home.path("notes.txt")).unwrap();
    assert_eq!(
        now,
        old.replace("line 3\n", "line three\n")
            .replace("line 37\n", "line thirty-seven\n")
    );
    let sent = results(&mock.requests()[2]);
    assert!(sent.contains("Rejected hunk 2 of 3"), "{sent}");
    assert!(sent.contains("+line twenty"), "{sent}");
    assert!(sent.contains("keep twenty as digits"), "{sent}");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_on_a_compound_command_stores_a_rule_for_each_part() {
    let home = TestHome::new();
    let command = "mkdir -p out && touch out/done";
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": command})),
            Reply::text("Made it."),
            Reply::text("Make"),
            Reply::tool("b2", "bash", json!({"command": command})),
            Reply::text("Made it again."),
        ],
    )
    .await;
    // Asking mode: in smart mode the sandbox lets these run unasked.
    let mut app = start_with(&home, &mock, &["--mode", "always-ask"], 40, 120);
    app.type_text("make out");
    app.send(b"\r");
    let dialog = app.wait_for("the dialog", |s| s.contains(" d  Deny"));
    assert!(dialog.contains("store these 2 rules"), "{dialog}");
    assert!(
        dialog.contains("bash(mkdir*)") && dialog.contains("bash(touch*)"),
        "each rule is listed:\n{dialog}"
    );
    app.send(b"s");
    app.wait_for_text("Made it.");
    assert!(home.path("out/done").exists());
    std::fs::remove_file(home.path("out/done")).unwrap();
    let stored = home.own_rules();
    assert!(
        stored.contains("bash(mkdir*)") && stored.contains("bash(touch*)"),
        "{stored}"
    );
    app.type_text("again");
    app.send(b"\r");
    let screen = app.wait_for_text("Made it again.");
    assert!(!screen.contains(" d  Deny"), "asked again:\n{screen}");
    assert!(
        home.path("out/done").exists(),
        "the same command ran unasked"
    );
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_pane_keeps_the_indentation_of_its_output() {
    let home = TestHome::new();
    let command = "printf 'tree-%s\\n  branch-%s\\n    leaf-%s\\n' $((1+1)) $((2+2)) $((3+3))";
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": command})),
            Reply::text("Listed."),
            Reply::text("List"),
        ],
    )
    .await;
    let mut app = start_with(&home, &mock, &["--mode", "auto"], 30, 110);
    app.type_text("list");
    app.send(b"\r");
    let done = app.wait_for_text("Listed.");
    assert!(done.contains("│ tree-2"), "{done}");
    assert!(done.contains("│   branch-4"), "{done}");
    assert!(done.contains("│     leaf-6"), "{done}");
    quit(app);
}
