//! Pictures and reasoning effort in the real interface: a pasted picture
//! path becomes a chip sent with the prompt, `/effort high` shows in the
//! status line and changes the next request.

use crate::{mock_model, pty, test_home};
use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use test_home::TestHome;

fn start(home: &TestHome, mock: &MockModel) -> PtyApp {
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &home.vars(&mock.url()),
        home.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app
}

fn wait_requests(mock: &MockModel, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while mock.requests().len() < n {
        assert!(
            Instant::now() < deadline,
            "the model got {:?}",
            mock.requests()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x * 3) as u8, (y * 5) as u8, 90])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_picture_path_is_a_chip_sent_with_the_prompt() {
    let home = TestHome::new();
    let shot = home.path("shot.png");
    std::fs::write(&shot, png(80, 50)).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("The header is cut off."), Reply::text("Header")],
    )
    .await;
    let mut app = start(&home, &mock);
    // A file dropped on the terminal arrives as a bracketed paste of its path.
    app.send(format!("\x1b[200~{}\x1b[201~", shot.display()).as_bytes());
    let screen = app.wait_for_text("[image 1 · 80×50 png ·");
    assert!(!screen.contains(&shot.display().to_string()), "{screen}");
    // A pasted path that is not a picture stays text in the prompt.
    app.send(b"\x1b[200~/nowhere/missing.png\x1b[201~");
    app.wait_for_text("/nowhere/missing.png was not attached");
    app.wait_for("the pasted text kept in the prompt", |s| {
        s.matches("/nowhere/missing.png").count() >= 2
    });
    app.send(b"\x15");
    app.type_text("what is wrong here?");
    app.send(b"\r");
    let screen = app.wait_for_text("The header is cut off.");
    assert!(screen.contains("[image 1 · 80×50 png"), "{screen}");
    let first = &mock.requests()[0];
    let blocks = first["messages"][0]["content"].as_array().unwrap();
    assert!(blocks.iter().any(|b| b["type"] == "image"), "{first}");
    assert!(
        blocks.iter().any(|b| b["text"] == "what is wrong here?"),
        "{first}"
    );
    app.ctrl_c_to_quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_effort_shows_in_the_status_line_and_changes_the_next_request() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Quick answer."),
            Reply::text("Title"),
            Reply::text("Deep answer."),
        ],
    )
    .await;
    let mut app = start(&home, &mock);
    app.type_text("hello");
    app.send(b"\r");
    app.wait_for_text("Quick answer.");
    wait_requests(&mock, 1);
    let budget = |r: &serde_json::Value| r["thinking"]["budget_tokens"].as_u64();
    let default_budget = budget(&mock.requests()[0]);
    app.type_text("/effort high");
    app.send(b"\r");
    app.wait_for("the status line with the effort", |s| {
        s.lines().last().is_some_and(|l| l.contains("effort high"))
    });
    app.type_text("think harder");
    app.send(b"\r");
    app.wait_for_text("Deep answer.");
    let reqs = mock.requests();
    let last = reqs.last().unwrap();
    assert_eq!(budget(last), Some(24_000), "{last}");
    assert_ne!(default_budget, Some(24_000));
    app.type_text("/effort huge");
    app.send(b"\r");
    app.wait_for_text("not an effort level");
    app.ctrl_c_to_quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_ls_shows_a_pane_and_the_next_request_carries_its_output() {
    let home = TestHome::new();
    std::fs::write(home.path("marker-file.txt"), "x").unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("I see the marker file."), Reply::text("Files")],
    )
    .await;
    let mut app = start(&home, &mock);
    app.type_text("!ls");
    app.send(b"\r");
    let screen = app.wait_for_text("marker-file.txt");
    assert!(screen.contains("ls"), "{screen}");
    assert!(mock.requests().is_empty(), "the command went to the model");
    // `!` alone: shell mode, with its marker, until `!` again.
    app.type_text("!");
    app.send(b"\r");
    app.wait_for_text("! shell: Enter runs the line in the sandbox");
    app.type_text("echo from-shell-mode");
    app.send(b"\r");
    app.wait_for("the echo's output", |s| {
        s.matches("from-shell-mode").count() >= 2
    });
    app.type_text("!");
    app.send(b"\r");
    app.wait_for("the marker gone", |s| !s.contains("! shell: Enter runs"));
    app.type_text("what is here?");
    app.send(b"\r");
    app.wait_for_text("I see the marker file.");
    let first = mock.requests()[0].to_string();
    assert!(first.contains("$ ls\\nmarker-file.txt"), "{first}");
    assert!(first.contains("$ echo from-shell-mode"), "{first}");
    assert!(first.contains("what is here?"), "{first}");
    app.ctrl_c_to_quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_x11_the_desktops_clipboard_program_gives_the_picture() {
    // A Wayland desktop without its X11 bridge: the clipboard library
    // cannot connect, `wl-paste` can. (A stand-in `wl-paste` that prints a
    // PNG: no compositor runs here.)
    let home = TestHome::new();
    let bin = home.home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(home.home.path().join("clip.png"), png(64, 40)).unwrap();
    let script = bin.join("wl-paste");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$3\" = image/png ] || exit 1\ncat '{}'\n",
            home.home.path().join("clip.png").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("A small chart."), Reply::text("Chart")],
    )
    .await;
    let mut vars = home.vars(&mock.url());
    vars.push(("PATH".into(), crate::test_home::path_with(&bin)));
    vars.push(("WAYLAND_DISPLAY".into(), "wayland-cairn-test".into()));
    let mut app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &vars,
        home.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("/paste-image");
    app.send(b"\r");
    app.wait_for_text("[image 1 · 64×40 png ·");
    app.type_text("what is this?");
    app.send(b"\r");
    app.wait_for_text("A small chart.");
    let first = &mock.requests()[0];
    let blocks = first["messages"][0]["content"].as_array().unwrap();
    assert!(blocks.iter().any(|b| b["type"] == "image"), "{first}");
    app.ctrl_c_to_quit();
}
