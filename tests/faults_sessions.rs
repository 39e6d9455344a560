//! Issue 11, sections 2 and 3 through `cairn run`: one writer per session
//! (a second instance continues in a fork; a killed one's lock is taken
//! over) and signals that cancel cleanly.

use crate::{mock_model, test_home};
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::TestHome;

fn session_of(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("cairn: session "))
        .unwrap_or_else(|| panic!("no session id on stderr: {stderr}"))
        .trim()
        .to_string()
}

fn prompts_of(home: &TestHome, id: &str) -> Vec<String> {
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(db).unwrap();
    store
        .load_messages(&cairn::store::SessionId(id.to_string()))
        .unwrap()
        .into_iter()
        .filter(|m| m.1.role == cairn::conversation::Role::User)
        .map(|m| format!("{:?}", m.1.parts))
        .collect()
}

async fn first_session(home: &TestHome) -> String {
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Noted."); 2]).await;
    let out = home
        .command(&mock.url())
        .args(["run", "the first prompt"])
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    session_of(&err)
}

/// Waits until `prompt` is stored in session `id`: its writer has resumed
/// the session, so holds its lock. (The lock file alone is no sign: the
/// check before resuming creates it for a moment too.)
async fn wait_for_writer(home: &TestHome, id: &str, prompt: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !prompts_of(home, id).iter().any(|p| p.contains(prompt)) {
        assert!(Instant::now() < deadline, "the session was never written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_second_instance_on_one_session_continues_in_a_fork() {
    let home = TestHome::new();
    let id = first_session(&home).await;
    let slow = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text(&"slowly ".repeat(60))
                .chunk_chars(7)
                .chunk_delay(Duration::from_millis(60)),
        ],
    )
    .await;
    let a = home
        .command(&slow.url())
        .args(["run", "--session", &id, "prompt from A"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_writer(&home, &id, "prompt from A").await;
    let quick = MockModel::start(Format::Anthropic, vec![Reply::text("Quick.")]).await;
    let b = home
        .command(&quick.url())
        .args(["run", "--session", &id, "prompt from B"])
        .output()
        .await
        .unwrap();
    let b_err = String::from_utf8_lossy(&b.stderr).into_owned();
    assert!(b.status.success(), "{b_err}");
    assert!(b_err.contains("open in another cairn"), "{b_err}");
    let fork = session_of(&b_err);
    assert_ne!(fork, id, "B wrote into A's session");
    assert!(
        b_err.contains(&format!("copy of it (session {fork})")),
        "the notice does not name the copy: {b_err}"
    );
    // A is still running; stop it the way a closed terminal would.
    let a_pid = nix::unistd::Pid::from_raw(a.id().unwrap() as i32);
    nix::sys::signal::kill(a_pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let a = a.wait_with_output().await.unwrap();
    assert_eq!(
        a.status.code(),
        Some(129),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );

    let original = prompts_of(&home, &id);
    assert!(original.iter().any(|p| p.contains("prompt from A")));
    assert!(
        !original.iter().any(|p| p.contains("prompt from B")),
        "{original:?}"
    );
    let forked = prompts_of(&home, &fork);
    assert!(forked.iter().any(|p| p.contains("the first prompt")));
    assert!(forked.iter().any(|p| p.contains("prompt from B")));
}

#[tokio::test]
async fn the_lock_of_a_killed_instance_is_taken_over() {
    let home = TestHome::new();
    let id = first_session(&home).await;
    let slow = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text(&"slowly ".repeat(200))
                .chunk_chars(7)
                .chunk_delay(Duration::from_millis(100)),
        ],
    )
    .await;
    let mut a = home
        .command(&slow.url())
        .args(["run", "--session", &id, "prompt from A"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_writer(&home, &id, "prompt from A").await;
    a.start_kill().unwrap(); // SIGKILL: no chance to clean up
    a.wait().await.unwrap();
    let quick = MockModel::start(Format::Anthropic, vec![Reply::text("Quick.")]).await;
    let c = home
        .command(&quick.url())
        .args(["run", "--session", &id, "prompt from C"])
        .output()
        .await
        .unwrap();
    let c_err = String::from_utf8_lossy(&c.stderr).into_owned();
    assert!(c.status.success(), "{c_err}");
    assert!(!c_err.contains("another cairn"), "{c_err}");
    assert_eq!(session_of(&c_err), id, "the stale lock was taken over");
    assert!(
        prompts_of(&home, &id)
            .iter()
            .any(|p| p.contains("prompt from C"))
    );
}

/// Processes whose command line contains `needle`, other than this one.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            found.push(format!("{}: {cmd}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[tokio::test]
async fn sighup_sigterm_and_sigint_cancel_the_turn_and_leave_no_process() {
    for (signal, code) in [
        (nix::sys::signal::Signal::SIGHUP, 129),
        (nix::sys::signal::Signal::SIGTERM, 143),
        (nix::sys::signal::Signal::SIGINT, 130),
    ] {
        let home = TestHome::new();
        // A number no other test uses, to find the sleep in /proc.
        let marker = format!("{}.{}", 700 + code, std::process::id() % 1000);
        let mock = MockModel::start(
            Format::Anthropic,
            vec![
                Reply::tool("b1", "bash", json!({"command": format!("sleep {marker}")})),
                Reply::text("never"),
            ],
        )
        .await;
        let child = home
            .command(&mock.url())
            .args(["run", "--mode", "auto", "wait a while"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while processes_with(&format!("sleep {marker}")).is_empty() {
            assert!(Instant::now() < deadline, "the command never started");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .expect("cairn did not exit after the signal")
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{signal}: {err}");
        assert!(err.contains("cancelled"), "{err}");
        let left = processes_with(&format!("sleep {marker}"));
        assert!(left.is_empty(), "{signal} left {left:?} ERR {err}");
        // The cancellation is recorded: the call has its result.
        let id = session_of(&err);
        let db = home.home.path().join("data/cairn/sessions.db");
        let store = cairn::store::Store::open(db).unwrap();
        let msgs = store.load_messages(&cairn::store::SessionId(id)).unwrap();
        let all = format!("{msgs:?}");
        assert!(all.contains("ToolResult") && all.contains("b1"), "{all}");
    }
}

#[tokio::test]
async fn temporary_files_of_a_crashed_run_are_removed_at_the_next_start() {
    let home = TestHome::new();
    let marker = format!("62.{}", std::process::id() % 1000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::tool(
            "b1",
            "bash",
            json!({"command": format!("sleep {marker}")}),
        )],
    )
    .await;
    let mut crashed = home
        .command(&mock.url())
        .args(["run", "--mode", "auto", "wait"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = crashed.id().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The shell's working-directory file lives in the system's temporary
    // directory, or in the sandbox's per-project one under the home.
    let left_by = |pid: u32| -> Vec<std::path::PathBuf> {
        let prefix = format!("cairn-cwd-{pid}-");
        let mut found = Vec::new();
        let mut dirs = vec![
            home.tmp.path().to_path_buf(),
            home.home.path().to_path_buf(),
        ];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let kind = e.file_type().ok();
                if kind.is_some_and(|k| k.is_dir()) {
                    dirs.push(e.path());
                } else if e.file_name().to_string_lossy().starts_with(&prefix) {
                    found.push(e.path());
                }
            }
        }
        found
    };
    assert_eq!(left_by(pid).len(), 1, "the shell call has its file");
    crashed.start_kill().unwrap(); // SIGKILL: a crash
    crashed.wait().await.unwrap();
    // The orphaned sleep is not what this test is about.
    for p in processes_with(&format!("sleep {marker}")) {
        if let Some(pid) = p.split(':').next().and_then(|n| n.parse::<i32>().ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    assert_eq!(left_by(pid).len(), 1, "a crash leaves it behind");

    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Hi."); 2]).await;
    let out = home
        .command(&mock.url())
        .args(["run", "hello"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !left_by(pid).is_empty() {
        assert!(Instant::now() < deadline, "the next start did not clean up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
