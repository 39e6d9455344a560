//! Hooks written for Claude Code, in `.claude/settings.json` with Python
//! scripts as people publish them, through the front door: `cairn run` in
//! a trusted and an untrusted project, and the interface's trust question
//! and `/hooks` in a pty.

use crate::{mock_model, pty, test_home};
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

const GUARD: &str = r#"#!/usr/bin/env python3
"""Blocks destructive commands and reads of .env files."""
import json
import sys

data = json.load(sys.stdin)
tool = data.get("tool_name", "")
tool_input = data.get("tool_input", {})
if tool == "Bash" and "rm -rf" in tool_input.get("command", ""):
    print("Blocked: rm -rf is not allowed in this repository", file=sys.stderr)
    sys.exit(2)
if tool == "Read" and tool_input.get("file_path", "").endswith(".env"):
    print("Blocked: .env files hold secrets; do not read them", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

const LOGGER: &str = r#"#!/usr/bin/env python3
import json
import os
import sys

data = json.load(sys.stdin)
log = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".claude", "tool-log.jsonl")
with open(log, "a") as f:
    f.write(json.dumps({"tool_name": data["tool_name"], "tool_input": data["tool_input"]}) + "\n")
"#;

const CONTEXT: &str = r#"#!/usr/bin/env python3
import json
import sys

prompt = json.load(sys.stdin)["prompt"]
print(f"Team note for '{prompt}': the build command is `make ci`.")
"#;

/// Sends the model back once to update the changelog; records each call.
const STOP: &str = r#"#!/usr/bin/env python3
import json
import os
import sys

data = json.load(sys.stdin)
seen = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".claude", "stop-calls.txt")
with open(seen, "a") as f:
    f.write(f"{data['stop_hook_active']} {os.path.isfile(data['transcript_path'])}\n")
if not data["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "Also update CHANGELOG.md."}))
"#;

const SETTINGS: &str = r#"{
  "permissions": {"allow": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash|Read", "hooks": [
        {"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.py"}
      ]}
    ],
    "PostToolUse": [
      {"matcher": "*", "hooks": [
        {"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/log_tools.py", "timeout": 10}
      ]}
    ],
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/context.py"}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/stop.py"}]}
    ]
  }
}
"#;

fn install_hooks(env: &TestHome) {
    env.write(".claude/hooks/guard.py", GUARD);
    env.write(".claude/hooks/log_tools.py", LOGGER);
    env.write(".claude/hooks/context.py", CONTEXT);
    env.write(".claude/hooks/stop.py", STOP);
    env.write(".claude/settings.json", SETTINGS);
    env.write(".env", "API_TOKEN=canary-7f3a\n");
    env.write("build/keep.txt", "built\n");
    env.write("README.md", "# demo\n");
}

fn script() -> Vec<Reply> {
    vec![
        Reply::text("Cleaning.")
            .tool_call(
                "c1",
                "bash",
                json!({"command": "rm -rf build && echo ran > ran.txt"}),
            )
            .tool_call("c2", "view", json!({"file_path": ".env"}))
            .tool_call("c3", "view", json!({"file_path": "README.md"}))
            .tool_call("c4", "bash", json!({"command": "echo hello-from-bash"})),
        Reply::text("Cleaned up."),
        Reply::text("Changelog updated."),
    ]
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

/// The requests of the turn (a title request offers no tools).
fn turn_requests(mock: &MockModel) -> Vec<Value> {
    mock.requests()
        .into_iter()
        .filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect()
}

/// Installs a Python hook script of the person's own (`~/.claude/hooks/
/// NAME`) for each of `events` with `matcher`, in `~/.claude/settings.json`.
fn persons_hook(env: &TestHome, name: &str, script: &str, events: &[&str], matcher: &str) {
    let path = env.home.path().join(".claude/hooks").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, script).unwrap();
    let entry = json!([{"matcher": matcher, "hooks": [
        {"type": "command", "command": format!("python3 {}", path.display())}
    ]}]);
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| (e.to_string(), entry.clone()))
        .collect();
    std::fs::write(
        env.home.path().join(".claude/settings.json"),
        json!({ "hooks": hooks }).to_string(),
    )
    .unwrap();
}

fn python_missing() -> bool {
    let missing = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .map(|s| !s.success())
        .unwrap_or(true);
    if missing {
        eprintln!("skipped: python3 is not installed, and the published hooks are Python");
    }
    missing
}

#[tokio::test]
async fn a_claude_hook_set_guards_logs_adds_context_and_keeps_the_model_working() {
    if python_missing() {
        return;
    }
    let env = TestHome::new();
    install_hooks(&env);
    let mock = MockModel::start(Format::Anthropic, script()).await;
    let out = env
        .command(&mock.url())
        .args([
            "run",
            "--trust-project",
            "--allow",
            "bash(echo *)",
            "clean up",
        ])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The blocked calls never ran; the model read the scripts' stderr.
    assert!(env.path("build/keep.txt").exists());
    assert!(!env.path("ran.txt").exists());
    let reqs = turn_requests(&mock);
    let results = tool_results(&reqs[1]);
    assert!(
        results.contains("Blocked: rm -rf is not allowed in this repository"),
        "{results}"
    );
    assert!(
        results.contains("Blocked: .env files hold secrets"),
        "{results}"
    );
    assert!(!results.contains("canary-7f3a"), "{results}");
    assert!(
        results.contains("# demo") && results.contains("hello-from-bash"),
        "{results}"
    );
    // The prompt's context reached the model with the prompt.
    let first = reqs[0]["messages"][0].to_string();
    assert!(
        first.contains("Team note for 'clean up': the build command is `make ci`."),
        "{first}"
    );
    // The logger saw each call that ran, as Claude Code names them.
    let log = std::fs::read_to_string(env.path(".claude/tool-log.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let readme = env.project.path().canonicalize().unwrap().join("README.md");
    let read = json!({"tool_name": "Read", "tool_input": {"file_path": readme}});
    let alt = json!({"tool_name": "Read", "tool_input": {"file_path": env.path("README.md")}});
    assert!(lines.contains(&read) || lines.contains(&alt), "{log}");
    assert!(
        lines
            .iter()
            .any(|l| l["tool_name"] == "Bash"
                && l["tool_input"]["command"] == "echo hello-from-bash"),
        "{log}"
    );
    assert_eq!(lines.len(), 2, "{log}");
    // The Stop hook sent the model back once, with its reason.
    assert_eq!(reqs.len(), 3);
    assert!(reqs[2].to_string().contains("Also update CHANGELOG.md."));
    let stops = std::fs::read_to_string(env.path(".claude/stop-calls.txt")).unwrap();
    assert_eq!(stops, "False True\nTrue True\n");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Changelog updated."));
    assert!(stderr.contains("PreToolUse hook blocked Bash"), "{stderr}");
}

#[tokio::test]
async fn in_an_untrusted_project_none_of_the_hooks_runs() {
    if python_missing() {
        return;
    }
    let env = TestHome::new();
    install_hooks(&env);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Reading.").tool_call("c1", "view", json!({"file_path": "README.md"})),
            Reply::text("Read it."),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "look around"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Each hook's command is listed as waiting for trust.
    assert!(stderr.contains("not trusted yet"), "{stderr}");
    assert!(stderr.contains(".claude/hooks/guard.py"), "{stderr}");
    assert!(stderr.contains(".claude/hooks/stop.py"), "{stderr}");
    assert!(!env.path(".claude/tool-log.jsonl").exists());
    assert!(!env.path(".claude/stop-calls.txt").exists());
    let reqs = turn_requests(&mock);
    assert_eq!(reqs.len(), 2);
    assert!(!reqs[0].to_string().contains("make ci"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trust_question_lists_hooks_and_slash_hooks_shows_how_they_ran() {
    if python_missing() {
        return;
    }
    let env = TestHome::new();
    install_hooks(&env);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Noted."), Reply::text("Fine.")],
    )
    .await;
    let spawn = || {
        pty::PtyApp::spawn(
            std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
            &[],
            &env.vars(&mock.url()),
            env.project.path(),
            40,
            140,
        )
    };
    let mut app = spawn();
    // A frame can reach the pty in more than one read: wait for the list,
    // not only the title above it.
    let dialog = app.wait_for("the trust question", |s| {
        s.contains("Trust this project") && s.contains("hook PreToolUse [Bash|Read]")
    });
    assert!(dialog.contains("hooks/context.py"), "{dialog}");
    assert!(dialog.contains("hook PreToolUse [Bash|Read]"), "{dialog}");
    std::thread::sleep(Duration::from_millis(800));
    app.send(b"t");
    app.wait_for_text("Ask cairn");
    app.type_text("hello");
    app.send(b"\r");
    app.wait_for_text("UserPromptSubmit hook added context");
    app.wait_for_text("Fine.");
    app.type_text("/hooks");
    app.send(b"\r");
    let screen = app.wait_for("the hook list", |s| s.contains("last: exit 0"));
    assert!(
        screen.contains(".claude/settings.json (project, in the sandbox)"),
        "{screen}"
    );
    assert!(screen.contains("PreToolUse [Bash|Read]"), "{screen}");
    assert!(screen.contains("not run yet"), "{screen}");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());

    // Trusted: not asked again, until a hook's script changes.
    let mut app = spawn();
    let screen = app.wait_for_text("Ask cairn");
    assert!(!screen.contains("Trust this project"), "{screen}");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
    env.write(".claude/hooks/guard.py", &format!("{GUARD}\n# changed\n"));
    let mut app = spawn();
    let deadline = Instant::now() + Duration::from_secs(20);
    let asked = app.wait_for("the question again", |s| {
        s.contains("Trust this project") || Instant::now() > deadline
    });
    assert!(asked.contains("Trust this project"), "{asked}");
    std::thread::sleep(Duration::from_millis(800));
    app.send(b"n");
    app.wait_for_text("Ask cairn");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
}

#[tokio::test]
async fn a_subfolder_agents_md_joins_when_the_model_first_opens_a_file_below_it() {
    let env = TestHome::new();
    env.write("AGENTS.md", "Root rules.\n");
    env.write(
        "rust/slug/AGENTS.md",
        "Slugs are kebab-case (marker: quokka).\n",
    );
    env.write("rust/slug/src/lib.rs", "pub fn slug() {}\n");
    env.write("rust/slug/src/more.rs", "pub fn more() {}\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Looking.").tool_call(
                "v1",
                "view",
                json!({"file_path": "rust/slug/src/lib.rs"}),
            ),
            Reply::text("And more.").tool_call(
                "v2",
                "view",
                json!({"file_path": "rust/slug/src/more.rs"}),
            ),
            Reply::text("Done."),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "read the slug crate"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let reqs = turn_requests(&mock);
    // Not before the model opened a file below it; then once.
    assert!(!reqs[0].to_string().contains("quokka"));
    assert!(
        tool_results(&reqs[1]).contains("quokka"),
        "{}",
        tool_results(&reqs[1])
    );
    assert_eq!(reqs[2].to_string().matches("quokka").count(), 1);
    assert!(stderr.contains("Loaded rust/slug/AGENTS.md"), "{stderr}");
}

/// Prompt hooks as Claude Code documents them, in the person's own
/// settings: the model judges `PreToolUse` (a no blocks the call, its
/// reason reaches the model) and `Stop` (a no keeps the model working);
/// the hook's request carries the prompt with `$ARGUMENTS` filled in and
/// offers no tools; a command hook beside it still runs.
#[tokio::test]
async fn prompt_hooks_ask_the_model_and_a_no_blocks_the_call_and_the_stop() {
    let env = TestHome::new();
    let settings = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "prompt", "prompt": "GUARD: refuse any touch. Call: $ARGUMENTS", "timeout": 20}
        ]}],
        "Stop": [{"hooks": [
            {"type": "prompt", "prompt": "FINISHED? Is every task done? $ARGUMENTS"},
            {"type": "command", "command": "echo stopped >> \"$CLAUDE_PROJECT_DIR\"/stop-ran.txt"}
        ]}]
    }});
    let dir = env.home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("t1", "bash", json!({"command": "touch blocked.txt"})),
            Reply::text("{\"ok\": false, \"reason\": \"touching is not allowed here\"}")
                .when("GUARD"),
            Reply::text("I could not touch it."),
            Reply::text("```json\n{\"ok\": false, \"reason\": \"say sorry first\"}\n```")
                .when("FINISHED?"),
            Reply::text("Sorry."),
            Reply::text("{\"ok\": true}").when("FINISHED?"),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "touch a file"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not supported"), "{stderr}");
    assert!(
        !env.path("blocked.txt").exists(),
        "the hook's no did not block"
    );
    let requests = mock.requests();
    let guard = requests
        .iter()
        .find(|r| r.to_string().contains("GUARD"))
        .expect("the PreToolUse hook's request");
    assert!(
        guard["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{guard}"
    );
    let text = guard["messages"][0]["content"].to_string();
    assert!(
        text.contains("tool_name") && text.contains("Bash"),
        "{text}"
    );
    assert!(
        text.contains("touch blocked.txt") && !text.contains("$ARGUMENTS"),
        "{text}"
    );
    // The model was told why, and kept working after the Stop hook's no.
    let after: Vec<&Value> = requests
        .iter()
        .filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    assert!(
        after
            .iter()
            .any(|r| tool_results(r).contains("touching is not allowed here")),
        "{after:?}"
    );
    assert!(
        after
            .iter()
            .any(|r| r.to_string().contains("say sorry first")),
        "{after:?}"
    );
    assert!(stdout.contains("Sorry."), "{stdout}");
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.to_string().contains("FINISHED?"))
            .count(),
        2
    );
    let ran = std::fs::read_to_string(env.path("stop-ran.txt")).unwrap_or_default();
    assert!(ran.contains("stopped"), "{stderr}");
}

/// A prompt hook that names no model asks the session's model, and after
/// `/model` the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_hook_follows_the_model_the_person_switches_to() {
    let env = TestHome::new();
    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "prompt", "prompt": "JUDGE the prompt: $ARGUMENTS"}
    ]}]}});
    let dir = env.home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            // Unconditional replies answer any request: the title's first.
            Reply::text("Title").when("Write a title"),
            Reply::text("{\"ok\": true}").when("JUDGE"),
            Reply::text("First answer."),
            Reply::text("{\"ok\": true}").when("JUDGE"),
            Reply::text("Second answer."),
        ],
    )
    .await;
    let mut app = pty::PtyApp::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
        &[],
        &env.vars(&mock.url()),
        env.project.path(),
        30,
        120,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("first question");
    app.send(b"\r");
    app.wait_for_text("First answer.");
    app.type_text("/model claude-haiku-4-5");
    app.send(b"\r");
    app.wait_for_text("Model: claude-haiku-4-5");
    app.type_text("second question");
    app.send(b"\r");
    app.wait_for_text("Second answer.");
    app.ctrl_c_to_quit();
    let judged: Vec<String> = mock
        .requests()
        .iter()
        .filter(|r| r["messages"][0]["content"].to_string().contains("JUDGE"))
        .map(|r| r["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(judged.len(), 2, "{judged:?}");
    assert_ne!(judged[0], "claude-haiku-4-5");
    assert_eq!(judged[1], "claude-haiku-4-5");
}

/// A hook that approves every command, of the kind people write to stop
/// being asked: it spares the question an allow rule would spare, never
/// one no rule lifts. Headless, a call that still needs the person is not
/// run.
const APPROVE_ALL: &str = r#"#!/usr/bin/env python3
import json
import sys

json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {
    "hookEventName": "PreToolUse",
    "permissionDecision": "allow",
    "permissionDecisionReason": "approved by the team's hook",
}}))
"#;

#[tokio::test]
async fn a_hooks_allow_never_lifts_a_caution_such_as_a_force_push() {
    if python_missing() {
        return;
    }
    let env = TestHome::new();
    persons_hook(&env, "approve.py", APPROVE_ALL, &["PreToolUse"], "Bash");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Working.")
                .tool_call("t1", "bash", json!({"command": "touch approved.txt"}))
                .tool_call(
                    "p1",
                    "bash",
                    json!({"command": "git push --force origin main; touch pushed.txt"}),
                ),
            Reply::text("Done."),
            Reply::text("Tidy"),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "--mode", "always-ask", "tidy up"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The hook's allow stood in for the question always-ask mode puts...
    assert!(env.path("approved.txt").exists(), "{stderr}");
    // ...but not for the caution about a force push.
    assert!(!env.path("pushed.txt").exists(), "{stderr}");
    let results = tool_results(&turn_requests(&mock)[1]);
    assert!(results.contains("force"), "{results}");
}

/// The `permissions` of Claude Code's settings: the person's deny holds in
/// auto mode; the project's allow lets `git status` run unasked in
/// always-ask mode once the project is trusted, and waits for trust (it is
/// listed) until then; an entry naming no tool of cairn's is reported.
#[tokio::test]
async fn claude_settings_permissions_apply_and_a_projects_allow_waits_for_trust() {
    for trusted in [true, false] {
        let env = TestHome::new();
        std::fs::create_dir_all(env.home.path().join(".claude")).unwrap();
        std::fs::write(
            env.home.path().join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Bash(curl:*)"]}}"#,
        )
        .unwrap();
        env.write(
            ".claude/settings.json",
            r#"{"permissions": {"allow": ["Bash(git status:*)", "NotebookEdit"]}}"#,
        );
        env.write("untracked-marker.txt", "new\n");
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(env.project.path())
            .output()
            .unwrap();
        let mock = MockModel::start(
            Format::Anthropic,
            vec![
                Reply::text("Checking.")
                    .tool_call("g1", "bash", json!({"command": "git status --short"}))
                    .tool_call(
                        "c1",
                        "bash",
                        json!({"command": "curl -s http://127.0.0.1:9/"}),
                    ),
                Reply::text("Checked."),
                Reply::text("Check"),
            ],
        )
        .await;
        let mut args = vec!["run", "--mode", "always-ask"];
        if trusted {
            args.push("--trust-project");
        }
        args.push("check the tree");
        let out = env.command(&mock.url()).args(&args).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let results = tool_results(&turn_requests(&mock)[1]);
        assert_eq!(
            results.contains("?? untracked-marker.txt"),
            trusted,
            "{results}\n{stderr}"
        );
        assert!(
            results.contains("denied by the rule `bash(curl*)`"),
            "{results}"
        );
        assert!(
            stderr.contains("`NotebookEdit` names no tool cairn has"),
            "{stderr}"
        );
        if !trusted {
            assert!(
                stderr.contains("lets `bash(git status*)` run without asking"),
                "{stderr}"
            );
        }
    }
}

/// Logs each event a hook sees, and answers a permission question with
/// allow, as people's auto-approve scripts do.
const LOG_AND_APPROVE: &str = r#"#!/usr/bin/env python3
import json
import os
import sys

data = json.load(sys.stdin)
event = data["hook_event_name"]
log = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "events.log")
with open(log, "a") as f:
    f.write(f"{event} {data.get('tool_name', '')}\n")
if event == "PermissionRequest":
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow"},
    }}))
"#;

/// The events of a whole session in the interface, each seen by the
/// person's own hook: `SessionStart`; `PermissionRequest`, whose allow
/// answers a question an allow rule could spare but not the one about a
/// force push, which the person then sees (and `Notification` fires);
/// `PreCompact` on `/compact`; `SessionEnd` on quitting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_hook_events_fire_and_a_permission_hook_answers_only_what_it_may() {
    if python_missing() {
        return;
    }
    let env = TestHome::new();
    let events = [
        "SessionStart",
        "SessionEnd",
        "PermissionRequest",
        "Notification",
        "PreCompact",
    ];
    persons_hook(&env, "log_and_approve.py", LOG_AND_APPROVE, &events, "");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("t1", "bash", json!({"command": "touch approved.txt"})),
            Reply::tool(
                "p1",
                "bash",
                json!({"command": "git push --force origin main; touch pushed.txt"}),
            ),
            Reply::text("Done here."),
            Reply::text("Tidy"),
            Reply::text("You are welcome."),
            Reply::text("SUMMARY: tidied."),
        ],
    )
    .await;
    let mut app = pty::PtyApp::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_cairn")),
        &["--mode", "always-ask"],
        &env.vars(&mock.url()),
        env.project.path(),
        30,
        110,
    );
    app.wait_for_text("Ask cairn");
    app.type_text("tidy up");
    app.send(b"\r");
    let dialog = app.wait_for_text("git push --force origin main");
    assert!(env.path("approved.txt").exists(), "{dialog}");
    app.wait_for_text("Esc deny");
    app.send(b"\x1b");
    app.wait_for_text("Done here.");
    app.type_text("thanks");
    app.send(b"\r");
    app.wait_for_text("You are welcome.");
    app.type_text("/compact");
    app.send(b"\r");
    app.wait_for_text("context compacted");
    app.ctrl_c_to_quit();
    assert!(app.wait_exit(Duration::from_secs(10)).is_some());
    assert!(!env.path("pushed.txt").exists());
    let deadline = Instant::now() + Duration::from_secs(5);
    let log = loop {
        let log = std::fs::read_to_string(env.path("events.log")).unwrap_or_default();
        if log.contains("SessionEnd") || Instant::now() > deadline {
            break log;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let lines: Vec<&str> = log.lines().map(str::trim).collect();
    assert_eq!(lines.first(), Some(&"SessionStart"), "{log}");
    assert_eq!(lines.last(), Some(&"SessionEnd"), "{log}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| **l == "PermissionRequest Bash")
            .count(),
        2,
        "{log}"
    );
    assert!(lines.contains(&"Notification"), "{log}");
    assert!(lines.contains(&"PreCompact"), "{log}");
}

/// A PreToolUse hook of the kind teams publish: it denies deploys, rewrites
/// the test command to the project's wrapper, and adds a note to reads.
const POLICY: &str = r#"#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
tool = data["tool_name"]
command = data.get("tool_input", {}).get("command", "")
out = {"hookEventName": "PreToolUse"}
if tool == "Bash" and "deploy" in command:
    out["permissionDecision"] = "deny"
    out["permissionDecisionReason"] = "deploys go through the release pipeline"
elif tool == "Bash" and command.startswith("npm test"):
    out["updatedInput"] = {"command": "echo wrapped-by-policy"}
elif tool == "Read":
    out["additionalContext"] = "Reads of this repository are audited (note 7c1)."
print(json.dumps({"hookSpecificOutput": out}))
"#;

/// In auto mode (nothing asks) the hook's deny still stops a call and the
/// model reads why; its `updatedInput` is what runs; its
/// `additionalContext` reaches the model with the call's result.
#[tokio::test]
async fn a_pre_tool_hook_denies_in_auto_mode_rewrites_input_and_adds_context() {
    if python_missing() {
        return;
    }
    let env = TestHome::new();
    persons_hook(&env, "policy.py", POLICY, &["PreToolUse"], "Bash|Read");
    env.write("README.md", "# demo\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::text("Working.")
                .tool_call(
                    "d1",
                    "bash",
                    json!({"command": "./deploy.sh && touch deployed.txt"}),
                )
                .tool_call("n1", "bash", json!({"command": "npm test"}))
                .tool_call("r1", "view", json!({"file_path": "README.md"})),
            Reply::text("Done."),
            Reply::text("Work"),
        ],
    )
    .await;
    let out = env
        .command(&mock.url())
        .args(["run", "--mode", "auto", "ship it"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!env.path("deployed.txt").exists());
    let results = tool_results(&turn_requests(&mock)[1]);
    assert!(
        results.contains("deploys go through the release pipeline"),
        "{results}"
    );
    assert!(results.contains("wrapped-by-policy"), "{results}");
    assert!(
        results.contains("Reads of this repository are audited (note 7c1)."),
        "{results}"
    );
    assert!(results.contains("# demo"), "{results}");
}
