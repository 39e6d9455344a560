//! Tool panes as a person sees them: a command and not only its label,
//! its output live and in colour, honest timers.

use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;

use crate::protocol::PermissionRequest;
use crate::protocol::{AgentEvent, ToolStatus};
use crate::tools::ToolDisplay;
use crate::tui::model::Model;
use crate::tui::test_support::*;
use crate::tui::view::view;

fn draw(m: &mut Model, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view(m, f)).unwrap();
    t
}

fn screen(m: &mut Model, w: u16, h: u16) -> String {
    draw(m, w, h).backend().to_string()
}

fn bash(m: &mut Model, id: &str, command: &str, description: Option<&str>) {
    let mut input = json!({ "command": command });
    if let Some(d) = description {
        input["description"] = json!(d);
    }
    agent(
        m,
        AgentEvent::ToolCallStarted {
            call_id: id.into(),
            name: "bash".into(),
            input,
            summary: format!("bash {command}"),
        },
    );
}

fn running(m: &mut Model, id: &str) {
    agent(m, AgentEvent::ToolCallRunning { call_id: id.into() });
}

fn finish(m: &mut Model, id: &str, status: ToolStatus, output: &str, display: Option<ToolDisplay>) {
    agent(
        m,
        AgentEvent::ToolCallFinished {
            call_id: id.into(),
            status,
            output: output.into(),
            display,
        },
    );
}

fn command_display(code: i32, cwd: Option<&str>) -> Option<ToolDisplay> {
    Some(ToolDisplay::Command {
        sandbox: "sandbox: workspace-write, network off".into(),
        stopped: None,
        cwd: cwd.map(Into::into),
        exit_code: Some(code),
    })
}

fn start_turn(m: &mut Model) {
    agent(
        m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "run the tests".into(),
        },
    );
}

const SNEAKY: &str = "cargo test && touch SNEAKY && rm -f README.md";

#[test]
fn a_bash_pane_with_a_description_shows_the_command() {
    let mut m = model();
    start_turn(&mut m);
    bash(&mut m, "1", SNEAKY, Some("run the tests"));
    running(&mut m, "1");
    m.now += Duration::from_millis(1400);
    finish(
        &mut m,
        "1",
        ToolStatus::Done,
        "test a ... ok\ntest b ... ok",
        command_display(0, Some("crates/core")),
    );
    insta::assert_snapshot!(screen(&mut m, 80, 16));
}

#[test]
fn expanded_the_pane_shows_the_whole_command_where_it_ran_and_how_it_ended() {
    let mut m = model();
    start_turn(&mut m);
    let long = format!("{SNEAKY} \\\n  && echo second line");
    bash(&mut m, "1", &long, Some("run the tests"));
    running(&mut m, "1");
    m.now += Duration::from_millis(2500);
    finish(
        &mut m,
        "1",
        ToolStatus::Failed,
        "exit code 3\nboom",
        command_display(3, Some("crates/core")),
    );
    let i = m.transcript.len() - 1;
    if let Some(c) = m.transcript.get_mut(i) {
        c.expanded = true;
    }
    let text = screen(&mut m, 100, 20);
    for want in [
        "$ cargo test && touch SNEAKY && rm -f README.md \\",
        "&& echo second line",
        "run the tests",
        "in crates/core",
        "sandbox: workspace-write, network off",
        "exit code 3 · ran 2s",
        "failed 2s",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    let copied = m.transcript.cells()[i].copy_text();
    assert!(copied.starts_with(&format!("$ {long}\n")), "{copied}");
    assert!(copied.ends_with("boom"), "{copied}");
}

#[test]
fn waiting_for_approval_shows_no_clock_and_the_run_time_excludes_the_wait() {
    let mut m = model();
    start_turn(&mut m);
    bash(&mut m, "1", "rm -rf build", None);
    let request = PermissionRequest {
        formatting: None,
        tool: "bash".into(),
        summary: "bash rm -rf build".into(),
        reasons: vec!["`rm` changes files".into()],
        preview: None,
        rules: vec![],
        sandbox: None,
    };
    agent(
        &mut m,
        AgentEvent::ToolCallWaiting {
            call_id: "1".into(),
        },
    );
    agent(&mut m, AgentEvent::PermissionRequested { id: 7, request });
    m.now += Duration::from_secs(8);
    let text = screen(&mut m, 80, 30);
    assert!(text.contains("waiting for approval"), "{text}");
    assert!(
        !text.contains("8s"),
        "no clock while the person decides: {text}"
    );
    agent(&mut m, AgentEvent::PermissionResolved { id: 7 });
    running(&mut m, "1");
    m.now += Duration::from_millis(40);
    finish(&mut m, "1", ToolStatus::Done, "", command_display(0, None));
    let text = screen(&mut m, 80, 30);
    assert!(text.contains("$ rm -rf build  40ms"), "{text}");
}

#[test]
fn live_output_streams_its_last_lines_and_the_clock_ticks() {
    let mut m = model();
    start_turn(&mut m);
    bash(&mut m, "1", "./slow.sh", None);
    running(&mut m, "1");
    for i in 1..=8 {
        agent(
            &mut m,
            AgentEvent::ToolCallOutput {
                call_id: "1".into(),
                chunk: format!("step {i}\n"),
            },
        );
    }
    m.now += Duration::from_secs(3);
    let text = screen(&mut m, 80, 24);
    assert!(text.contains("running 3s"), "{text}");
    assert!(text.contains("step 8") && text.contains("step 4"), "{text}");
    assert!(!text.contains("step 3"), "only the last five lines: {text}");
    assert!(text.contains("3 more lines"), "{text}");
}

#[test]
fn a_coloured_output_pane_draws_colours_and_no_escape() {
    let mut m = model();
    start_turn(&mut m);
    bash(&mut m, "1", "cargo test --color=always", None);
    running(&mut m, "1");
    let out = "\x1b[32mPASS\x1b[0m one\n\x1b[31mFAIL\x1b[0m two\nexit code 1";
    finish(
        &mut m,
        "1",
        ToolStatus::Failed,
        out,
        command_display(1, None),
    );
    let t = draw(&mut m, 80, 16);
    let text = t.backend().to_string();
    insta::assert_snapshot!(text);
    assert!(!text.contains("[31m") && !text.contains('\x1b'), "{text}");
    let buf = t.backend().buffer();
    let find = |word: &str| {
        (0..buf.area.height)
            .find_map(|y| {
                let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
                row.find(word).map(|x| (x, y))
            })
            .unwrap_or_else(|| panic!("{word} not on screen"))
    };
    let fg = |(x, y): (usize, u16)| buf[(x as u16, y)].fg;
    assert_eq!(fg(find("PASS")), Color::Green);
    assert_eq!(fg(find("FAIL")), Color::Red);
    // Failed output is not recoloured as a whole: plain lines stay plain.
    assert_ne!(fg(find("one")), Color::Red);
    // After a colour reset the text is the pane's own, like a plain line.
    assert_eq!(fg(find("one")), fg(find("exit code 1")));
}

#[test]
fn files_and_listings_preview_their_head_commands_their_tail() {
    let mut m = model();
    start_turn(&mut m);
    let numbered: String = (1..=30).map(|i| format!("{i:>3}\tline {i}\n")).collect();
    agent(
        &mut m,
        AgentEvent::ToolCallStarted {
            call_id: "v".into(),
            name: "view".into(),
            input: json!({}),
            summary: "src/lib.rs".into(),
        },
    );
    running(&mut m, "v");
    finish(&mut m, "v", ToolStatus::Done, &numbered, None);
    let text = screen(&mut m, 80, 24);
    assert!(text.contains("line 1") && text.contains("line 5"), "{text}");
    assert!(!text.contains("line 30"), "{text}");
    bash(&mut m, "b", "seq 30", None);
    running(&mut m, "b");
    let seq: String = (1..=30).map(|i| format!("n{i}\n")).collect();
    finish(
        &mut m,
        "b",
        ToolStatus::Done,
        &seq,
        command_display(0, None),
    );
    let text = screen(&mut m, 80, 30);
    assert!(text.contains("n30") && text.contains("n26"), "{text}");
    assert!(!text.contains("n25"), "{text}");
}

#[test]
fn a_write_of_an_instruction_file_is_marked_in_its_pane_and_an_ordinary_one_is_not() {
    let mut m = model();
    start_turn(&mut m);
    for (id, path) in [("1", "rust/AGENTS.md"), ("2", "src/lib.rs")] {
        agent(
            &mut m,
            AgentEvent::ToolCallStarted {
                call_id: id.into(),
                name: "write".into(),
                input: json!({ "file_path": path, "content": "x\n" }),
                summary: path.into(),
            },
        );
        finish(&mut m, id, ToolStatus::Done, "written", None);
    }
    let s = screen(&mut m, 100, 20);
    assert!(
        s.contains("⚑ `rust/AGENTS.md` changes the instructions of every future session"),
        "{s}"
    );
    assert_eq!(s.matches('⚑').count(), 1, "{s}");
}

#[test]
fn an_edits_pane_says_whether_it_was_formatted() {
    let mut m = model();
    start_turn(&mut m);
    let diff = |path: &str| {
        Some(ToolDisplay::Diff(crate::diff::FileDiff {
            path: path.into(),
            old: "a\n".into(),
            new: "b\n".into(),
            added: 1,
            removed: 1,
        }))
    };
    let outputs = [
        (
            "1",
            "src/lib.rs",
            "Edited src/lib.rs (+1 -1 lines)\n\n1\tb\n\nFormatted by rustfmt (+1 -1 lines): \
             the lines above and the file on disk are the formatted text.",
        ),
        (
            "2",
            "web/app.ts",
            "Edited web/app.ts (+1 -1 lines)\n\n1\tb\n\nNot formatted: `prettier` is not \
             installed or not on PATH; the edit is on disk as written.",
        ),
        ("3", "notes.txt", "Edited notes.txt (+1 -1 lines)\n\n1\tb"),
    ];
    for (id, path, output) in outputs {
        agent(
            &mut m,
            AgentEvent::ToolCallStarted {
                call_id: id.into(),
                name: "edit".into(),
                input: json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
                summary: format!("edit {path}"),
            },
        );
        finish(&mut m, id, ToolStatus::Done, output, diff(path));
    }
    let t = draw(&mut m, 100, 40);
    let s = t.backend().to_string();
    assert!(s.contains("formatted by rustfmt (+1 -1 lines)"), "{s}");
    assert!(
        s.contains("not formatted: `prettier` is not installed or not on PATH"),
        "{s}"
    );
    assert!(!s.contains("the edit is on disk as written"), "{s}");
    assert_eq!(s.matches("formatted").count(), 2, "{s}");
}
