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
