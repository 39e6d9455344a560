//! The example CI job (`docs/ci/review.sh`) run as a runner would run it,
//! against the scripted model: a real git repository with a pull request's
//! branch, the real binary on PATH, and the comment it writes.

use crate::{mock_model, test_home};
use std::path::Path;
use std::process::Command;

use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::TestHome;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn missing(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_err()
}

#[tokio::test]
async fn the_review_job_posts_the_answer_and_refuses_writes() {
    for tool in ["bash", "git", "jq"] {
        if missing(tool) {
            eprintln!("skipped: `{tool}` is not installed (the CI example's script needs it)");
            return;
        }
    }
    let home = TestHome::new();
    let repo = home.project.path();
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(
        repo.join("lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    )
    .unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "first"]);
    git(repo, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(
        repo.join("lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 { a - b }\n",
    )
    .unwrap();
    git(repo, &["commit", "-q", "-am", "subtract instead"]);

    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            // The model tries to change a file: a review may not.
            Reply::text("Let me fix it.").tool_call(
                "w1",
                "write",
                json!({"file_path": "fix.rs", "content": "fixed\n"}),
            ),
            Reply::text("`add` in lib.rs:1 subtracts; it should add."),
            Reply::text("Review"),
        ],
    )
    .await;
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_cairn")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci/review.sh");
    // The scripted model answers on this test's runtime: wait without
    // blocking it.
    let out = tokio::process::Command::new("bash")
        .arg(&script)
        .current_dir(repo)
        .env_clear()
        .envs(home.vars(&mock.url()))
        .env("PATH", path)
        .env("CAIRN_BASE_REF", "main")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let comment = std::fs::read_to_string(repo.join("cairn-review.md")).unwrap();
    assert!(comment.starts_with("### cairn review"), "{comment}");
    assert!(
        comment.contains("Let me fix it.\n\n`add` in lib.rs:1 subtracts; it should add."),
        "{comment}"
    );
    assert!(comment.contains("1 calls refused"), "{comment}");
    assert!(comment.contains("2 model calls"), "{comment}");
    // The diff reached the model; the file was not written.
    let asked = mock.requests()[0]["messages"][0]["content"].to_string();
    assert!(
        asked.contains("a - b") && asked.contains("a + b"),
        "{asked}"
    );
    assert!(!repo.join("fix.rs").exists());
    // The job's config made the sandbox read-only.
    let stream = std::fs::read_to_string(repo.join("cairn-stream.jsonl")).unwrap();
    let init: serde_json::Value = serde_json::from_str(stream.lines().next().unwrap()).unwrap();
    let sandbox = init["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("read-only") || sandbox.contains("not enforced"),
        "{sandbox}"
    );
}
