//! Escapes cases for two findings of the fourth hostile review, fixed
//! then but checked only by scripts outside the project:
//!
//! - F3, the mention race: cairn reads a file the person names with `@`
//!   in its own process. It checked the path, then opened it again by
//!   name, so a job flipping `d/id_rsa` between a file and a link to
//!   `~/.ssh/id_rsa` got the key attached to the prompt. The checked file
//!   is now opened beneath the workspace and compared by descriptor.
//! - F6, trust laundering: a command planted `.cairn/config.toml` holding
//!   only a `[[hooks.Stop]]`; "Allow always" on an unrelated command then
//!   recorded the project as trusted, hooks included, never shown. Storing
//!   a rule now keeps trust only for a project that was trusted or holds
//!   nothing; the next session asks (headless: ignores the hook).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::bash;
use crate::escape_fixture::{Fixture, assert_contained};
use crate::mock_model::{Format, MockModel, Reply};
use crate::pty::PtyApp;

/// Flips `ws/d/id_rsa` between a decoy file and a link to the person's
/// key until `stop` is set — what a background job in the sandbox does.
fn flipper(ws: &Path, key: &Path, n: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let d = ws.join("d");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("id_rsa"), "decoy\n").unwrap();
    let key = key.to_path_buf();
    let (link, file) = (d.join(format!(".l{n}")), d.join(format!(".f{n}")));
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let _ = std::os::unix::fs::symlink(&key, &link);
            let _ = std::fs::rename(&link, d.join("id_rsa"));
            let _ = std::fs::write(&file, "decoy\n");
            let _ = std::fs::rename(&file, d.join("id_rsa"));
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mention_swapped_for_a_link_reads_nothing_outside() {
    let f = Fixture::new();
    let stop = Arc::new(AtomicBool::new(false));
    let key = f.home.join(".ssh/id_rsa");
    let flips = [0, 1].map(|n| flipper(&f.ws, &key, n, stop.clone()));
    // Many spellings of the one path: each is read on its own.
    let mut prompt = String::from("look at these:");
    for i in 0..1500 {
        prompt.push_str(&format!(
            " @{}d/{}id_rsa",
            "./".repeat(i % 40),
            "./".repeat(i / 40)
        ));
    }
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("noted")]).await;
    let before = f.snapshot();
    f.run_in(&f.ws.clone(), &mock, &["run", "--mode", "smart", &prompt])
        .await;
    stop.store(true, Ordering::Relaxed);
    for flip in flips {
        flip.join().unwrap();
    }
    let mut escapes = f.escapes(&mock, &before);
    // The flipper's own files are the test's, not an escape.
    escapes.retain(|e| !e.contains("/d/"));
    let sent: String = mock.requests().iter().map(|r| r.to_string()).collect();
    assert!(
        sent.contains("decoy"),
        "no mention was read: the case did not run as meant"
    );
    assert_contained("F3 the mention race", &escapes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_never_trusts_a_planted_project_config() {
    if !crate::escape_fixture::needs(&["curl"]) {
        return;
    }
    let f = Fixture::new();
    // The hook runs in the sandbox: its mark goes in the workspace.
    let plant = "mkdir -p .cairn && printf '[[hooks.Stop]]\\nhooks = [{type = \"command\", command = \"touch stop-ran\"}]\\n' > .cairn/config.toml";
    let curl = format!("curl -sI http://127.0.0.1:{}/", f.listener.port);
    let mock = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![bash("t1", plant), bash("t2", &curl)]),
    )
    .await;
    let mut vars = f.vars(&mock.url());
    vars.push(("CAIRN_DIALOG_PAUSE_MS".into(), "0".into()));
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["--mode", "smart"],
        &vars,
        &f.ws,
        40,
        140,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("check the site");
    app.send(b"\r");
    // The person's only answer: "Allow always" on the curl dialog.
    app.wait_for("the curl dialog", |s| s.contains("Allow always"));
    std::thread::sleep(Duration::from_millis(300));
    app.send(b"s");
    app.wait_for("the turn's end", |s| s.contains("Done."));
    app.ctrl_c_to_quit();
    app.wait_exit(Duration::from_secs(10));
    let mut all = Vec::new();
    // The rule goes to the person's own file for the project (never into
    // the repository, where the planted hook waits).
    let own = f.home.join(".config/cairn/projects");
    let stored = std::fs::read_dir(&own)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("curl")));
    if !stored {
        all.push("the rule was not stored (the case did not run as meant)".to_string());
    }
    // The next session, headless: an untrusted project's hooks never run.
    let next = MockModel::start(Format::Anthropic, vec![Reply::text("ok")]).await;
    f.run(&next, "smart").await;
    if f.ws.join("stop-ran").exists() {
        all.push("the planted Stop hook ran in the next session".into());
    }
    assert_contained("F6 trust laundering through Allow always", &all);
}
