//! `/export` through the front door: `[ui] export_dir`, a path typed after
//! the command (relative to the workspace), and a file that is there
//! already, which is never overwritten.

use crate::{mock_model, pty, test_home};
use std::path::Path;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn export(app: &mut PtyApp, args: &str, expect: &str) -> String {
    app.type_text(format!("/export {args}").trim_end());
    app.send(b"\r");
    app.wait_for(expect, |s| s.contains(expect))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_goes_where_the_person_says_and_never_over_a_file() {
    let home = TestHome::new();
    home.write_config("[ui]\nexport_dir = \"~/my-exports\"\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Answered the question."),
            Reply::text("T").when("Write a title"),
        ],
    )
    .await;
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        36,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("a question");
    app.send(b"\r");
    app.wait_for_text("Answered the question.");

    // No path: the configured folder, `~/` being the home.
    export(&mut app, "", "my-exports");
    let mine = home.home.path().join("my-exports");
    let written = files_in(&mine);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with("cairn-session-") && written[0].ends_with(".md"));

    // A folder, relative to the workspace: the session's name inside it.
    export(&mut app, "json notes/", "notes/cairn-session-");
    let notes = home.path("notes");
    let in_notes = files_in(&notes);
    assert_eq!(in_notes.len(), 1, "{in_notes:?}");
    assert!(in_notes[0].ends_with(".json"), "{in_notes:?}");
    let json = std::fs::read_to_string(notes.join(&in_notes[0])).unwrap();
    assert!(json.contains("Answered the question."), "{json}");

    // A file name: written as that file, its format from the extension.
    // (The typed command shows the name too: wait for the file itself.)
    export(&mut app, "notes/today.md", "today.md");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !notes.join("today.md").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "today.md was not written"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let today = std::fs::read_to_string(notes.join("today.md")).unwrap();
    assert!(today.contains("a question") && !today.trim_start().starts_with('{'));

    // Again: refused, said, and the file left as it was.
    std::fs::write(notes.join("today.md"), "my own notes\n").unwrap();
    let screen = export(&mut app, "notes/today.md", "already exists");
    assert!(screen.contains("does not overwrite"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(notes.join("today.md")).unwrap(),
        "my own notes\n"
    );
    assert!(
        files_in(home.project.path())
            .iter()
            .all(|n| !n.starts_with("cairn-session-"))
    );
    app.ctrl_c_to_quit();
}
