//! Issue 24, every way the interface can end, from outside, in a real pty:
//! SIGINT and SIGQUIT give the terminal back (checked with `stty -a` run
//! right after, and the alternate screen left) and stop the running
//! command; SIGTSTP suspends like Ctrl+Z and `fg` resumes with keys
//! working; `kill -9` leaves no command running.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// Pids of processes whose command line contains `needle`.
fn pids_with(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmd)
            .replace('\0', " ")
            .contains(needle)
        {
            found.push(pid);
        }
    }
    found
}

fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The one cairn process started by this test's shell (found by its home).
fn cairn_pid(home: &TestHome) -> Pid {
    let mut pid = None;
    wait_until("cairn's pid", 10, || {
        pid = pids_with(CAIRN).into_iter().find(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .map(|e| String::from_utf8_lossy(&e).contains(&*home.home.path().to_string_lossy()))
                .unwrap_or(false)
                && std::fs::read(format!("/proc/{p}/cmdline"))
                    .map(|c| c.starts_with(CAIRN.as_bytes()))
                    .unwrap_or(false)
        });
        pid.is_some()
    });
    Pid::from_raw(pid.unwrap())
}

fn left_alternate_screen(app: &PtyApp) -> bool {
    let raw = String::from_utf8_lossy(&app.raw_output()).into_owned();
    let tail = &raw[raw.rfind("\u{1b}[?1049h").unwrap_or(0)..];
    tail.contains("\u{1b}[?1049l")
}

/// Starts cairn in auto mode under `sh`, which runs `stty -a` into a file
/// the moment cairn ends; asks for a long `sleep` and waits until it runs.
async fn running_command(home: &TestHome, marker: &str) -> (MockModel, PtyApp) {
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": format!("sleep {marker}")})),
            Reply::text("never"),
        ],
    )
    .await;
    let mut env = home.vars(&mock.url());
    env.push(("CAIRN_EXE".into(), CAIRN.into()));
    env.push((
        "STTY_OUT".into(),
        home.path("stty.txt").display().to_string(),
    ));
    let mut app = PtyApp::spawn(
        Path::new("sh"),
        &["-c", "\"$CAIRN_EXE\" --mode auto; stty -a > \"$STTY_OUT\""],
        &env,
        home.project.path(),
        30,
        100,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("wait a while");
    app.send(b"\r");
    let needle = format!("sleep {marker}");
    wait_until("the command to start", 20, || {
        !pids_with(&needle).is_empty()
    });
    (mock, app)
}

fn assert_cooked(stty: &str) {
    let flags: Vec<&str> = stty.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(
            flags.contains(&flag),
            "{flag} is off after cairn ended:\n{stty}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_and_sigquit_from_outside_restore_the_terminal_and_stop_the_command() {
    for (n, signal) in [Signal::SIGINT, Signal::SIGQUIT].into_iter().enumerate() {
        let home = TestHome::new();
        let marker = format!("62.{}{n}", std::process::id() % 1000);
        let (_mock, mut app) = running_command(&home, &marker).await;
        kill(cairn_pid(&home), signal).unwrap();
        let out = home.path("stty.txt");
        wait_until("stty after cairn ended", 20, || {
            std::fs::read_to_string(&out).is_ok_and(|s| !s.is_empty())
        });
        assert_cooked(&std::fs::read_to_string(&out).unwrap());
        assert!(
            left_alternate_screen(&app),
            "{signal}: still in the alternate screen"
        );
        let needle = format!("sleep {marker}");
        wait_until("the command to be stopped", 10, || {
            pids_with(&needle).is_empty()
        });
        app.wait_exit(Duration::from_secs(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_cairn_leaves_no_command_running() {
    let home = TestHome::new();
    let marker = format!("63.{}", std::process::id() % 1000);
    let (_mock, mut app) = running_command(&home, &marker).await;
    kill(cairn_pid(&home), Signal::SIGKILL).unwrap();
    let needle = format!("sleep {marker}");
    wait_until("the orphaned command to die", 10, || {
        pids_with(&needle).is_empty()
    });
    app.wait_exit(Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigtstp_from_outside_suspends_and_fg_resumes_with_keys_working() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Answered after the resume."), Reply::text("T")],
    )
    .await;
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
    shell.type_text(&format!("{CAIRN}\r"));
    shell.wait_for_text("Ask cairn");
    kill(cairn_pid(&home), Signal::SIGTSTP).unwrap();
    shell.wait_for("the shell after kill -TSTP", |s| {
        s.contains("Stopped") && !s.contains("Ask cairn")
    });
    assert!(
        left_alternate_screen(&shell),
        "still in the alternate screen"
    );
    shell.type_text("stty -a\r");
    let screen = shell.wait_for_text("icanon");
    assert!(!screen.contains("-icanon"), "{screen}");
    shell.type_text("fg\r");
    shell.wait_for_text("Ask cairn");
    // Raw mode is back: typed keys reach cairn and Enter sends.
    shell.type_text("say something");
    shell.wait_for_text("say something");
    shell.send(b"\r");
    shell.wait_for_text("Answered after the resume.");
    // A first Ctrl+C that lands while the turn is still finishing cancels
    // it instead of arming the quit: press again until cairn is gone.
    for _ in 0..3 {
        shell.send(b"\x03");
        std::thread::sleep(Duration::from_millis(100));
        shell.send(b"\x03");
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        let s = shell.wait_for("cairn quitting", |s| {
            s.contains("shell$") || std::time::Instant::now() > deadline
        });
        if s.contains("shell$") {
            break;
        }
    }
    shell.wait_for_text("shell$");
    shell.type_text("exit\r");
    shell.wait_exit(Duration::from_secs(10));
}
