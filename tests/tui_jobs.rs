//! A background job through the front door: the real binary in a pty
//! against the scripted model. The job's lines keep arriving in the pane of
//! the call that started it after the turn ended, then its exit.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

/// The job's loop, after a line holding a secret the job assembles (the
/// child never inherits the variable; its output must not show it).
const COMMAND: &str = "printf 'tok %s%s\\n' jobsecret- 0123456789abcdef; \
                       for i in 1 2 3 4; do echo tick$i; sleep 0.5; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_keeps_streaming_into_its_pane_after_the_turn() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "b1",
                "bash",
                json!({"command": COMMAND, "run_in_background": true}),
            ),
            Reply::text("Started it."),
            Reply::text("Ticks"),
        ],
    )
    .await;
    let mut env = home.vars(&mock.url());
    env.push((
        "CAIRN_JOB_TOKEN".into(),
        "jobsecret-0123456789abcdef".into(),
    ));
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &env,
        home.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("start the ticker");
    app.send(b"\r");
    // The turn is over while the job still runs and its lines come in.
    let mid = app.wait_for("the answer, with the job running", |s| {
        s.contains("Started it.") && s.contains("│ tick") && s.contains("running")
    });
    assert!(mid.contains("background job-1"), "{mid}");
    assert!(!mid.contains("exit 0"), "{mid}");
    let ticks = |s: &str| {
        (1..=4)
            .filter(|i| s.contains(&format!("│ tick{i}")))
            .count()
    };
    let seen = ticks(&mid);
    if seen < 4 {
        app.wait_for("more lines of the job", |s| ticks(s) > seen);
    }
    let done = app.wait_for("the job's end", |s| s.contains("exit 0"));
    // Its own run time: four half-second sleeps.
    let ran = done
        .split("background job-1 · exit 0 · ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|secs| secs.trim().parse::<u64>().ok());
    assert!(ran.is_some_and(|s| (2..10).contains(&s)), "{done}");
    let pane: Vec<&str> = done.lines().filter(|l| l.contains("│ ")).collect();
    for i in 1..=4 {
        assert!(
            pane.iter().any(|l| l.contains(&format!("tick{i}"))),
            "tick{i} in the pane:\n{done}"
        );
    }
    assert!(done.contains("[redacted: CAIRN_JOB_TOKEN]"), "{done}");
    assert!(!done.contains("tok jobsecret-0123"), "{done}");
    quit(app);
}

/// Whether a process whose command line holds `needle` is alive.
fn alive(needle: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(needle)
            })
        })
}

fn gone_within(needle: &str, secs: u64) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if !alive(needle) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// `/new` stops the earlier session's jobs and says so; `/jobs` then lists
/// them as stopped with that session and offers no stop for them, while a
/// job of the new session with the same call and job id is stopped on its
/// own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_of_an_earlier_session_are_stopped_with_it_and_not_offered_to_stop() {
    let home = TestHome::new();
    let first = format!("sleep 91.{}1", std::process::id());
    let second = format!("sleep 91.{}2", std::process::id());
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "b1",
                "bash",
                json!({"command": first, "run_in_background": true}),
            ),
            Reply::text("First started."),
            Reply::text("T").when("Write a title"),
        ],
    )
    .await;
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("start one");
    app.send(b"\r");
    app.wait_for_text("First started.");
    app.wait_for("the job", |_| alive(&first));
    app.type_text("/new");
    app.send(b"\r");
    let s = app.wait_for_text("Stopped the earlier session's background job job-1");
    assert!(!s.contains("job running"), "{s}");
    assert!(
        gone_within(&first, 10),
        "the earlier session's job still runs"
    );

    mock.push(Reply::tool(
        "b1",
        "bash",
        json!({"command": second, "run_in_background": true}),
    ));
    mock.push(Reply::text("Second started."));
    app.type_text("start another");
    app.send(b"\r");
    app.wait_for_text("Second started.");
    app.wait_for("the new job counted", |s| s.contains("1 job running"));
    app.type_text("/jobs");
    app.wait_for_text("Background jobs: what runs");
    app.send(b"\r");
    let s = app.wait_for_text("┌ Background jobs");
    assert!(s.contains("job-1  stopped with the earlier session"), "{s}");
    assert!(s.contains("job-1  running"), "{s}");
    // The earlier one: no question, nothing stopped.
    app.send(b"\x1b[A");
    app.send(b"k");
    std::thread::sleep(Duration::from_millis(400));
    assert!(!app.screen().contains("Stop job-1"), "{}", app.screen());
    assert!(alive(&second));
    // The new one stops after a yes.
    app.send(b"\x1b[B");
    app.send(b"k");
    app.wait_for_text("Stop job-1 and everything it started?");
    app.send(b"y");
    app.wait_for("the new job stopped", |s| s.contains("job-1  killed"));
    assert!(gone_within(&second, 10), "the new session's job still runs");
    app.send(b"\x1b");
    // An Esc and a Ctrl+C in one read are one Alt+Ctrl+C key.
    app.wait_for("the panel closed", |s| !s.contains("┌ Background jobs"));
    quit(app);
}

fn quit(mut app: PtyApp) {
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
}
