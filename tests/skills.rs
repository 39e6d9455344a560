//! Agent Skills in the agentskills.io format under `.claude/skills/`,
//! through `cairn run`: listed by name and description only, loaded by the
//! `skill` tool, runnable as `/name args`; and the system prompt's size
//! with 50 installed skills.

use crate::{mock_model, test_home};
use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

fn write(path: std::path::PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A skill folder as agentskills.io describes it: `SKILL.md` with `name`
/// and `description`, instructions, and a script beside it.
fn install_pdf_skill(env: &TestHome) {
    let dir = env.path(".claude/skills/pdf-processing");
    write(
        dir.join("SKILL.md"),
        "---
name: pdf-processing
description: Extract text and tables from PDF files, fill forms, merge documents. Use when the user mentions PDFs or forms.
license: Apache-2.0
metadata:
  author: example-org
  version: \"1.0\"
---
# PDF processing

## Extracting text
Run `python scripts/extract_text.py input.pdf` and read its output (marker: zanzibar).
",
    );
    write(dir.join("scripts/extract_text.py"), "print('text')\n");
}

fn tool_results(request: &Value) -> String {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b.to_string())
        .collect()
}

#[tokio::test]
async fn a_skill_is_listed_then_loaded_by_the_skill_tool() {
    let env = TestHome::new();
    install_pdf_skill(&env);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Loading.").tool_call("s1", "skill", json!({"name": "pdf-processing"})),
            Reply::text("I will run the script."),
            Reply::text("PDF"),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "get the text out of form.pdf"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.requests();
    let system = mock_model::system_text(&reqs[0]);
    assert!(
        system.contains("- pdf-processing: Extract text and tables from PDF files"),
        "{system}"
    );
    // Only the name and description: the body waits for the tool.
    assert!(!system.contains("zanzibar"));
    let tools: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"skill"), "{tools:?}");
    let results = tool_results(&reqs[1]);
    assert!(results.contains("zanzibar"), "{results}");
    assert!(results.contains("pdf-processing"), "{results}");
}

#[tokio::test]
async fn a_person_runs_a_skill_as_a_slash_command() {
    let env = TestHome::new();
    install_pdf_skill(&env);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("On it."), Reply::text("PDF")],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "/pdf-processing form.pdf"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prompt = mock.requests()[0]["messages"][0].to_string();
    assert!(prompt.contains("zanzibar"), "{prompt}");
    assert!(prompt.contains("ARGUMENTS: form.pdf"), "{prompt}");
}

#[tokio::test]
async fn fifty_skills_cost_the_system_prompt_a_bounded_size() {
    let env = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("a"),
            Reply::text("t"),
            Reply::text("b"),
            Reply::text("t"),
        ],
    )
    .await;
    let run = |env: &TestHome| {
        let mut c = env.command(&mock.url());
        c.args(["run", "hello"]);
        c
    };
    assert!(run(&env).output().await.unwrap().status.success());
    let before = mock_model::system_text(&mock.requests()[0]).len();
    for i in 0..50 {
        write(
            env.home
                .path()
                .join(format!(".claude/skills/skill-{i:02}/SKILL.md")),
            &format!(
                "---\nname: skill-{i:02}\ndescription: Handles the recurring chore number {i} of a typical repository, such as release notes, changelog entries or dependency bumps.\n---\n{}\n",
                "Long instructions. ".repeat(200)
            ),
        );
    }
    assert!(run(&env).output().await.unwrap().status.success());
    let reqs = mock.requests();
    let after = mock_model::system_text(&reqs[2]);
    assert!(after.contains("skill-49"), "all 50 fit under the cap");
    assert!(!after.contains("Long instructions"));
    let added = after.len() - before;
    eprintln!(
        "system prompt: {before} bytes without skills, {} with 50 (+{added})",
        after.len()
    );
    assert!(added <= 12 * 1024, "{added}");
}

/// A person who adds a skill and edits another while the session runs
/// (after the model ran a command) finds both where they put them: the
/// new one is in the `/` menu, and the next request lists it. Where
/// bubblewrap binds the skills folder read-only for commands, a change
/// there is the person's; under Landlock alone a command could have made
/// it, so cairn moves it to its quarantine instead (not tested here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_added_and_edited_during_the_session_stays_and_is_offered() {
    let env = TestHome::new();
    install_pdf_skill(&env);
    let probe = env
        .command("http://127.0.0.1:9")
        .args(["sandbox", "--status"])
        .output()
        .await
        .unwrap();
    if !String::from_utf8_lossy(&probe.stdout).contains("enforcement: bubblewrap") {
        eprintln!(
            "skipped: bubblewrap does not work here, so a command could write the skills folder"
        );
        return;
    }
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("b1", "bash", json!({"command": "echo one"})),
            Reply::text("First done."),
            Reply::text("Title"),
            Reply::text("Second done."),
        ],
    )
    .await;
    let mut app = open(&env, &mock);
    app.type_text("go");
    app.send(b"\r");
    app.wait_for_text("First done.");
    write(
        env.path(".claude/skills/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Draft release notes from the git log (marker: quokka).\n---\nRead `git log` since the last tag.\n",
    );
    let pdf = env.path(".claude/skills/pdf-processing/SKILL.md");
    let edited = std::fs::read_to_string(&pdf).unwrap() + "Also check the page count.\n";
    std::fs::write(&pdf, &edited).unwrap();
    app.type_text("/release");
    app.wait_for("the new skill in the menu", |s| {
        s.contains("/release-notes") && s.contains("marker: quokka")
    });
    app.send(&[0x7f; 8]);
    app.type_text("again");
    app.send(b"\r");
    app.wait_for_text("Second done.");
    app.ctrl_c_to_quit();
    app.wait_exit(std::time::Duration::from_secs(10));
    let reqs = mock.requests();
    let last = reqs.last().unwrap();
    let system = mock_model::system_text(last);
    assert!(
        system.contains("- release-notes: Draft release notes"),
        "{system}"
    );
    let all: String = reqs.iter().map(tool_results).collect();
    assert!(!all.contains("moved it to"), "{all}");
    assert_eq!(std::fs::read_to_string(&pdf).unwrap(), edited);
    assert!(env.path(".claude/skills/release-notes/SKILL.md").exists());
}

/// A project's skill whose `allowed-tools` lets `git status` run unasked:
/// trusted, the tool runs without the question always-ask mode puts once
/// the model loads the skill; untrusted, the skill is listed among what
/// waits for trust and grants nothing.
#[tokio::test]
async fn a_trusted_skills_allowed_tools_run_unasked_and_an_untrusted_ones_do_not() {
    for trusted in [true, false] {
        let env = TestHome::new();
        write(
            env.path(".claude/skills/status-report/SKILL.md"),
            "---\nname: status-report\ndescription: Report the working tree's state.\nallowed-tools: Bash(git status:*), Read\n---\nRun `git status --short` and summarise it.\n",
        );
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(env.project.path())
                .output()
                .unwrap()
        };
        git(&["init", "-q"]);
        write(env.path("untracked-marker.txt"), "new\n");
        let mock = MockModel::start(
            Format::Anthropic,
            vec![
                Reply::tool("s1", "skill", json!({"name": "status-report"})),
                Reply::tool("g1", "bash", json!({"command": "git status --short"})),
                Reply::text("Reported."),
                Reply::text("Status"),
            ],
        )
        .await;
        let mut args = vec!["run", "--mode", "always-ask"];
        if trusted {
            args.push("--trust-project");
        }
        args.push("report the status");
        let out = env.command(&mock.url()).args(&args).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let reqs = mock.requests();
        let results: String = reqs.iter().map(tool_results).collect();
        assert_eq!(
            results.contains("?? untracked-marker.txt"),
            trusted,
            "{results}\n{stderr}"
        );
        if trusted {
            assert!(
                stderr.contains("allows bash(git status*), view for this turn"),
                "{stderr}"
            );
        } else {
            assert!(stderr.contains("skill status-report"), "{stderr}");
        }
    }
}

/// With no skill at start, a skill the person adds during the session can
/// still be loaded by the model: the `skill` tool is always there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_skill_added_during_the_session_can_be_loaded() {
    let env = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("First done."),
            Reply::text("Title"),
            Reply::tool("s1", "skill", json!({"name": "release-notes"})),
            Reply::text("Second done."),
        ],
    )
    .await;
    let mut app = open(&env, &mock);
    app.type_text("hello");
    app.send(b"\r");
    app.wait_for_text("First done.");
    write(
        env.path(".claude/skills/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Draft release notes from the git log.\n---\nRead `git log` since the last tag (marker: wombat).\n",
    );
    app.type_text("notes please");
    app.send(b"\r");
    app.wait_for_text("Second done.");
    app.ctrl_c_to_quit();
    let reqs = mock.requests();
    let results: String = reqs.iter().map(tool_results).collect();
    assert!(
        results.contains("marker: wombat") || results.contains("moved it to"),
        "the new skill was loaded (or, under Landlock alone, quarantined): {results}"
    );
    assert!(!results.contains("There is no tool named"), "{results}");
}

/// The interface in `env`'s project, against `mock`, ready for a prompt.
fn open(env: &TestHome, mock: &MockModel) -> crate::pty::PtyApp {
    let app = crate::pty::PtyApp::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &env.vars(&mock.url()),
        env.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app
}
