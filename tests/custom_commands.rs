//! Custom slash commands written for Claude Code (`.claude/commands/…md`),
//! run through the front door: `cairn run "/git:status foo"` sends the
//! expanded prompt, its `@path` attached and its `` !`cmd` `` output inlined.

use crate::{mock_model, pty, test_home};
use mock_model::{Format, MockModel, Reply};
use serde_json::Value;
use test_home::TestHome;

/// Every text block of the first user message the model received.
fn first_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The file as people publish it for Claude Code.
const STATUS_MD: &str = "---
allowed-tools: Bash(git status:*)
argument-hint: [focus]
description: Summarise the working tree
---
## Context

- Current status: !`git status --short`

## Your task

Summarise the working tree, focusing on $ARGUMENTS. The project is described in @README.md.
";

#[tokio::test]
async fn run_expands_a_claude_command_with_arguments_files_and_command_output() {
    let env = TestHome::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.project.path())
        .status();
    if !git.is_ok_and(|s| s.success()) {
        eprintln!("skipped: git is not installed");
        return;
    }
    env.write(".claude/commands/git/status.md", STATUS_MD);
    env.write("README.md", "The heliotrope project.\n");
    env.write("notes-marigold.txt", "x\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("All clean."), Reply::text("Status")],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "/git:status foo"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let prompt = first_prompt(&mock.requests()[0]);
    assert!(
        prompt.contains("Summarise the working tree, focusing on foo."),
        "{prompt}"
    );
    // The `!` line ran (through the gate and the sandbox) and its output
    // replaced it.
    assert!(prompt.contains("?? notes-marigold.txt"), "{prompt}");
    assert!(!prompt.contains("!`git status"), "{prompt}");
    // `@README.md` was attached like a typed mention.
    assert!(prompt.contains("The heliotrope project."), "{prompt}");
    assert!(!prompt.contains("allowed-tools"), "{prompt}");
}

#[tokio::test]
async fn a_command_line_the_gate_refuses_is_not_run() {
    let env = TestHome::new();
    env.write(
        ".cairn/commands/wipe.md",
        "Before: !`rm -rf ~/important-canary`\nSay done.\n",
    );
    let canary = env.home.path().join("important-canary");
    std::fs::create_dir_all(&canary).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Done."), Reply::text("Wipe")],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "/wipe"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(canary.exists(), "the command ran outside the gate");
    let prompt = first_prompt(&mock.requests()[0]);
    assert!(prompt.contains("the command did not succeed"), "{prompt}");
    assert!(prompt.contains("Say done."), "{prompt}");
}

#[tokio::test]
async fn an_unknown_slash_word_is_an_ordinary_prompt() {
    let env = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Hm."), Reply::text("Path")],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "/usr/bin is a directory?"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    assert!(first_prompt(&mock.requests()[0]).contains("/usr/bin is a directory?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_is_offered_in_the_menu_and_sent_expanded() {
    let env = TestHome::new();
    env.write(".claude/commands/review.md",
        "---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview $1 for bugs.\n",
    );
    // A built-in keeps its name; the clash is said once.
    env.write(".claude/commands/help.md", "Not the help.\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Looks fine."), Reply::text("Review")],
    )
    .await;
    let mut app = pty::PtyApp::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &env.vars(&mock.url()),
        env.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app.wait_for_text("the built-in /help has that name");
    app.type_text("/rev");
    app.wait_for_text("Review a file for bugs");
    let screen = app.wait_for_text("/review <file>");
    assert!(screen.contains("/review <file>"), "{screen}");
    app.send(b"\r");
    app.type_text("src/main.rs");
    app.send(b"\r");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while mock.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "{}", app.screen());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let prompt = first_prompt(&mock.requests()[0]);
    assert!(prompt.contains("Review src/main.rs for bugs."), "{prompt}");
    app.wait_for_text("Looks fine.");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(std::time::Duration::from_secs(10)).is_some());
}
