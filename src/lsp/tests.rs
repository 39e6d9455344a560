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
