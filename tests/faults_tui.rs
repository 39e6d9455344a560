//! Issue 11 in the interface, the real binary in a pty: SIGHUP while a
//! command runs leaves nothing behind; Ctrl+Z suspends to the shell and
//! `fg` redraws; a session open in another cairn is offered as a fork.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

fn start(home: &TestHome, mock: &MockModel, args: &[&str]) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        100,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            found.push(cmd);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_while_a_command_runs_leaves_no_process_and_records_the_cancellation() {
    let home = TestHome::new();
    let marker = format!("61.{}", std::process::id() % 1000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": format!("sleep {marker}")})),
            Reply::text("never"),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &["--mode", "auto"]);
    app.type_text("wait a while");
    app.send(b"\r");
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(app.pid().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    assert!(
        app.wait_exit(Duration::from_secs(20)).is_some(),
        "cairn did not exit on SIGHUP"
    );
    let left = processes_with(&format!("sleep {marker}"));
    assert!(left.is_empty(), "left behind: {left:?}");
    // The terminal was given back: the alternate screen left, the cursor shown.
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    let tail = &raw[raw.rfind("\u{1b}[?1049h").unwrap_or(0)..];
    assert!(
        tail.contains("\u{1b}[?1049l"),
        "still in the alternate screen"
    );
    // The call was answered as cancelled and stored.
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(db).unwrap();
    let s = store.latest_session(home.project.path()).unwrap().unwrap();
    let all = format!("{:?}", store.load_messages(&s.id).unwrap());
    assert!(all.contains("ToolResult") && all.contains("b1"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_z_suspends_to_the_shell_and_fg_redraws() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("An answer worth seeing again."),
            Reply::text("T"),
        ],
    )
    .await;
    // A shell with job control is what makes Ctrl+Z mean anything.
    let mut env = home.vars(&mock.url());
    env.push(("PS1".into(), "shell$ ".into()));
    let mut shell = PtyApp::spawn(
        Path::new("bash"),
        &["--norc", "--noprofile", "-i"],
        &env,
        home.project.path(),
        30,
        100,
    );
    shell.wait_for_text("shell$");
    shell.type_text(&format!(
        "exec_path={}; $exec_path\r",
        env!("CARGO_BIN_EXE_cairn")
    ));
    shell.wait_for_text("Ask cairn");
    shell.type_text("say something");
    shell.send(b"\r");
    shell.wait_for_text("worth seeing again");
    shell.send(b"\x1a");
    let screen = shell.wait_for("the shell after Ctrl+Z", |s| {
        s.contains("Stopped") && !s.contains("Ask cairn")
    });
    assert!(!screen.contains("worth seeing again"), "{screen}");
    shell.type_text("fg\r");
    shell.wait_for("cairn redrawn after fg", |s| {
        s.contains("worth seeing again") && s.contains("Ask cairn")
    });
    // Raw mode is back: a key goes to cairn, not to the shell's line editor.
    shell.type_text("typed after fg");
    shell.wait_for_text("typed after fg");
    shell.send(b"\x03"); // clears the typed text
    std::thread::sleep(Duration::from_millis(100));
    shell.send(b"\x03");
    std::thread::sleep(Duration::from_millis(100));
    shell.send(b"\x03");
    shell.wait_for_text("shell$");
    shell.type_text("exit\r");
    shell.wait_exit(Duration::from_secs(10));
}

fn quit(mut app: PtyApp) {
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}

fn user_prompts(home: &TestHome) -> Vec<(String, String)> {
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(db).unwrap();
    let mut out = Vec::new();
    for s in store
        .list_sessions(&cairn::store::ListFilter::default())
        .unwrap()
    {
        for (_, m, _) in store.load_messages(&s.id).unwrap() {
            if m.role == cairn::conversation::Role::User {
                out.push((s.id.to_string(), format!("{:?}", m.parts)));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_open_elsewhere_is_offered_as_a_fork_or_read_only() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Noted."); 12]).await;
    let mut first = start(&home, &mock, &[]);
    first.type_text("the original prompt");
    first.send(b"\r");
    first.wait_for_text("Noted.");
    quit(first);
    let original = user_prompts(&home)[0].0.clone();

    // A holds the session (its screen is up, so the lock file is the
    // writer's, not the check before resuming).
    let a = start(&home, &mock, &["-c"]);
    let lock = home
        .home
        .path()
        .join(format!("data/cairn/locks/{original}.lock"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !lock.exists() {
        assert!(Instant::now() < deadline, "A never locked the session");
        std::thread::sleep(Duration::from_millis(50));
    }
    // By id: after B, the latest session is B's fork.
    let spawn_b = || {
        PtyApp::spawn(
            Path::new(env!("CARGO_BIN_EXE_cairn")),
            &["--resume", &original],
            &home.vars(&mock.url()),
            home.project.path(),
            30,
            100,
        )
    };
    // B: Enter takes the default, a fork.
    let mut b = spawn_b();
    let offer = b.wait_for_text("[F]ork it");
    assert!(offer.contains("open in another cairn"), "{offer}");
    b.send(b"\r");
    b.wait_for_text("Ask cairn");
    b.type_text("prompt from the fork");
    b.send(b"\r");
    b.wait_for("the fork's answer", |s| s.matches("Noted.").count() >= 2);
    quit(b);
    // C: read-only.
    let mut c = spawn_b();
    c.wait_for_text("[F]ork it");
    c.type_text("r\r");
    let shown = c.wait_for_text("Read-only");
    // The status line says so as long as it lasts.
    let status = shown.lines().last().unwrap_or("");
    assert!(
        status.contains("read-only (open in another cairn)"),
        "{shown}"
    );
    c.type_text("prompt while read-only");
    c.send(b"\r");
    // Read-only refuses the prompt (issue 16): nothing reaches the model.
    let refused = c.wait_for_text("Not sent:");
    assert_eq!(refused.matches("Noted.").count(), 1, "{refused}");
    quit(c);
    quit(a);

    let prompts = user_prompts(&home);
    let in_original: Vec<_> = prompts.iter().filter(|p| p.0 == original).collect();
    assert!(
        !in_original
            .iter()
            .any(|p| p.1.contains("fork") || p.1.contains("read-only")),
        "{prompts:?}"
    );
    let fork = prompts
        .iter()
        .find(|p| p.1.contains("prompt from the fork"))
        .expect("the fork was recorded");
    assert_ne!(fork.0, original);
    assert!(
        prompts
            .iter()
            .any(|p| p.0 == fork.0 && p.1.contains("the original prompt")),
        "the fork carries the history"
    );
    assert!(
        !prompts
            .iter()
            .any(|p| p.1.contains("prompt while read-only")),
        "{prompts:?}"
    );
}

/// A small tmpfs over the data directory, unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_shows_not_saved_until_space_returns_and_nothing_is_lost() {
    let home = TestHome::new();
    let data = home.home.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&data)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    let _fs = Tmpfs(data.clone());
    let long = "an answer that needs room on the disk. ".repeat(3000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("First."),
            Reply::text("T"),
            Reply::text(&long).chunk_chars(20000),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &[]);
    app.type_text("the first prompt");
    app.send(b"\r");
    app.wait_for_text("First.");
    // Fill the disk.
    let filler = data.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![b'x'; 16 * 1024];
    while std::io::Write::write_all(&mut f, &block).is_ok() {}
    let _ = f.sync_all();
    drop(f);
    app.type_text("the second prompt");
    app.send(b"\r");
    app.wait_for_text("not saved");
    // The answer is on screen (so quitting later cannot cancel it).
    app.wait_for_text("needs room on the disk");
    // Space again: the waiting writes go in and the warning goes away.
    std::fs::remove_file(&filler).unwrap();
    app.wait_for("the warning cleared", |s| {
        !s.contains("not saved:") && s.contains("saved again")
    });
    quit(app);
    let prompts = user_prompts(&home);
    assert!(
        prompts.iter().any(|p| p.1.contains("the second prompt")),
        "{prompts:?}"
    );
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(db).unwrap();
    let s = store.latest_session(home.project.path()).unwrap().unwrap();
    let all = format!("{:?}", store.load_messages(&s.id).unwrap());
    assert!(
        all.contains("needs room on the disk"),
        "the answer was kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_while_writes_still_fail_says_so_and_exits_non_zero() {
    let home = TestHome::new();
    let data = home.home.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&data)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    let _fs = Tmpfs(data.clone());
    let long = "an answer that needs room on the disk. ".repeat(3000);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("First."),
            Reply::text("T"),
            Reply::text(&long).chunk_chars(20000),
        ],
    )
    .await;
    let mut app = start(&home, &mock, &[]);
    app.type_text("the first prompt");
    app.send(b"\r");
    app.wait_for_text("First.");
    let mut f = std::fs::File::create(data.join("filler")).unwrap();
    let block = vec![b'x'; 16 * 1024];
    while std::io::Write::write_all(&mut f, &block).is_ok() {}
    drop(f);
    app.type_text("the second prompt");
    app.send(b"\r");
    app.wait_for_text("not saved");
    app.ctrl_c_to_quit();
    let code = app
        .wait_exit(Duration::from_secs(40))
        .expect("cairn did not quit");
    assert_ne!(code, 0);
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    let tail: String = raw
        .chars()
        .rev()
        .take(2000)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        raw.contains("could not be saved"),
        "the end of the output: {tail}"
    );
}
