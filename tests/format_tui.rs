//! Formatting after an edit in the real interface, in a pty: the review
//! dialog says rustfmt will format the file once it is applied, the pane
//! says it did, the file on disk is formatted, and `/undo` brings back the
//! file as it was before the edit (not merely before formatting). Skips,
//! saying why, when rustfmt is not installed.

use crate::format_run::{CONFIG, FORMATTED, LIB, MANIFEST, edit_lib, rustfmt_bin};
use crate::test_home::path_with;
use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dialog_and_pane_say_rustfmt_and_undo_restores_the_text_before_the_edit() {
    let Some(bin) = rustfmt_bin() else { return };
    let home = TestHome::new();
    home.write_config(CONFIG);
    home.write("Cargo.toml", MANIFEST);
    home.write("src/lib.rs", LIB);
    let mut replies = edit_lib();
    replies.extend([Reply::text("Done."), Reply::text("Title")]);
    let mock = MockModel::start(Format::Anthropic, replies).await;
    let mut vars = home.vars(&mock.url());
    vars.push(("PATH".into(), path_with(&bin)));
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &vars,
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("make add clearer");
    app.send(b"\r");
    let dialog = app.wait_for_text("Allow once");
    assert!(
        dialog.contains("will be formatted by rustfmt after it is applied"),
        "{dialog}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path("src/lib.rs")).unwrap(),
        LIB,
        "nothing is written before the answer"
    );
    app.send(b"a");
    let screen = app.wait_for_text("Done.");
    assert!(screen.contains("formatted by rustfmt"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(home.path("src/lib.rs")).unwrap(),
        FORMATTED
    );

    app.type_text("/undo");
    app.send(b"\r");
    let confirm = app.wait_for_text("Undo the file changes");
    assert!(confirm.contains("src/lib.rs"), "{confirm}");
    app.send(b"y");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(home.path("src/lib.rs")).unwrap() != LIB {
        let screen = app.screen();
        assert!(Instant::now() < deadline, "not undone: {screen}");
        std::thread::sleep(Duration::from_millis(20));
    }
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}
