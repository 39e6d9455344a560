//! Programs cairn runs as the person (fifth hostile review, G6): `bwrap`
//! itself, the person's own hooks' shell, the shell of the model's
//! commands, `tic`, the editor, the person's own MCP servers — all were
//! looked up on the person's whole `PATH`. With a venv activated (its
//! `.venv/bin` inside the workspace, first on `PATH`), one contained
//! command planted `.venv/bin/bwrap` and the next session ran it, as the
//! person, to start every command. cairn's own `PATH` now leaves out the
//! workspace (and relative entries); the model's commands still see the
//! person's whole `PATH`, their venv included, inside the sandbox.

use crate::escape_fixture::{Fixture, assert_contained, needs};
use crate::mock_model::{Format, MockModel};
use crate::{bash, put};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_planted_in_a_workspace_folder_on_path_never_runs_as_the_person() {
    if !needs(&["bwrap"]) {
        return;
    }
    let mut f = Fixture::new();
    let venv = f.ws.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    let path = format!(
        "{}:{}",
        venv.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    f.set_env("PATH", &path);
    // The person's own hook, run outside the sandbox by name.
    f.write_home(
        ".config/cairn/config.toml",
        "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"git --version >/dev/null\"\n",
    );
    let marks = f.base.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    // Each planted program leaves a mark outside the workspace (which only
    // a process outside the sandbox can write) and then runs the real one.
    let plant = format!(
        "mkdir -p .venv/bin\n{}",
        plants(&["bwrap", "bash", "sh", "git", "tic", "python3"], &marks)
    );
    let first = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            put("p1", "plant.sh", &plant),
            bash("p2", "sh plant.sh; ls -l .venv/bin"),
        ]),
    )
    .await;
    f.run(&first, "smart").await;
    let planted = std::fs::read_dir(&venv).map(|d| d.count()).unwrap_or(0);
    // The next session: any command, and the person's hook at its end.
    let second = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![bash("c1", "echo \"$PATH\" > seen-path; echo ok")]),
    )
    .await;
    f.run(&second, "smart").await;
    let mut all = Vec::new();
    if planted == 0 {
        all.push("nothing was planted: nothing tested".to_string());
    }
    for entry in std::fs::read_dir(&marks).unwrap().flatten() {
        all.push(format!(
            "ran as the person: {}",
            entry.file_name().to_string_lossy()
        ));
    }
    let seen = std::fs::read_to_string(f.ws.join("seen-path")).unwrap_or_default();
    if !seen.contains("/.venv/bin") {
        all.push(format!(
            "the model's command lost the person's venv from PATH (saw {seen:?})"
        ));
    }
    assert_contained("programs found on a PATH with workspace folders", &all);
}

/// `cairn acp` is started by the editor in its own folder (here the
/// fixture's base, which holds the home: nothing of it is cut at start);
/// the session opens the workspace. Its folders must leave cairn's own
/// `PATH` when the session opens it (sixth hostile review, H3): a first
/// session's contained command plants `.venv/bin/bwrap`, the second
/// session's sandbox would start through it, as the person.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_session_in_another_folder_runs_nothing_from_its_workspace_path() {
    if !needs(&["bwrap"]) {
        return;
    }
    let mut f = Fixture::new();
    let venv = f.ws.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    let path = format!(
        "{}:{}",
        venv.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    f.set_env("PATH", &path);
    let marks = f.base.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let plant = plants(&["bwrap", "sh", "git"], &marks);
    let first = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            put("p1", "plant.sh", &plant),
            bash("p2", "sh plant.sh; ls -l .venv/bin"),
        ]),
    )
    .await;
    acp_prompt(&f, &first, "plant").await;
    let planted = std::fs::read_dir(&venv).map(|d| d.count()).unwrap_or(0);
    let second = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![bash("c1", "echo ok")]),
    )
    .await;
    acp_prompt(&f, &second, "anything").await;
    let mut all = Vec::new();
    if planted < 3 {
        all.push(format!(
            "only {planted} programs were planted: nothing tested"
        ));
    }
    for entry in std::fs::read_dir(&marks).unwrap().flatten() {
        all.push(format!(
            "ran as the person: {}",
            entry.file_name().to_string_lossy()
        ));
    }
    assert_contained("an editor session's PATH", &all);
}

/// One ACP session in the fixture's workspace with one prompt, `cairn acp`
/// started in the fixture's base folder; the editor refuses every
/// question and offers no file system or terminal.
async fn acp_prompt(f: &Fixture, mock: &MockModel, text: &str) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut cmd = f.command(&mock.url(), &["acp"]);
    cmd.current_dir(&f.base)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ws = f.ws.display().to_string();
    let requests = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": ws, "mcpServers": []}}),
    ];
    let mut session = String::new();
    for (n, request) in requests.iter().enumerate() {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
        let answer = answer_to(&mut lines, &mut stdin, n as u64 + 1).await;
        if let Some(id) = answer["result"]["sessionId"].as_str() {
            session = id.to_string();
        }
    }
    let prompt = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}});
    stdin
        .write_all(format!("{prompt}\n").as_bytes())
        .await
        .unwrap();
    let done = answer_to(&mut lines, &mut stdin, 3).await;
    assert!(done.get("result").is_some(), "{done}");
    drop(stdin);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await;
}

/// Reads messages until the answer to `id`, refusing what cairn asks.
async fn answer_to(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    stdin: &mut tokio::process::ChildStdin,
    id: u64,
) -> serde_json::Value {
    use tokio::io::AsyncWriteExt;
    let wait = std::time::Duration::from_secs(120);
    loop {
        let line = tokio::time::timeout(wait, lines.next_line())
            .await
            .expect("cairn acp answered in time")
            .unwrap()
            .expect("cairn acp ended early");
        let m: serde_json::Value = serde_json::from_str(&line).unwrap();
        if m.get("method").is_some() && m.get("id").is_some() {
            let no = serde_json::json!({"jsonrpc": "2.0", "id": m["id"],
                "error": {"code": -32601, "message": "no"}});
            stdin.write_all(format!("{no}\n").as_bytes()).await.unwrap();
        } else if m["id"].as_u64() == Some(id) {
            return m;
        }
    }
}

/// Shell lines planting, for each of `names`, a `.venv/bin/NAME` that
/// leaves a mark in `marks` (outside the workspace: only a process outside
/// the sandbox can write there) and then runs the real program.
fn plants(names: &[&str], marks: &std::path::Path) -> String {
    let mut plant = String::new();
    for name in names {
        let real = format!(
            "$(PATH=$(echo \"$PATH\" | tr ':' '\\n' | grep -v '/.venv/bin' | paste -sd:) command -v {name})"
        );
        plant.push_str(&format!(
            "printf '#!/bin/sh\\ntouch {marks}/{name}-ran 2>/dev/null\\nexec {real} \"$@\"\\n' > .venv/bin/{name}\nchmod +x .venv/bin/{name}\n",
            marks = marks.display(),
        ));
    }
    plant
}
