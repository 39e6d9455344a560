//! The frame flush through the front door: the real binary in a pty,
//! streaming a long markdown answer while the person scrolls back, opens
//! the command palette and resizes — with scroll regions on (the default)
//! and off (`[ui] scroll_regions = false`). The emulator's screen, colours
//! included, must be the same at the end either way; with them on, fewer
//! bytes cross the wire.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

fn answer() -> String {
    let mut s = String::new();
    for n in 1..=40 {
        s.push_str(&format!(
            "## Step {n}\n\nThe parser reads **tokens** one by one and builds a tree; each `node` keeps its span so errors can point at the source.\n\n- first point about step {n}\n- second point with `code`\n\n```rust\nfn step_{n}() -> usize {{ {n} }}\n```\n\n"
        ));
    }
    s.push_str("That is the whole plan.\n");
    s
}

/// Waits until the answer has streamed to step `n` or further (a fast
/// machine may be past it by the time this looks).
fn reach(app: &PtyApp, n: u32) {
    app.wait_for(&format!("step {n} or later"), |s| {
        s.contains("whole plan")
            || s.split("Step ").skip(1).any(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<u32>().is_ok_and(|k| k >= n)
            })
    });
}

/// Waits until the screen has not changed for `quiet`.
fn settle(app: &PtyApp, quiet: Duration) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = app.formatted();
    let mut since = Instant::now();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        let now = app.formatted();
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            return last;
        }
    }
    panic!("the screen never settled:\n{}", app.screen());
}

struct Run {
    /// The screen after streaming: each cell's text, colours and
    /// attributes (a blank cell is a space however it was made blank).
    cells: Vec<String>,
    text: String,
    raw: Vec<u8>,
}

/// The cells of a screen given as its formatted contents, one string per
/// row.
fn cells(formatted: &[u8], rows: u16, cols: u16) -> Vec<String> {
    let mut vt = vt100::Parser::new(rows, cols, 0);
    vt.process(formatted);
    let screen = vt.screen();
    (0..rows)
        .map(|y| {
            (0..cols)
                .filter_map(|x| screen.cell(y, x))
                .map(|c| {
                    let text = if c.contents().is_empty() {
                        " "
                    } else {
                        c.contents()
                    };
                    // A blank shows its background only.
                    if text == " " && !c.underline() && !c.inverse() {
                        return format!(" {:?}", c.bgcolor());
                    }
                    format!(
                        "{text}{:?}{:?}{}{}{}{}{}",
                        c.fgcolor(),
                        c.bgcolor(),
                        u8::from(c.bold()),
                        u8::from(c.dim()),
                        u8::from(c.italic()),
                        u8::from(c.underline()),
                        u8::from(c.inverse())
                    )
                })
                .collect()
        })
        .collect()
}

fn trimmed(screen: &str) -> String {
    screen
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Streams the answer with the person scrolling back, opening the palette
/// and resizing mid-stream; returns the settled screen.
async fn stream(home: &TestHome, scroll_regions: bool) -> Run {
    if !scroll_regions {
        let dir = home.home.path().join("config/cairn");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), "[ui]\nscroll_regions = false\n").unwrap();
    }
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text(&answer())
                .chunk_chars(24)
                .chunk_delay(Duration::from_millis(4)),
            Reply::text("A plan"),
        ],
    )
    .await;
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("make a plan");
    app.send(b"\r");
    reach(&app, 8);
    app.send(b"\x1b[5~"); // PageUp: read back while it streams
    std::thread::sleep(Duration::from_millis(150));
    app.send(b"\x10"); // Ctrl+P: the palette over the stream
    std::thread::sleep(Duration::from_millis(150));
    app.send(b"\x1b");
    std::thread::sleep(Duration::from_millis(100));
    app.send(b"\x1b[F"); // End: follow again
    reach(&app, 20);
    app.resize(24, 80);
    std::thread::sleep(Duration::from_millis(150));
    app.send(b"\x1b[5~");
    std::thread::sleep(Duration::from_millis(150));
    app.send(b"\x1b[F");
    reach(&app, 30);
    app.resize(40, 120);
    app.wait_for_text("That is the whole plan.");
    let screen = settle(&app, Duration::from_millis(600));
    let run = Run {
        cells: cells(&screen, 40, 120),
        text: trimmed(&app.screen()),
        raw: app.raw_output(),
    };
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(10)).is_some(),
        "cairn did not quit"
    );
    let raw = app.raw_output();
    assert!(
        find(&raw[run.raw.len()..], b"\x1b[r").is_some()
            && find(&raw[run.raw.len()..], b"\x1b[?1049l").is_some(),
        "the terminal was not restored on exit"
    );
    run
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A scroll inside a region: `ESC [ top ; bottom r ESC [ n S`.
fn scrolled_in_a_region(raw: &[u8]) -> bool {
    let mut i = 0;
    while let Some(p) = find(&raw[i..], b"r\x1b[") {
        let rest = &raw[i + p + 3..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && matches!(rest.get(digits), Some(b'S' | b'T')) {
            return true;
        }
        i += p + 1;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_is_the_same_with_and_without_scroll_regions() {
    // One home for both, so the status line shows the same project path.
    let home = TestHome::new();
    let on = stream(&home, true).await;
    let off = stream(&home, false).await;
    assert!(on.text.contains("That is the whole plan."), "{}", on.text);
    assert_eq!(
        on.text, off.text,
        "the settled screens differ:\n--- with scroll regions ---\n{}\n--- without ---\n{}",
        on.text, off.text
    );
    for (y, (a, b)) in on.cells.iter().zip(&off.cells).enumerate() {
        assert_eq!(a, b, "row {y}: same text, different colours or attributes");
    }
    assert!(scrolled_in_a_region(&on.raw), "no scroll region was used");
    assert!(
        !scrolled_in_a_region(&off.raw),
        "scroll_regions = false was not honoured"
    );
    // The scripted terminal reports DEC 2026: every frame is synchronized.
    assert!(find(&on.raw, b"\x1b[?2026h").is_some());
    assert!(
        on.raw.len() < off.raw.len(),
        "scroll regions wrote more: {} vs {} bytes",
        on.raw.len(),
        off.raw.len()
    );
}
