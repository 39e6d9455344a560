//! cairn's own walk (`grep`, `glob`, `ls`, `@` completion, the snapshot)
//! reads the workspace's ignore files in cairn's process. A sandboxed
//! command can make one a link or a FIFO: a FIFO (or a link to a terminal)
//! stalled the walk for good, and a link to a secret outside the
//! workspace turned its lines into ignore patterns, an oracle for its
//! content (which files the walk leaves out). Ignore files are now read
//! like every file the tools read: beneath the workspace, regular only.

use serde_json::json;

use crate::bash;
use crate::escape_fixture::{Fixture, assert_contained};
use crate::mock_model::{Format, MockModel, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_ignore_files_neither_stall_nor_leak_the_walk() {
    let f = Fixture::new();
    // The "secret" holds a line that names a workspace file: were it read
    // as ignore patterns, `probe.txt` would vanish from the listings.
    f.write_home(".ssh/config", "probe.txt\n");
    f.write_ws("probe.txt", "probe\n");
    f.write_ws("src/lib.rs", "fn probe() {}\n");
    // In a script, so the gate sees only `sh plant.sh`.
    let plant = "ln -s \"$HOME/.ssh/config\" .gitignore; mkdir -p src t; mkfifo src/.gitignore; \
                 ln -s /dev/tty t/.ignore; ls -la . src t";
    let mut all = Vec::new();
    for mode in ["smart", "auto"] {
        let mock = MockModel::start(
            Format::Anthropic,
            Fixture::script(vec![
                crate::put("p0", "plant.sh", plant),
                bash("p1", "sh plant.sh 2>&1"),
                Reply::tool("g1", "glob", json!({ "pattern": "**/*.txt" })),
                Reply::tool("g2", "grep", json!({ "pattern": "probe" })),
                Reply::tool("l1", "ls", json!({ "path": "." })),
            ]),
        )
        .await;
        let before = f.snapshot();
        // A stalled walk would keep cairn past its 60 s bound.
        f.run(&mock, mode).await;
        let mut escapes = f.escapes(&mock, &before);
        let requests = mock.requests();
        // Each listing's result reaches the model in the next request.
        for (i, tool) in ["glob", "grep", "ls"].iter().enumerate() {
            let after = requests
                .get(i + 3)
                .map(|r| r.to_string())
                .unwrap_or_default();
            if !after.contains("probe.txt") {
                escapes.push(format!(
                    "{tool} left out probe.txt: the secret's lines acted as ignore patterns"
                ));
            }
        }
        all.extend(escapes.into_iter().map(|e| format!("{mode}: {e}")));
        for p in [".gitignore", "src/.gitignore", "t/.ignore"] {
            let _ = std::fs::remove_file(f.ws.join(p));
        }
    }
    assert_contained("planted ignore files", &all);
}
