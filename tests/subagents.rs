//! Sub-agents through the front door: `cairn run` against the scripted
//! model, with agent files in the format people publish.

use crate::{mock_model, test_home};
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

fn tool_names(request: &Value) -> Vec<String> {
    let mut names: Vec<String> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

fn agent_call(id: &str, agent: &str, description: &str, prompt: &str) -> (String, Value) {
    (
        id.to_string(),
        json!({"subagent_type": agent, "description": description, "prompt": prompt}),
    )
}

/// Requests that carry `needle` and not `other`: one sub-agent's own.
fn own_requests(mock: &MockModel, needle: &str, other: &str) -> Vec<Value> {
    mock.requests()
        .into_iter()
        .filter(|r| {
            let t = r.to_string();
            t.contains(needle) && !t.contains(other)
        })
        .collect()
}

#[tokio::test]
async fn two_explore_agents_run_in_parallel_in_their_own_contexts() {
    let home = TestHome::new();
    std::fs::write(home.path("alpha.rs"), "fn alpha() {} // ALPHA-FILE-BODY\n").unwrap();
    std::fs::write(home.path("beta.rs"), "fn beta() {} // BETA-FILE-BODY\n").unwrap();
    let (a_id, a_args) = agent_call("t1", "explore", "find alpha", "TASK-ALPHA: where is alpha?");
    let (b_id, b_args) = agent_call("t2", "explore", "find beta", "TASK-BETA: where is beta?");
    let slow = Duration::from_millis(40);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Splitting the search.")
                .tool_call(&a_id, "agent", a_args)
                .tool_call(&b_id, "agent", b_args),
            Reply::tool("a1", "view", json!({"file_path": "alpha.rs"}))
                .when("TASK-ALPHA")
                .chunk_delay(slow),
            Reply::tool("b1", "view", json!({"file_path": "beta.rs"}))
                .when("TASK-BETA")
                .chunk_delay(slow),
            Reply::text("ALPHA-ANSWER: alpha is defined in alpha.rs line 1.")
                .when("TASK-ALPHA")
                .chunk_delay(slow),
            Reply::text("BETA-ANSWER: beta is defined in beta.rs line 1.")
                .when("TASK-BETA")
                .chunk_delay(slow),
            Reply::text("Both are found."),
            Reply::text("Find alpha and beta"),
        ],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "find alpha and beta"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("Both are found."), "{stdout}");
    assert!(
        stderr.contains("⇢ sub-agent explore: find alpha"),
        "{stderr}"
    );
    assert!(
        stderr.contains("⇢ sub-agent explore: find beta"),
        "{stderr}"
    );
    assert!(
        stderr.contains("⇠ sub-agent explore finished: 1 tool call (view)"),
        "{stderr}"
    );

    // Both streamed at once.
    assert!(
        mock.most_concurrent() >= 2,
        "the sub-agents ran one after the other"
    );

    // Each sub-agent's requests carry its own task, its own system prompt
    // and explore's tools, and nothing of the parent's conversation.
    for (mine, theirs, file) in [
        ("TASK-ALPHA", "TASK-BETA", "ALPHA-FILE-BODY"),
        ("TASK-BETA", "TASK-ALPHA", "BETA-FILE-BODY"),
    ] {
        let reqs = own_requests(&mock, mine, theirs);
        assert_eq!(reqs.len(), 2, "{mine}: {reqs:#?}");
        let first = &reqs[0];
        assert_eq!(first["messages"].as_array().unwrap().len(), 1, "{first}");
        assert!(!first.to_string().contains("Splitting the search"));
        assert!(!first.to_string().contains("find alpha and beta"));
        assert!(mock_model::system_text(first).contains("You are an explorer"));
        assert!(!mock_model::system_text(first).contains("You are cairn"));
        assert_eq!(
            tool_names(first),
            ["bash", "glob", "grep", "job_output", "ls", "view"]
        );
        assert!(
            reqs[1].to_string().contains(file),
            "the view result reached it"
        );
    }

    // The parent's next request carries both answers and nothing of what
    // the sub-agents read on the way.
    let parent = mock
        .requests()
        .into_iter()
        .find(|r| {
            r.to_string().contains("Splitting the search") && r.to_string().contains("ALPHA-ANSWER")
        })
        .expect("the parent's request after the sub-agents");
    let text = parent.to_string();
    assert!(text.contains("BETA-ANSWER"), "{text}");
    assert!(text.contains("sub-agent explore finished"), "{text}");
    assert!(!text.contains("ALPHA-FILE-BODY") && !text.contains("BETA-FILE-BODY"));
    assert!(tool_names(&parent).contains(&"agent".to_string()));

    // The store holds two child sessions linked to the parent, with their
    // own messages.
    let db = home.home.path().join("data/cairn/sessions.db");
    let store = cairn::store::Store::open(&db).unwrap();
    let all = store
        .list_sessions(&cairn::store::ListFilter {
            project_root: None,
            limit: 0,
            offset: 0,
        })
        .unwrap();
    let parent = all
        .iter()
        .find(|s| s.parent_id.is_none())
        .expect("the parent session");
    let children: Vec<_> = all
        .iter()
        .filter(|s| s.parent_id.as_ref() == Some(&parent.id))
        .collect();
    assert_eq!(children.len(), 2, "{all:#?}");
    let mut titles: Vec<_> = children.iter().filter_map(|c| c.title.clone()).collect();
    titles.sort();
    assert_eq!(titles, ["explore: find alpha", "explore: find beta"]);
    for c in children {
        let msgs = store.load_messages(&c.id).unwrap();
        let text: String = msgs.iter().map(|(_, m, _)| format!("{m:?}")).collect();
        assert!(text.contains("-FILE-BODY"), "its tool results are kept");
        assert!(!text.contains("Splitting the search"));
    }
}

/// Three agents as people publish them, in a project the person trusts.
fn publish_agents(home: &TestHome) {
    let dir = home.path(".claude/agents");
    std::fs::create_dir_all(dir.join("quality")).unwrap();
    std::fs::write(
        dir.join("quality/code-reviewer.md"),
        "---\nname: code-reviewer\ndescription: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\n---\n\nYou are a senior code reviewer ensuring high standards of code quality and security.\n\nWhen invoked:\n1. Run git diff to see recent changes\n2. Focus on modified files\n3. Begin review immediately\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("doc-writer.md"),
        "---\nname: doc-writer\ndescription: Writes and updates documentation. Use when docs need changing.\ntools: Read, Write, Edit, WebSearch\nmodel: inherit\nmaxTurns: 5\n---\nYou write clear documentation. DOC-WRITER-PROMPT\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("researcher.md"),
        "---\nname: researcher\ndescription: Reads the code base to answer questions.\ntools:\n  - Read\n  - Grep\n---\nYou research. RESEARCHER-PROMPT\n",
    )
    .unwrap();
}

#[tokio::test]
async fn published_agent_files_are_listed_delegated_to_and_run_with_their_tools() {
    let home = TestHome::new();
    publish_agents(&home);
    let (id, args) = agent_call(
        "t1",
        "code-reviewer",
        "review changes",
        "TASK-REVIEW: review",
    );
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(&id, "agent", args),
            Reply::text("REVIEW-DONE: looks fine.").when("TASK-REVIEW"),
            Reply::text("The reviewer found nothing."),
            Reply::text("title"),
        ],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["--trust-project", "run", "@code-reviewer check my work"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // WebSearch means nothing to cairn: said, not silently dropped.
    assert!(stderr.contains("WebSearch not known to cairn"), "{stderr}");
    let reqs = mock.requests();
    let agent_tool = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "agent")
        .expect("the agent tool")
        .to_string();
    for listed in [
        "code-reviewer: Expert code review",
        "doc-writer",
        "researcher",
        "explore",
        "general",
    ] {
        assert!(agent_tool.contains(listed), "{listed}: {agent_tool}");
    }
    assert!(
        reqs[0].to_string().contains("delegate"),
        "the @agent-name asks to delegate"
    );
    let sub = own_requests(&mock, "TASK-REVIEW", "check my work");
    assert_eq!(sub.len(), 1);
    assert_eq!(
        tool_names(&sub[0]),
        ["bash", "glob", "grep", "job_kill", "job_output", "view"]
    );
    assert!(mock_model::system_text(&sub[0]).contains("You are a senior code reviewer"));
    // `model: sonnet` with the Anthropic provider.
    assert_eq!(sub[0]["model"], "claude-sonnet-4-5");
}

#[tokio::test]
async fn an_untrusted_projects_agent_that_may_write_waits_for_trust() {
    let home = TestHome::new();
    publish_agents(&home);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("ok"), Reply::text("title")],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "hello"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let held = stderr
        .lines()
        .find(|l| l.contains("wait until you trust the project"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        held.contains("code-reviewer") && held.contains("doc-writer"),
        "{held}"
    );
    assert!(!held.contains("researcher"), "{held}");
    assert!(
        stderr.contains("wait until you trust the project"),
        "{stderr}"
    );
    let agent_tool = mock.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "agent")
        .unwrap()
        .to_string();
    assert!(
        agent_tool.contains("researcher"),
        "read-only agents need no trust"
    );
    assert!(!agent_tool.contains("doc-writer") && !agent_tool.contains("code-reviewer"));
}

#[tokio::test]
async fn a_sub_agents_edit_is_gated_and_the_refusal_returns_to_it() {
    let home = TestHome::new();
    let (id, args) = agent_call("t1", "general", "write notes", "TASK-NOTES: write notes.md");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(&id, "agent", args),
            Reply::tool(
                "w1",
                "write",
                json!({"file_path": "notes.md", "content": "new\n"}),
            )
            .when("TASK-NOTES"),
            Reply::text("NOTES-REPORT: I could not write notes.md; it was not allowed.")
                .when("TASK-NOTES"),
            Reply::text("The sub-agent could not write."),
            Reply::text("title"),
        ],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "--json", "update the notes"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!home.path("notes.md").exists(), "written without approval");
    // The gate's refusal went back to the sub-agent, which reported it.
    let sub = own_requests(&mock, "TASK-NOTES", "update the notes");
    assert_eq!(sub.len(), 2);
    let refusal = sub[1]["messages"][2].to_string();
    assert!(refusal.contains("needs the person's approval"), "{refusal}");
    assert!(
        refusal.contains("asked by the sub-agent `general`"),
        "{refusal}"
    );
    // `--json` tags the sub-agent's events with its id.
    let lines: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let start = lines
        .iter()
        .find(|l| l["type"] == "subagent_start")
        .expect("subagent_start");
    assert_eq!(start["id"], "t1");
    assert!(lines.iter().any(|l| l["type"] == "subagent"
        && l["id"] == "t1"
        && l["event"]["type"] == "tool_result"
        && l["event"]["status"] == "denied"));
    let end = lines.iter().find(|l| l["type"] == "subagent_end").unwrap();
    assert_eq!(end["outcome"]["outcome"], "completed");
}

/// A `SubagentStop` hook as people write them for Claude Code: it sends a
/// sub-agent back once with a reason, and lets it stop the second time.
const SUBAGENT_STOP: &str = r#"#!/usr/bin/env python3
import json
import os
import sys

data = json.load(sys.stdin)
log = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "subagent-stops.txt")
with open(log, "a") as f:
    f.write(f"{data['hook_event_name']} {data['stop_hook_active']}\n")
if not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "Also count the Rust files."}))
"#;

#[tokio::test]
async fn a_subagent_stop_hook_sends_the_sub_agent_back_once() {
    if std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
    {
        eprintln!("skipped: python3 is not installed, and the published hook is Python");
        return;
    }
    let home = TestHome::new();
    home.write(".claude/hooks/subagent_stop.py", SUBAGENT_STOP);
    home.write(
        ".claude/settings.json",
        r#"{"hooks": {"SubagentStop": [{"hooks": [{"type": "command",
            "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/subagent_stop.py"}]}]}}"#,
    );
    let (id, args) = agent_call("t1", "explore", "survey", "TASK-GAMMA: survey the tree");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Delegating.").tool_call(&id, "agent", args),
            Reply::text("GAMMA-FIRST: the tree is small.").when("TASK-GAMMA"),
            Reply::text("GAMMA-SECOND: and it holds two Rust files.")
                .when("Also count the Rust files."),
            Reply::text("All surveyed."),
            Reply::text("Survey"),
        ],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "--trust-project", "survey the project"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let log = std::fs::read_to_string(home.path("subagent-stops.txt")).unwrap_or_default();
    assert_eq!(log, "SubagentStop False\nSubagentStop True\n", "{stderr}");
    // The parent got the answer the sub-agent gave after going back.
    let handed_back = mock.requests().iter().any(|r| {
        let m = r["messages"].to_string();
        m.contains(r#""tool_use_id":"t1""#) && m.contains("GAMMA-SECOND")
    });
    assert!(handed_back, "{:?}", mock.requests());
    assert!(String::from_utf8_lossy(&out.stdout).contains("All surveyed."));
}

/// A sub-agent's `cd` is its own: the parent's next command still starts
/// where the parent's shell was.
#[tokio::test]
async fn a_sub_agents_cd_does_not_move_the_parents_shell() {
    let home = TestHome::new();
    let (id, args) = agent_call("t1", "general", "go deep", "TASK-DEEP: work in a subfolder");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Delegating.").tool_call(&id, "agent", args),
            Reply::tool(
                "c1",
                "bash",
                json!({"command": "mkdir -p deep && cd deep && pwd"}),
            )
            .when("TASK-DEEP"),
            Reply::text("DEEP-DONE"),
            Reply::tool("p1", "bash", json!({"command": "pwd"})),
            Reply::text("All done."),
            Reply::text("Deep"),
        ],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "work in a subfolder"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let root = home.project.path().canonicalize().unwrap();
    let result = |id: &str| -> String {
        let all: String = mock.requests().iter().map(|r| r.to_string()).collect();
        let at = all.find(&format!(r#""tool_use_id":"{id}""#)).unwrap();
        all[at..at + 400].to_string()
    };
    let deep = format!("{}/deep", root.display());
    assert!(result("c1").contains(&deep), "{}", result("c1"));
    let parent = result("p1");
    assert!(
        parent.contains(&format!("{}\\n", root.display()))
            || parent.contains(&format!("{}\"", root.display())),
        "{parent}"
    );
    assert!(!parent.contains(&deep), "{parent}");
}
