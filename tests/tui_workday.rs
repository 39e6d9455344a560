//! The interface frictions of a first working day (issue 25), through the
//! front door: the real binary in a pty against the scripted model. Help's
//! search with no match, a large paste folded in the transcript and in
//! history, background jobs (status line, `/jobs`, stopping one, quitting),
//! what stays on the normal screen after quitting, how to select text with
//! the mouse captured, Shift+Enter as CSI u,
//! headings, the `/` menu's aliases, undo of a created file, one clock.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
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

/// Quits and returns the normal screen left behind.
fn quit(mut app: PtyApp) -> String {
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit:\n{}",
        app.screen()
    );
    app.screen()
}

/// The title request comes whenever the first exchange ends: a reply of
/// its own, so it never takes one meant for a turn.
fn title() -> Reply {
    Reply::text("Workday").when("Write a title for the coding session")
}

/// The first request the model got whose body contains `needle`.
fn request_with(mock: &MockModel, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = mock
            .requests()
            .iter()
            .map(|r| r.to_string())
            .find(|r| r.contains(needle));
        if let Some(r) = found {
            return r;
        }
        assert!(Instant::now() < deadline, "no request with {needle:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn last_row(screen: &str) -> String {
    screen.lines().last().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_search_without_a_match_keeps_its_box_and_its_keys() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = start(&home, &mock, 24, 80);
    app.send(b"\x1bOP");
    app.wait_for_text("Keys and commands");
    app.send(b"/");
    app.type_text("zzqq");
    let s = app.wait_for_text("search: zzqq");
    assert!(s.contains("Nothing matches."), "{s}");
    assert!(s.contains("┌ Keys and commands"), "the box stays:\n{s}");
    // Not frozen: Esc leaves the search, Esc closes, typing reaches the prompt.
    app.send(b"\x1b");
    app.wait_for("the search left", |s| !s.contains("search: zzqq"));
    app.send(b"\x1b");
    app.wait_for("help closed", |s| !s.contains("Keys and commands"));
    app.type_text("still here");
    app.wait_for_text("still here");
    // Dragging to select while cairn has the mouse says how to select.
    app.send(b"\x1b[<0;10;5M\x1b[<32;12;5M\x1b[<32;14;5M\x1b[<0;14;5m");
    app.wait_for_text("hold Shift while dragging");
    quit(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_paste_is_folded_in_the_transcript_and_recalled_folded() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            title(),
            Reply::text("Read it."),
            Reply::text("Read it again."),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 30, 100);
    let big: String = (0..602).map(|i| format!("pasted row {i}\n")).collect();
    app.type_text("look at this: ");
    app.send(format!("\x1b[200~{big}\x1b[201~").as_bytes());
    app.wait_for_text("[pasted 602 lines]");
    app.send(b"\r");
    let s = app.wait_for_text("Read it.");
    assert!(s.contains("› look at this: [pasted 602 lines]"), "{s}");
    assert!(!s.contains("pasted row 300"), "shown whole:\n{s}");
    request_with(&mock, "pasted row 601");
    // Enter on the prompt's cell shows it whole.
    app.send(b"\t");
    app.send(b"k");
    app.send(b"\r");
    app.wait_for_text("pasted row ");
    app.send(b"\r");
    app.wait_for("folded again", |s| !s.contains("pasted row "));
    // Back to the prompt: Up recalls it folded, and it is sent whole again.
    app.send(b"\t");
    app.send(b"\x1b[A");
    let s = app.wait_for("the recalled prompt", |s| {
        last_rows(s, 3).contains("look at this: [pasted 602 lines]")
    });
    assert!(!s.contains("pasted row "), "{s}");
    app.send(b"\r");
    app.wait_for_text("Read it again.");
    // The recalled prompt went whole: its answer's request holds the
    // paste twice (the first prompt and the recalled one).
    let second = mock
        .requests()
        .iter()
        .map(|r| r.to_string())
        .rfind(|r| !r.contains("Write a title"))
        .unwrap();
    assert_eq!(second.matches("pasted row 601").count(), 2, "{second}");
    quit(app);

    // Resumed, a prompt that large is folded whole: which part was pasted
    // is not stored.
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["-c"],
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        100,
    );
    let s = app.wait_for_text("Read it again.");
    assert!(
        s.contains("› look at this: pasted row 0 … [601 more lines]"),
        "{s}"
    );
    assert!(!s.contains("pasted row 300"), "{s}");
    quit(app);
}

fn last_rows(screen: &str, n: usize) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs_are_counted_listed_stopped_and_named_on_quit() {
    let home = TestHome::new();
    let ticker = "for i in $(seq 1 200); do echo tick$i; sleep 0.2; done";
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            title(),
            Reply::tool(
                "b1",
                "bash",
                json!({"command": ticker, "run_in_background": true}),
            ),
            Reply::text("Started the ticker."),
            Reply::tool("k1", "job_kill", json!({"job_id": "job-1"})),
            Reply::text("It was stopped already."),
            Reply::tool(
                "b2",
                "bash",
                json!({"command": "sleep 60", "run_in_background": true}),
            ),
            Reply::text("Sleeping."),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 30, 110);
    app.type_text("start the ticker");
    app.send(b"\r");
    let s = app.wait_for_text("Started the ticker.");
    let s = if last_row(&s).contains("1 job running (/jobs)") {
        s
    } else {
        app.wait_for("the count", |s| last_row(s).contains("1 job running"))
    };
    assert!(last_row(&s).contains("1 job running (/jobs)"), "{s}");

    app.type_text("/jobs");
    app.wait_for_text("Background jobs: what runs");
    app.send(b"\r");
    let s = app.wait_for_text("┌ Background jobs");
    assert!(s.contains("job-1  running"), "{s}");
    assert!(s.contains(ticker), "{s}");
    app.send(b"\r");
    app.wait_for_text("job-1 — latest output");
    app.wait_for("its output", |s| s.contains("  tick"));
    app.send(b"k");
    app.wait_for_text("Stop job-1 and everything it started?");
    app.send(b"y");
    app.wait_for("the job stopped", |s| s.contains("job-1  killed"));
    app.send(b"\x1b");
    let s = app.wait_for("the panel closed", |s| !s.contains("┌ Background jobs"));
    assert!(!last_row(&s).contains("running (/jobs)"), "{s}");

    // Stopping a job that already ended changes nothing: no question.
    app.type_text("stop it");
    app.send(b"\r");
    let s = app.wait_for_text("It was stopped already.");
    assert!(!s.contains("wants to run"), "{s}");
    request_with(&mock, "had already finished");

    app.type_text("start a sleeper");
    app.send(b"\r");
    app.wait_for_text("Sleeping.");
    app.wait_for("the count", |s| last_row(s).contains("1 job running"));
    let after = quit(app);
    assert!(
        after.contains("cairn: quitting stopped 1 background job (job-2)."),
        "{after}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_turn_stays_on_the_normal_screen_after_quitting() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            title(),
            Reply::text("The first answer."),
            Reply::text("## Findings\n\nAll **good** here."),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("first question");
    app.send(b"\r");
    app.wait_for_text("The first answer.");
    app.type_text("second question");
    app.send(b"\r");
    let s = app.wait_for_text("All good here.");
    // A heading shows as a heading, not as its markdown.
    assert!(s.contains("Findings") && !s.contains("## Findings"), "{s}");
    let after = quit(app);
    assert!(after.contains("› second question"), "{after}");
    assert!(after.contains("● ## Findings"), "{after}");
    assert!(after.contains("All **good** here."), "{after}");
    assert!(!after.contains("first question"), "{after}");

    // The whole conversation when asked for.
    home.write_config("[ui]\non_exit = \"transcript\"\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![title(), Reply::text("Third."), Reply::text("Last.")],
    )
    .await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("third question");
    app.send(b"\r");
    app.wait_for_text("Third.");
    app.type_text("last question");
    app.send(b"\r");
    app.wait_for_text("Last.");
    app.type_text("/quit");
    app.send(b"\r");
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
    let after = app.screen();
    // Not only the last turn: the one before it too.
    assert!(
        after.contains("› third question") && after.contains("● Third."),
        "{after}"
    );
    assert!(
        after.contains("› last question") && after.contains("● Last."),
        "{after}"
    );

    home.write_config("[ui]\non_exit = \"none\"\n");
    let mock = MockModel::start(Format::Anthropic, vec![title(), Reply::text("Fourth.")]).await;
    let mut app = start(&home, &mock, 24, 80);
    app.type_text("fourth question");
    app.send(b"\r");
    app.wait_for_text("Fourth.");
    let after = quit(app);
    assert!(!after.contains("fourth question"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_enter_as_csi_u_adds_a_line_and_aliases_are_in_the_menu() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            title(),
            Reply::text("Two lines."),
            Reply::tool(
                "w1",
                "write",
                json!({"file_path": "made.txt", "content": "new\n"}),
            ),
            Reply::text("Wrote it."),
            Reply::tool("s1", "bash", json!({"command": "sleep 2.5"})),
            Reply::text("Slept."),
        ],
    )
    .await;
    let mut app = start(&home, &mock, 30, 100);
    app.type_text("top");
    app.send(b"\x1b[13;2u");
    app.type_text("bottom");
    app.send(b"\r");
    app.wait_for_text("Two lines.");
    request_with(&mock, "top\\nbottom");

    for (typed, alias) in [("/cl", "/clear"), ("/res", "/resume")] {
        app.type_text(typed);
        let s = app.wait_for_text(alias);
        assert!(s.contains("(same as /"), "{s}");
        app.send(b"\x15");
        app.wait_for("the prompt emptied", |s| !s.contains(alias));
    }

    // Undoing a turn that created a file says the file was removed.
    app.type_text("make a file");
    app.send(b"\r");
    app.wait_for_text("wants to");
    app.send(b"a");
    app.wait_for_text("Wrote it.");
    assert!(home.path("made.txt").exists());
    app.type_text("/undo");
    app.send(b"\r");
    app.wait_for_text("made.txt");
    // A dialog takes no answer in its first moment (keys typed ahead).
    std::thread::sleep(Duration::from_millis(800));
    app.send(b"y");
    let s = app.wait_for_text("Undone:");
    assert!(s.contains("Undone: removed made.txt"), "{s}");
    assert!(!home.path("made.txt").exists());

    // One clock: a running command counts whole seconds in its pane and
    // in the status line alike.
    app.type_text("nap");
    app.send(b"\r");
    let s = app.wait_for("both clocks at 1s", |s| {
        s.contains("running bash 1s") && s.contains("running 1s")
    });
    let running: Vec<&str> = s.lines().filter(|l| l.contains("running")).collect();
    assert!(running.iter().all(|l| !l.contains("ms")), "{s}");
    app.wait_for_text("Slept.");
    quit(app);
}
