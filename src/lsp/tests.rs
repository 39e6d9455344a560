//! The client against a real server: pyright from tests/lsp_servers
//! (installed by `.ci/run`); skipped, saying so, when it is not there.

use std::path::PathBuf;
use std::time::Duration;

use super::*;

fn pyright_bin() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_servers/node_modules/.bin");
    if bin.join("pyright-langserver").exists() {
        Some(bin)
    } else {
        eprintln!("skipped: pyright is not installed in tests/lsp_servers (run .ci/run)");
        None
    }
}

fn manager_with(bin: &std::path::Path, ws: &std::path::Path) -> std::sync::Arc<LspManager> {
    let config = crate::config::parse(&format!(
        "[lsp.pyright]\ncommand = \"{}\"\n",
        bin.join("pyright-langserver").display()
    ))
    .unwrap()
    .lsp;
    LspManager::new(
        &config,
        ws.to_path_buf(),
        crate::sandbox::Sandbox::default_for_user(),
        false,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_names_the_new_error_and_not_the_old_one() {
    let Some(bin) = pyright_bin() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let file = ws.join("app.py");
    let old = "import os\n\nprint(missing_one)\n\ndef f():\n    return 1\n";
    std::fs::write(&file, old).unwrap();
    let m = manager_with(&bin, &ws);
    assert!(
        m.statuses().is_empty(),
        "nothing starts before a file is touched"
    );
    let new = "import os\n\nprint(missing_one)\n\ndef f():\n    return undefined_two\n";
    let v = m
        .check(&file, old, new, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(v.tally(), "+1 error", "{v:?}");
    let text = v.for_model("app.py").unwrap();
    assert!(text.contains("undefined_two"), "{text}");
    assert!(!text.contains("missing_one"), "{text}");
    assert_eq!(v.findings_in(5..6).len(), 1, "{v:?}");
    assert!(matches!(
        m.statuses()[0].state,
        ServerState::Ready | ServerState::Indexing(_)
    ));
    // Fixing it is counted as fixed.
    let v = m
        .check(&file, new, old, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(v.tally(), "−1 error", "{v:?}");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_is_failed_with_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let config = crate::config::parse(
        "[lsp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no licence >&2; exit 3\"]\nfiletypes = [\"py\"]\n",
    )
    .unwrap()
    .lsp;
    let m = LspManager::new(
        &config,
        ws.clone(),
        crate::sandbox::Sandbox::default_for_user(),
        false,
    );
    let v = m
        .check(&ws.join("a.py"), "", "x = 1\n", Duration::from_secs(20))
        .await
        .unwrap();
    let Verdict::Unavailable { server, reason } = &v else {
        panic!("{v:?}")
    };
    assert_eq!(server, "broken");
    assert!(reason.contains("no licence"), "{reason}");
    let s = m.statuses();
    assert!(
        matches!(&s[0].state, ServerState::Failed(w) if w.contains("no licence")),
        "{s:?}"
    );
    // A file of no server's language has no verdict at all.
    assert!(
        m.check(&ws.join("a.txt"), "", "x", Duration::from_secs(1))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn with_the_sandbox_off_an_untrusted_projects_server_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.py"), "x = 1\n").unwrap();
    let config = crate::config::parse("[lsp.s]\ncommand = \"/bin/cat\"\nfiletypes = [\"py\"]\n")
        .unwrap()
        .lsp;
    for (trusted, starts) in [(false, false), (true, true)] {
        let m = LspManager::new(&config, ws.clone(), crate::sandbox::Sandbox::off(), trusted);
        let got = m.client_for(&ws.join("a.py"), Duration::from_secs(2)).await;
        let refused = matches!(&got, Err((_, why)) if why.contains("not trusted"));
        assert_eq!(
            !refused,
            starts,
            "trusted {trusted}: {:?}",
            got.as_ref().err()
        );
    }
}

#[test]
fn the_server_for_a_language_is_searched_once_and_again_after_lsp() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let bin = dir.path().join("bin");
    let ws_bin = ws.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&ws_bin).unwrap();
    let exe = |p: PathBuf| {
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    exe(bin.join("pyright-langserver"));
    // Preferred, but inside the workspace: never chosen.
    exe(ws_bin.join("basedpyright-langserver"));
    let path = std::env::join_paths([&ws_bin, &bin]).unwrap();
    let m = LspManager::with_path(
        &Default::default(),
        ws.clone(),
        crate::sandbox::Sandbox::default_for_user(),
        false,
        Some(&path),
    );
    let name = |f: &str| m.server_for(&ws.join(f)).map(|(s, _)| s.name);
    assert_eq!(name("a.py").as_deref(), Some("pyright"));
    assert_eq!(name("a.ts"), None);
    // Uninstalled meanwhile: the choice is remembered, PATH not searched.
    std::fs::remove_file(bin.join("pyright-langserver")).unwrap();
    assert_eq!(name("b.py").as_deref(), Some("pyright"));
    // `/lsp` searches again (it lists what is installed).
    let known = m.known();
    assert!(known.iter().all(|k| !k.installed), "{known:?}");
    assert_eq!(name("b.py"), None);
    assert_eq!(name("a.ts"), None);
    exe(bin.join("typescript-language-server"));
    assert_eq!(name("a.ts"), None, "a missing one is remembered too");
    m.known();
    assert_eq!(name("a.ts").as_deref(), Some("typescript"));
}

#[tokio::test]
async fn after_shutdown_no_server_starts_and_a_starting_one_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let pid_file = dir.path().join("pid");
    // Never answers `initialize`: it stays starting until stopped.
    let config = crate::config::parse(&format!(
        "[lsp.s]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"echo $$ > {}; exec sleep 600\"]\n\
         filetypes = [\"py\"]\n",
        pid_file.display()
    ))
    .unwrap()
    .lsp;
    let m = LspManager::new(&config, ws.clone(), crate::sandbox::Sandbox::off(), true);
    m.touch(&ws.join("a.py"));
    let mut pid = None;
    for _ in 0..200 {
        pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok());
        if pid.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let pid = pid.expect("the server started");
    assert!(matches!(m.statuses()[0].state, ServerState::Starting));
    m.shutdown().await;
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    for _ in 0..100 {
        if !alive(pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "the starting server was killed");
    assert!(matches!(&m.statuses()[0].state, ServerState::Failed(w) if w.contains("stopped")));
    // Nothing starts again, for another file or a restart.
    let got = m.client_for(&ws.join("b.py"), Duration::from_secs(1)).await;
    assert!(
        matches!(&got, Err((_, why)) if why.contains("stopped")),
        "{:?}",
        got.err()
    );
    assert!(m.restart("s").is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_breaks_a_caller_in_another_open_file_says_so() {
    let Some(bin) = pyright_bin() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let lib = ws.join("lib.py");
    let old = "def helper(x):\n    return x * 2\n";
    std::fs::write(&lib, old).unwrap();
    std::fs::write(
        ws.join("app.py"),
        "from lib import helper\n\nprint(helper(1))\n",
    )
    .unwrap();
    let m = manager_with(&bin, &ws);
    // Touched (a view, say): opened before the check, whoever comes first.
    m.touch(&ws.join("app.py"));
    let new = "def assist(x):\n    return x * 2\n";
    let v = m
        .check(&lib, old, new, Duration::from_secs(60))
        .await
        .unwrap();
    let others = v.elsewhere();
    assert_eq!(others.len(), 1, "{v:?}");
    assert_eq!(others[0].path, "app.py");
    assert!(v.tally().contains("in 1 other file"), "{}", v.tally());
    let text = v.for_model("lib.py").unwrap();
    assert!(
        text.contains("app.py line 1:") && text.contains("helper"),
        "{text}"
    );
    // Asked again (the result after the edit is applied): the same answer.
    assert_eq!(
        m.check(&lib, old, new, Duration::from_secs(5))
            .await
            .unwrap(),
        v
    );
    m.shutdown().await;
}

/// A server that answers `initialize` and formatting (it puts a comment
/// line first) and never publishes diagnostics.
const SILENT_SERVER: &str = r##"
import sys, json
def read():
    size = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        key, value = line.split(b":", 1)
        if key.lower() == b"content-length":
            size = int(value)
    return json.loads(sys.stdin.buffer.read(size))
def send(msg):
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    m = read()
    if "id" not in m or "method" not in m:
        continue
    result = None
    if m["method"] == "initialize":
        result = {"capabilities": {"documentFormattingProvider": True}}
    elif m["method"] == "textDocument/formatting":
        at = {"line": 0, "character": 0}
        result = [{"range": {"start": at, "end": at}, "newText": "# formatted\n"}]
    send({"jsonrpc": "2.0", "id": m["id"], "result": result})
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formatting_applies_the_servers_edits_and_a_busy_server_is_waited_for_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let file = ws.join("a.py");
    std::fs::write(&file, "x = 1\n").unwrap();
    let mut config =
        crate::config::parse("[lsp.silent]\ncommand = \"python3\"\nfiletypes = [\"py\"]\n")
            .unwrap()
            .lsp;
    config.servers.get_mut("silent").unwrap().args = Some(vec!["-c".into(), SILENT_SERVER.into()]);
    for name in ["basedpyright", "pyright", "pylsp"] {
        config.servers.entry(name.into()).or_default().disabled = true;
    }
    let m = LspManager::new(&config, ws.clone(), crate::sandbox::Sandbox::off(), true);
    let formatted = m.format(&file, "x = 1\n", Duration::from_secs(20)).await;
    assert_eq!(formatted.as_deref(), Ok("# formatted\nx = 1\n"));

    // A check that waits for diagnostics that never come holds the server;
    // a second check waits for it only as long as its own time allows.
    let first = {
        let (m, file) = (m.clone(), file.clone());
        tokio::spawn(async move {
            m.check(&file, "x = 1\n", "x = 2\n", Duration::from_secs(4))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let second = m
        .check(&file, "x = 1\n", "x = 3\n", Duration::from_millis(500))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let Verdict::Unavailable { reason, .. } = &second else {
        panic!("{second:?}")
    };
    assert!(reason.contains("busy with an earlier check"), "{reason}");
    let first = first.await.unwrap().unwrap();
    assert!(matches!(first, Verdict::Unavailable { .. }), "{first:?}");
    m.shutdown().await;
}
