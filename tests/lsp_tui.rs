//! Checked edits in the real interface, in a pty: the permission dialog
//! opens at once, says the language server is checking, and fills in its
//! verdict per file and beside the hunk it concerns; a server that cannot
//! start is in the status line and `/lsp`, and edits go on without it.
//! The pyright case skips, saying why, when it is not installed.

use crate::{mock_model, pty, test_home};
use std::path::Path;
use std::time::{Duration, Instant};

use mock_model::{Format, MockModel, Reply};
use pty::PtyApp;
use serde_json::json;
use test_home::TestHome;

use crate::lsp_run::{rename_call, servers_bin, typescript_bin, typescript_project};

fn start(home: &TestHome, url: &str, path: Option<&Path>, args: &[&str]) -> PtyApp {
    let mut vars = home.vars(url);
    if let Some(bin) = path {
        vars.push(("PATH".into(), crate::test_home::path_with(bin)));
    }
    let app = PtyApp::spawn(
        Path::new(env!("CARGO_BIN_EXE_cairn")),
        args,
        &vars,
        home.project.path(),
        40,
        120,
    );
    app.wait_for_text("Ask cairn");
    app
}

/// Waits up to `secs` (a server's first start is slow on a busy machine).
fn wait_long(app: &PtyApp, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = app.screen();
        if pred(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

const OLD: &str = "import os\n\nprint(missing_one)\n\n\n\n\n\n\ndef f():\n    return 1\n\n\n\n\n\n\ndef g():\n    return 2\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dialog_shows_the_servers_verdict_beside_the_hunk() {
    let Some(bin) = servers_bin() else { return };
    let home = TestHome::new();
    home.write("app.py", OLD);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "app.py"})),
            Reply::tool(
                "e1",
                "multiedit",
                json!({"file_path": "app.py", "edits": [
                    {"old_string": "return 1", "new_string": "return undefined_two"},
                    {"old_string": "return 2", "new_string": "return 3"}
                ]}),
            ),
            Reply::text("Done."),
            Reply::text("Title"),
        ],
    )
    .await;
    let mut app = start(&home, &mock.url(), Some(&bin), &[]);
    app.type_text("change f and g");
    app.send(b"\r");
    let screen = wait_long(&app, "the dialog", 20, |s| s.contains("Allow once"));
    assert!(
        screen.contains("pyright: checking") || screen.contains("pyright: +1 error"),
        "the dialog says a check is on its way: {screen}"
    );
    let screen = wait_long(&app, "the verdict", 60, |s| s.contains("pyright: +1 error"));
    assert!(
        screen.contains("line 11: \"undefined_two\" is not defined"),
        "{screen}"
    );
    assert!(!screen.contains("missing_one\" is not defined"), "{screen}");
    // Beside the first hunk's mark, not the second's.
    let first = screen
        .lines()
        .find(|l| l.contains("hunk 1/2"))
        .unwrap_or("");
    let second = screen
        .lines()
        .find(|l| l.contains("hunk 2/2"))
        .unwrap_or("");
    assert!(first.contains("+1 error"), "{screen}");
    assert!(!second.contains("error"), "{screen}");
    app.send(b"a");
    let screen = wait_long(&app, "the answer", 30, |s| s.contains("Done."));
    // The applied edit's pane says what the model was told.
    assert!(
        screen.contains("The language server (pyright) reports 1 new error in app.py")
            && screen.contains("line 11: \"undefined_two\" is not defined"),
        "{screen}"
    );
    assert!(
        std::fs::read_to_string(home.path("app.py"))
            .unwrap()
            .contains("undefined_two")
    );
    let sent = mock.requests()[2].to_string();
    assert!(sent.contains("undefined_two\\\" is not defined"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_shown_and_edits_go_on() {
    let home = TestHome::new();
    home.write("app.py", OLD);
    let dir = home.home.path().join("config/cairn");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[lsp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo licence expired >&2; exit 3\"]\n\
         filetypes = [\"py\"]\n",
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "app.py"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "app.py", "old_string": "return 1", "new_string": "return 5"}),
            ),
            Reply::text("Done."),
            Reply::text("Title"),
        ],
    )
    .await;
    let mut app = start(&home, &mock.url(), None, &["--mode", "auto"]);
    app.type_text("change f");
    app.send(b"\r");
    let screen = wait_long(&app, "the answer", 30, |s| s.contains("Done."));
    assert!(screen.contains("broken failed (/lsp)"), "{screen}");
    assert!(
        std::fs::read_to_string(home.path("app.py"))
            .unwrap()
            .contains("return 5")
    );
    app.type_text("/lsp");
    wait_long(&app, "/lsp typed", 10, |s| {
        s.lines().any(|l| l.starts_with("/lsp"))
    });
    app.send(b"\r");
    let screen = wait_long(&app, "/lsp", 10, |s| s.contains("Known here"));
    assert!(
        screen.contains("broken  failed: ") && screen.contains("licence expired"),
        "{screen}"
    );
}

/// The processes below `root` (by parent pid) whose command line holds
/// `needle`, with it.
pub(crate) fn descendants_named(root: u32, needle: &str) -> Vec<u32> {
    let mut parent = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // After the command's closing parenthesis: state, then ppid.
        let after = stat.rsplit(')').next().unwrap_or("");
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parent.insert(pid, ppid);
        }
    }
    let below = |mut pid: u32| {
        while let Some(&p) = parent.get(&pid) {
            if p == root {
                return true;
            }
            pid = p;
        }
        false
    };
    parent
        .keys()
        .copied()
        .filter(|&pid| below(pid) && cmdline(pid).contains(needle))
        .collect()
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Alive: there, not a zombie, still the same program.
pub(crate) fn alive(pid: u32, needle: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    !stat.is_empty() && !state.starts_with('Z') && cmdline(pid).contains(needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_language_server_outlives_cairn() {
    let Some(bin) = servers_bin() else { return };
    let home = TestHome::new();
    home.write("app.py", OLD);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "app.py"})),
            Reply::text("Viewed."),
            Reply::text("Title"),
        ],
    )
    .await;
    let mut app = start(&home, &mock.url(), Some(&bin), &[]);
    app.type_text("look at app.py");
    app.send(b"\r");
    wait_long(&app, "the answer", 30, |s| s.contains("Viewed."));
    let cairn = app.pid().expect("cairn's pid");
    // The view started pyright (node running pyright's language server).
    let deadline = Instant::now() + Duration::from_secs(30);
    let servers = loop {
        let found = descendants_named(cairn, "pyright");
        if !found.is_empty() {
            break found;
        }
        assert!(Instant::now() < deadline, "pyright never started");
        std::thread::sleep(Duration::from_millis(100));
    };
    app.ctrl_c_to_quit();
    assert!(
        app.wait_exit(Duration::from_secs(30)).is_some(),
        "cairn quit"
    );
    // No grace beyond what quitting took: cairn stops them before it exits.
    let left: Vec<u32> = servers
        .into_iter()
        .filter(|&p| alive(p, "pyright"))
        .collect();
    assert!(left.is_empty(), "still running after cairn: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_the_hunk_with_the_error_checks_again_what_would_be_written() {
    let Some(bin) = servers_bin() else { return };
    let home = TestHome::new();
    home.write("app.py", OLD);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "app.py"})),
            Reply::tool(
                "e1",
                "multiedit",
                json!({"file_path": "app.py", "edits": [
                    {"old_string": "return 1", "new_string": "return undefined_two"},
                    {"old_string": "return 2", "new_string": "return 3"}
                ]}),
            ),
            Reply::text("Done."),
            Reply::text("Title"),
        ],
    )
    .await;
    let mut app = start(&home, &mock.url(), Some(&bin), &[]);
    app.type_text("change f and g");
    app.send(b"\r");
    wait_long(&app, "the verdict", 60, |s| s.contains("pyright: +1 error"));
    // The first hunk (the focused one) is rejected: checked again.
    app.send(b" ");
    let screen = wait_long(&app, "the second verdict", 60, |s| {
        s.contains("pyright: no new problems")
    });
    assert!(
        !screen.contains("undefined_two\" is not defined"),
        "{screen}"
    );
    let first = screen
        .lines()
        .find(|l| l.contains("hunk 1/2"))
        .unwrap_or("");
    assert!(!first.contains("error"), "{screen}");
    // Taken back: the error is there again.
    app.send(b" ");
    wait_long(&app, "the verdict again", 60, |s| {
        s.contains("pyright: +1 error")
    });
    app.send(b" ");
    wait_long(&app, "the clean verdict", 60, |s| {
        s.contains("no new problems")
    });
    app.send(b"a");
    app.send(b"\r");
    wait_long(&app, "the answer", 30, |s| s.contains("Done."));
    let written = std::fs::read_to_string(home.path("app.py")).unwrap();
    assert!(
        !written.contains("undefined_two") && written.contains("return 3"),
        "{written}"
    );
    let sent = mock_model::tool_result_texts(&mock.requests()[2]);
    let edit = sent.last().unwrap();
    assert!(
        edit.contains("Checked by pyright: no new problems"),
        "{edit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_lists_every_files_hunks_and_writes_only_the_accepted() {
    let Some(bin) = typescript_bin() else { return };
    let home = TestHome::new();
    typescript_project(&home);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![rename_call(), Reply::text("Renamed."), Reply::text("Title")],
    )
    .await;
    let mut app = start(&home, &mock.url(), Some(&bin), &[]);
    app.type_text("rename greet to welcome");
    app.send(b"\r");
    let screen = wait_long(&app, "the dialog", 60, |s| s.contains("Allow once"));
    assert!(
        screen.contains("── a.ts  +1 −1  (1 hunk)") && screen.contains("── b.ts  +3 −3  (2 hunks)"),
        "every file is listed with its hunks: {screen}"
    );
    assert!(screen.contains("3 of 3 hunks accepted"), "{screen}");
    // The third hunk, b.ts's last use, is rejected.
    app.send(b"n");
    app.send(b"n");
    app.send(b" ");
    wait_long(&app, "the rejection", 10, |s| {
        s.contains("2 of 3 hunks accepted")
    });
    app.send(b"a");
    wait_long(&app, "the reason prompt", 10, |s| {
        s.contains("Why reject the rest")
    });
    app.type_text("bob keeps it");
    app.send(b"\r");
    wait_long(&app, "the answer", 30, |s| s.contains("Renamed."));
    let a = std::fs::read_to_string(home.path("a.ts")).unwrap();
    let b = std::fs::read_to_string(home.path("b.ts")).unwrap();
    assert!(a.contains("function welcome("), "{a}");
    assert!(
        b.contains("import { welcome }")
            && b.contains("welcome(\"ann\")")
            && b.contains("greet(\"bob\")"),
        "{b}"
    );
    let results = mock_model::tool_result_texts(&mock.requests()[1]);
    let said = results.last().unwrap();
    assert!(said.contains("rejected 1 of 3"), "{said}");
    assert!(said.contains("bob keeps it"), "{said}");
    app.ctrl_c_to_quit();
}

/// A language server of one's own making, in Python: its rename answers
/// with the `WorkspaceEdit` in the file it is given.
const RENAME_SERVER: &str = r#"
import json, sys
answer = json.load(open(sys.argv[1]))
def read():
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, value = line.split(b":", 1)
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))
def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    m = read()
    method, ident = m.get("method"), m.get("id")
    if method == "initialize":
        caps = {"textDocumentSync": 1, "renameProvider": True}
        send({"jsonrpc": "2.0", "id": ident, "result": {"capabilities": caps}})
    elif method == "textDocument/rename":
        send({"jsonrpc": "2.0", "id": ident, "result": answer})
    elif method == "exit":
        sys.exit(0)
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": None})
"#;

/// A rename whose answer also names a control file with an edit that
/// changes nothing: that file is neither shown nor written (a change
/// that changes nothing would have let the person's "allow" take in
/// whatever a command had put there), and the dialog shows only the file
/// that changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_leaves_out_a_file_its_edits_do_not_change() {
    if std::process::Command::new("python3")
        .arg("-c")
        .arg("1")
        .status()
        .is_err()
    {
        eprintln!("skipped: a_rename_leaves_out_a_file_its_edits_do_not_change: no python3");
        return;
    }
    let home = TestHome::new();
    let ws = home.project.path().canonicalize().unwrap();
    home.write("a.ev", "hello foo\n");
    home.write(".claude/settings.json", "{}\n");
    let uri = |rel: &str| format!("file://{}", ws.join(rel).display());
    let at = |l, c| json!({"line": l, "character": c});
    let answer = json!({"changes": {
        uri("a.ev"): [{"range": {"start": at(0, 6), "end": at(0, 9)}, "newText": "qux"}],
        uri(".claude/settings.json"): [{"range": {"start": at(0, 0), "end": at(0, 0)}, "newText": ""}],
    }});
    home.write(".tools/answer.json", &answer.to_string());
    home.write(".tools/server.py", RENAME_SERVER);
    let config = home.home.path().join("config/cairn/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[lsp.own]\ncommand = \"python3\"\nargs = [\"{}\", \"{}\"]\nfiletypes = [\"ev\"]\n",
            ws.join(".tools/server.py").display(),
            ws.join(".tools/answer.json").display()
        ),
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "r1",
                "lsp",
                json!({"operation": "rename", "file_path": "a.ev", "line": 1, "symbol": "foo", "new_name": "qux"}),
            ),
            Reply::text("Renamed."),
            Reply::text("Title"),
        ],
    )
    .await;
    let python = std::path::PathBuf::from("/usr/bin");
    let mut app = start(&home, &mock.url(), Some(&python), &[]);
    app.type_text("rename foo to qux");
    app.send(b"\r");
    let screen = wait_long(&app, "the dialog", 30, |s| s.contains("Allow once"));
    assert!(screen.contains("── a.ev  +1 −1  (1 hunk)"), "{screen}");
    assert!(!screen.contains("settings.json"), "{screen}");
    app.send(b"a");
    wait_long(&app, "the answer", 30, |s| s.contains("Renamed."));
    assert_eq!(
        std::fs::read_to_string(home.path("a.ev")).unwrap(),
        "hello qux\n"
    );
    app.ctrl_c_to_quit();
}
