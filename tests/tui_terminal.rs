//! Issue 31: cairn fits the terminal it runs in, the real binary in a pty:
//! the theme follows the background the terminal reports (OSC 11), and a
//! terminal that answers nothing keeps the default; colours come from
//! terminfo; Esc works under GNU screen; the newline hint names a key the
//! terminal can send; a copy says where it went.

use crate::{mock_model, pty, test_home};
use std::path::Path;

use mock_model::{Format, MockModel, Reply};
use pty::{PtyApp, Replies};
use test_home::TestHome;

const WELCOME: &str = "describe what you want done";

fn spawn(home: &TestHome, url: &str, extra: &[(&str, &str)], replies: Replies) -> PtyApp {
    let mut vars = home.vars(url);
    vars.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    PtyApp::spawn_with(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &vars,
        home.project.path(),
        (30, 100),
        replies,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_light_background_answer_picks_the_light_theme() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let replies = Replies {
        background: Some("rgb:ffff/ffff/ffff".into()),
    };
    let app = spawn(&home, &mock.url(), &[("COLORTERM", "truecolor")], replies);
    app.wait_for_text(WELCOME);
    // The light theme paints its own white page, and its grey hint text.
    assert_eq!(app.bg_of(WELCOME), Some(vt100::Color::Rgb(255, 255, 255)));
    assert_eq!(app.fg_of(WELCOME), Some(vt100::Color::Rgb(106, 115, 125)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_background_answer_keeps_the_default_theme() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let app = spawn(
        &home,
        &mock.url(),
        &[("COLORTERM", "truecolor")],
        Replies::default(),
    );
    app.wait_for_text(WELCOME);
    // The dark theme keeps the terminal's own background.
    assert_eq!(app.bg_of(WELCOME), Some(vt100::Color::Default));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chosen_dark_theme_on_a_light_terminal_paints_its_canvas() {
    let home = TestHome::new();
    home.write_config("theme = \"dark\"\n");
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let replies = Replies {
        background: Some("rgb:ffff/ffff/ffff".into()),
    };
    let app = spawn(&home, &mock.url(), &[("COLORTERM", "truecolor")], replies);
    app.wait_for_text(WELCOME);
    assert_eq!(app.bg_of(WELCOME), Some(vt100::Color::Rgb(28, 33, 40)));
}

/// A terminal that answers the background question after cairn stopped
/// waiting (a slow link): the answer must not become typed text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_answer_that_comes_late_is_not_typed_into_the_prompt() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = spawn(&home, &mock.url(), &[], Replies::default());
    app.wait_for_text("Ask cairn");
    app.send(b"\x1b]11;rgb:0000/0000/0000\x1b\\");
    app.send(b"\x1b]11;rgb:ffff/ffff/ffff\x07");
    app.type_text("hello");
    let screen = app.wait_for_text("hello");
    assert!(!screen.contains("rgb"), "{screen}");
    assert!(!screen.contains("11;"), "{screen}");
}

fn light() -> Replies {
    Replies {
        background: Some("rgb:ffff/ffff/ffff".into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminfo_rgb_gives_true_colour_without_colorterm() {
    let home = TestHome::new();
    let info = home.home.path().join("terminfo");
    std::fs::create_dir_all(&info).unwrap();
    let src = info.join("entry.src");
    std::fs::write(
        &src,
        "cairn-direct|test,\n\tcolors#256, RGB, use=xterm-256color,\n",
    )
    .unwrap();
    let compiled = std::process::Command::new("tic")
        .args(["-x", "-o"])
        .arg(&info)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !compiled {
        eprintln!("skipped: ncurses' tic is not installed");
        return;
    }
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let dir = info.display().to_string();
    let env = [("TERM", "cairn-direct"), ("TERMINFO", dir.as_str())];
    let app = spawn(&home, &mock.url(), &env, light());
    app.wait_for_text(WELCOME);
    assert_eq!(app.bg_of(WELCOME), Some(vt100::Color::Rgb(255, 255, 255)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forced_sixteen_colours_reverse_the_chosen_option() {
    let home = TestHome::new();
    home.write_config("[ui]\ncolors = \"16\"\n");
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = spawn(&home, &mock.url(), &[("COLORTERM", "truecolor")], light());
    app.wait_for_text(WELCOME);
    // The light theme's white page, as the sixteen-colour white.
    assert_eq!(app.bg_of(WELCOME), Some(vt100::Color::Idx(15)));
    app.type_text("/theme");
    app.send(b"\r");
    app.wait_for_text("high-contrast");
    let parser_has_inverse = app.inverse_row_containing("light");
    assert!(parser_has_inverse, "{}", app.screen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_gnu_screen_esc_closes_the_palette() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = spawn(
        &home,
        &mock.url(),
        &[("TERM", "screen")],
        Replies::default(),
    );
    let screen = app.wait_for_text(WELCOME);
    // screen holds a lone Esc while mouse tracking is on: it stays off,
    // and the status line says why and how to turn it on.
    assert!(screen.contains("mouse off so Esc works"), "{screen}");
    let raw = String::from_utf8_lossy(&app.raw_output()).to_string();
    assert!(!raw.contains("\x1b[?1000h"), "mouse tracking was turned on");
    app.send(b"\x10");
    app.wait_for_text("Commands");
    app.send(b"\x1b");
    app.wait_for("the palette closed", |s| !s.contains("Commands"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_xterm_the_hint_names_ctrl_j_and_it_adds_a_line() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![]).await;
    let mut app = spawn(&home, &mock.url(), &[("TERM", "xterm")], Replies::default());
    let screen = app.wait_for_text(WELCOME);
    // The harness, like xterm's default encoding, has no kitty protocol:
    // Shift+Enter would arrive as Enter.
    assert!(screen.contains("Ctrl+J newline"), "{screen}");
    assert!(!screen.contains("Shift+Enter"), "{screen}");
    app.type_text("first");
    app.send(b"\n");
    app.type_text("second");
    let screen = app.wait_for_text("second");
    let first = screen.lines().position(|l| l.contains("first")).unwrap();
    assert!(
        screen.lines().nth(first + 1).unwrap().contains("second"),
        "{screen}"
    );
    assert_eq!(mock.requests().len(), 0, "Ctrl+J sent the prompt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_without_a_system_clipboard_says_it_went_to_the_terminal() {
    let home = TestHome::new();
    let mock = MockModel::start(Format::Anthropic, vec![Reply::text("Copy me.")]).await;
    let mut app = spawn(&home, &mock.url(), &[], Replies::default());
    app.wait_for_text(WELCOME);
    app.type_text("say something");
    app.send(b"\r");
    app.wait_for_text("Copy me.");
    app.send(b"\t");
    app.send(b"y");
    let screen = app.wait_for_text("sent to the terminal (OSC 52)");
    assert!(!screen.contains("copied"), "{screen}");
    let raw = String::from_utf8_lossy(&app.raw_output()).to_string();
    assert!(raw.contains("\x1b]52;c;"), "no OSC 52 went out");
}
