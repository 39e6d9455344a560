//! Checked edits with a real server (pyright from tests/lsp_servers):
//! the time from proposing an edit to the verdict, the first one (the
//! server starting and analysing the file) and then with the server warm,
//! each edit a new text so nothing comes from the cache; and the memory
//! the server adds. Prints medians; skips, saying why, without pyright.
//!
//!     cargo bench --bench lsp

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cairn::lsp::LspManager;

const RUNS: usize = 15;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_servers/node_modules/.bin");
    if !bin.join("pyright-langserver").exists() {
        println!("skipped: pyright is not installed in tests/lsp_servers (npm ci there)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let mut firsts = Vec::new();
        let mut warms = Vec::new();
        let mut memory = Vec::new();
        for round in 0..3 {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let ws = dir.path().to_path_buf();
            let file = ws.join("app.py");
            let mut old = String::from("import os\n\n");
            for i in 0..200 {
                old.push_str(&format!("def f{i}(x):\n    return x + {i}\n\n"));
            }
            std::fs::write(&file, &old).expect("write");
            let config = cairn::config::parse(&format!(
                "[lsp.pyright]\ncommand = \"{}\"\n",
                bin.join("pyright-langserver").display()
            ))
            .expect("config")
            .lsp;
            let m = LspManager::new(
                &config,
                ws.clone(),
                cairn::sandbox::Sandbox::default_for_user(),
                false,
            );
            let started = Instant::now();
            let new = old.replace("return x + 7\n", "return y + 7\n");
            let v = m.check(&file, &old, &new, Duration::from_secs(120)).await;
            firsts.push(started.elapsed());
            assert!(
                format!("{v:?}").contains("new_errors: 1"),
                "{v:?} (round {round})"
            );
            for i in 0..RUNS {
                let new = old.replace("return x + 7\n", &format!("return z{i} + 7\n"));
                let t = Instant::now();
                let v = m.check(&file, &old, &new, Duration::from_secs(60)).await;
                warms.push(t.elapsed());
                assert!(format!("{v:?}").contains("new_errors: 1"), "{v:?}");
            }
            memory.push(m.memory_kib());
            m.shutdown().await;
        }
        memory.sort();
        println!(
            "pyright, first edit (start + analysis): median {:?} of {}",
            median(firsts),
            3
        );
        println!(
            "pyright, warm edit to verdict: median {:?} of {}",
            median(warms),
            3 * RUNS
        );
        println!("pyright, memory added: median {} MiB", memory[1] / 1024);
    });
}
