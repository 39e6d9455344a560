//! Commands in the editor's terminal, through the front door: the ACP
//! client written against the official TypeScript SDK
//! (tests/acp_client/client.mjs, `terminals`) announces `terminal: true`
//! and runs `terminal/create` as an editor does, a child process with the
//! command, arguments and directory cairn names. cairn names its own
//! executable and the hidden launcher; the command's output reaches the
//! model; the command ran contained exactly as inside cairn (the canary
//! key unread, no write in the home folder, no key variables, the same
//! variables as the same probe run inside cairn for an editor without
//! terminals); a cancelled command is gone, launcher and all.

use crate::{mock_model, test_home};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mock_model::{Format, MockModel, Reply};
use serde_json::{Value, json};
use test_home::TestHome;

const PROBE: &str = "echo hello-term; printf '\\033]52;c;Zm9v\\007\\033[31mred\\033[0m\\n'; printf 'keys=%s\\n' \"$(env | grep -c _API_KEY)\"; \
    cat \"$HOME/.ssh/id_rsa\" 2>&1 | head -n 1; { touch \"$HOME/outside-probe\" 2>&1 && echo touched; } | head -n 1; \
    echo \"names=$(env | cut -d= -f1 | grep -v '^_$' | sort | tr '\\n' ,)\"; echo probe-end";

/// The probe, writing `outside-NAME` in the home folder if it can.
fn probe(name: &str) -> String {
    PROBE.replace("outside-probe", &format!("outside-{name}"))
}

/// A number no other process on the machine sleeps for.
const LONG_SLEEP: &str = "61.7531";

fn skip_reason() -> Option<String> {
    match std::process::Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => return Some("node is not installed".into()),
    }
    let sdk = client_dir().join("node_modules/@agentclientprotocol/sdk/package.json");
    if !sdk.exists() {
        return Some(format!(
            "the ACP SDK is not installed (run `npm ci --prefix {}`)",
            client_dir().display()
        ));
    }
    None
}

fn client_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_client")
}

fn script() -> Vec<Reply> {
    let long = format!("echo started-long; sleep {LONG_SLEEP}; echo never");
    vec![
        Reply::tool("t1", "bash", json!({ "command": probe("term") })),
        Reply::text("Probed."),
        Reply::text("Probe title"),
        Reply::tool("t2", "bash", json!({ "command": long })),
        Reply::tool("p1", "bash", json!({ "command": probe("here") })),
        Reply::text("Probed here."),
        Reply::text("Probe title"),
    ]
}

/// The text the model was given as the result of call `id`.
fn result_of(mock: &MockModel, id: &str) -> String {
    for request in mock.requests() {
        for message in request["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" && block["tool_use_id"] == id {
                    return match &block["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                }
            }
        }
    }
    panic!("the model never got a result for {id}");
}

/// The probe's line starting with `key`.
fn line<'a>(output: &'a str, key: &str) -> &'a str {
    output
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no {key} line in {output}"))
}

async fn run_client(home: &TestHome, mock: &MockModel) -> Value {
    let out = tokio::process::Command::new("node")
        .arg(client_dir().join("client.mjs"))
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(home.project.path())
        .arg("0")
        .arg("terminals")
        .current_dir(client_dir())
        .env_clear()
        // The editor was started with the project's venv active.
        .env(
            "PATH",
            format!(
                "{}:{}",
                home.path(".venv/bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .envs(home.vars(&mock.url()))
        .env("EDITOR_SECRET_API_KEY", "sekrit-value-of-the-editor")
        // Set by hand to try the kernel layer (Landlock and seccomp alone).
        .envs(std::env::var("CAIRN_SANDBOX_NO_BWRAP").map(|v| ("CAIRN_SANDBOX_NO_BWRAP", v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), out)
        .await
        .expect("the ACP client finished within 3 minutes")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("no report ({e}); stdout: {stdout}\nstderr: {stderr}"));
    assert!(
        report.get("failure").is_none(),
        "{}\nstderr: {stderr}",
        report["failure"]
    );
    report
}

/// Processes on this machine whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_show_in_the_editors_terminal_still_contained() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let home = TestHome::new();
    // The test editor's permission answer looks at a.txt.
    std::fs::write(home.path("a.txt"), "alpha\n").unwrap();
    let ssh = home.home.path().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), "CANARY-PRIVATE-KEY\n").unwrap();
    let outside = home.home.path().join("outside-term");
    // An earlier session's contained command planted a `bwrap` in the
    // venv: the launcher, run by the editor as the person, must not start
    // through it.
    let marks = tempfile::tempdir().unwrap();
    let planted_ran = marks.path().join("planted-bwrap-ran");
    let venv = home.path(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    std::fs::write(
        venv.join("bwrap"),
        format!("#!/bin/sh\ntouch {}\nexit 1\n", planted_ran.display()),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(venv.join("bwrap"), mode).unwrap();
    }
    let mock = MockModel::start(Format::Anthropic, script()).await;
    let r = run_client(&home, &mock).await;
    assert!(
        !planted_ran.exists(),
        "a bwrap from the workspace's venv ran"
    );

    // cairn asked the editor to run its own executable, the hidden
    // launcher, and a spec in its own cache folder.
    let created = r["created"].as_array().unwrap();
    assert_eq!(created.len(), 2, "{created:?}");
    let exe = Path::new(env!("CARGO_BIN_EXE_cairn"))
        .canonicalize()
        .unwrap();
    let launch = home.home.path().join(".cache/cairn/launch");
    for c in created {
        assert_eq!(c["command"], exe.display().to_string(), "{c}");
        assert_eq!(c["args"][0], "__contained", "{c}");
        let spec = c["args"][1].as_str().unwrap();
        assert!(Path::new(spec).starts_with(&launch), "{spec}");
        // Started in cairn's own folder, not the workspace.
        assert_eq!(c["cwd"], launch.display().to_string(), "{c}");
    }

    // The call shows the terminal, to the end; its output reached the model.
    let t1: Vec<&Value> = (r["probe"]["updates"].as_array().unwrap().iter())
        .filter(|u| u["toolCallId"] == "t1")
        .collect();
    let shows = |u: &&Value| {
        u["content"][0]["type"] == "terminal" && u["content"][0]["terminalId"] == created[0]["id"]
    };
    assert!(t1.iter().any(shows), "{t1:?}");
    let last = t1.last().unwrap();
    assert_eq!(last["status"], "completed", "{last}");
    assert!(shows(last), "{last}");
    assert_eq!(r["released"][0]["released"], true, "{}", r["released"]);
    // The terminal showed the output with colour, and without the
    // sequence that would write the person's clipboard.
    let shown = r["released"][0]["output"].as_str().unwrap();
    assert!(
        shown.contains("hello-term") && shown.contains("\u{1b}[31mred"),
        "{shown:?}"
    );
    assert!(!shown.contains("]52;"), "{shown:?}");
    let there = result_of(&mock, "t1");
    assert!(
        there.contains("hello-term") && there.contains("probe-end"),
        "{there}"
    );

    // Contained: no key variable (the editor's own included), the canary
    // unread, nothing written in the home folder.
    assert_eq!(line(&there, "keys="), "keys=0", "{there}");
    assert!(!there.contains("CANARY"), "{there}");
    assert!(!there.contains("sekrit"), "{there}");
    // (Under the kernel layer a test home in /tmp is writable, in cairn
    // too: the comparison below holds it to that.)
    let kernel_layer = std::env::var_os("CAIRN_SANDBOX_NO_BWRAP").is_some();
    assert!(
        kernel_layer || !outside.exists(),
        "the command wrote in the home folder"
    );

    // The same probe inside cairn, for an editor without terminals: no
    // terminal asked for, and the same answers, variable names included.
    let log = r["plain"]["log"].as_array().unwrap();
    assert!(log.iter().all(|e| e["what"] != "terminal"), "{log:?}");
    let here = result_of(&mock, "p1").replace("outside-here", "outside-term");
    for key in ["keys=", "cat:", "touch", "names="] {
        assert_eq!(
            line(&there, key),
            line(&here, key),
            "{key}\n{there}\n{here}"
        );
    }
    let here_wrote = home.home.path().join("outside-here").exists();
    assert_eq!(outside.exists(), here_wrote);
    let p1_output = (r["plain"]["updates"].as_array().unwrap().iter())
        .filter(|u| u["toolCallId"] == "p1")
        .any(|u| u["content"][0]["type"] == "content");
    assert!(p1_output, "the plain editor was not shown the output");

    // Cancelled: the editor was told to kill it; launcher and command gone.
    assert_eq!(r["cancel"]["stopReason"], "cancelled", "{}", r["cancel"]);
    assert_eq!(r["cancel"]["killed"], created[1]["id"]);
    assert_eq!(r["cancel"]["launcherAlive"], false);
    let mut left = processes_with(LONG_SLEEP);
    for _ in 0..20 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = processes_with(LONG_SLEEP);
    }
    assert!(left.is_empty(), "still running: {left:?}");
    let t2 = (r["cancel"]["updates"].as_array().unwrap().iter())
        .rfind(|u| u["toolCallId"] == "t2")
        .expect("the cancelled call's updates");
    assert_eq!(t2["status"], "failed", "{t2}");
    assert_eq!(t2["content"][0]["type"], "terminal", "{t2}");
    let told = t2["rawOutput"].as_str().unwrap();
    assert!(
        told.contains("cancelled") && told.contains("started-long"),
        "{told}"
    );
    assert!(!told.contains("never"), "{told}");

    // No spec is left behind.
    let specs: Vec<_> = std::fs::read_dir(&launch).unwrap().flatten().collect();
    assert!(specs.is_empty(), "{specs:?}");
    assert_eq!(r["firstExit"], 0);
    assert_eq!(r["secondExit"], 0);
}
