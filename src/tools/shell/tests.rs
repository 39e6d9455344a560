use std::fs;

use serde_json::json;

use super::*;
use crate::text::truncate_middle;
use crate::tools::job_tools::{JobKillTool, JobOutputTool};

fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, ToolContext::new(root))
}

async fn bash(ctx: &ToolContext, input: Value) -> ToolOutput {
    BashTool.run(input, ctx).await
}

/// Running, that is: it exists and is not a zombie waiting to be reaped
/// (a killed child stays one until its parent collects it).
fn alive(pid: i32) -> bool {
    if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_none_or(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

async fn pids_in(path: &Path) -> Vec<i32> {
    for _ in 0..50 {
        if let Ok(text) = fs::read_to_string(path) {
            let pids: Vec<i32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if pids.len() >= 2 {
                return pids;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the command never wrote its pids");
}

/// Under bubblewrap a command's `$$` and `$!` are numbers of its own
/// process namespace, not of this one, so the tests that look them up
/// here cannot tell; the sandbox's own tests (src/sandbox/tests/,
/// tests/sandbox_classes.rs) check that nothing outlives a call in that
/// layer, by command line.
fn pids_are_namespaced(test: &str) -> bool {
    // A folder of its own: the session's census watches its workspace,
    // and the whole temporary folder holds other tests' repositories.
    let dir = tempfile::tempdir().unwrap();
    let namespaced = ToolContext::new(dir.path().to_path_buf())
        .sandbox
        .policy(dir.path())
        .is_some_and(|p| p.layer == crate::sandbox::Layer::Namespace);
    if namespaced {
        eprintln!("skipped {test}: commands run in their own PID namespace (bubblewrap)");
    }
    namespaced
}

async fn all_gone(pids: &[i32]) -> bool {
    for _ in 0..40 {
        if pids.iter().all(|&p| !alive(p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn runs_and_keeps_the_directory_across_calls() {
    let (_dir, ctx) = ctx();
    fs::create_dir(ctx.workspace.join("sub")).unwrap();
    let out = bash(&ctx, json!({"command": "cd sub && echo moved"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(out.text_content(), "moved");
    let out = bash(&ctx, json!({"command": "pwd"})).await;
    assert_eq!(
        out.text_content(),
        ctx.workspace.join("sub").display().to_string()
    );
    assert_eq!(ctx.session.cwd(), ctx.workspace.join("sub"));
}

#[tokio::test]
async fn merges_streams_sets_env_and_reports_exit_codes() {
    let (_dir, ctx) = ctx();
    let out = bash(
        &ctx,
        json!({"command": "echo one; echo two >&2; echo $CAIRN $GIT_PAGER; exit 3"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "exit code 3\none\ntwo\n1 cat");
    let out = bash(&ctx, json!({"command": "read x; echo \"[$x] $?\""})).await;
    assert_eq!(out.text_content(), "[] 1");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let (_dir, ctx) = ctx();
    let out = bash(&ctx, json!({"command": "seq 1 20000"})).await;
    let text = out.text_content();
    assert!(text.starts_with("1\n2\n"));
    assert!(text.ends_with("19999\n20000"));
    assert!(
        text.contains("characters cut from the middle"),
        "{}",
        &text[..100]
    );
    assert!(text.chars().count() < MAX_OUTPUT_CHARS + 200);
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    if pids_are_namespaced("timeout_kills_the_whole_group") {
        return;
    }
    let (_dir, ctx) = ctx();
    let pidfile = ctx.workspace.join("pids");
    let cmd = format!(
        "sleep 100 & echo $! > {p}; sleep 100 & echo $! >> {p}; wait",
        p = pidfile.display()
    );
    let out = bash(&ctx, json!({"command": cmd, "timeout_ms": 500})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("timed out after 500 ms"));
    let pids = pids_in(&pidfile).await;
    assert!(all_gone(&pids).await, "survivors: {pids:?}");
}

#[tokio::test]
async fn cancel_kills() {
    if pids_are_namespaced("cancel_kills") {
        return;
    }
    let (_dir, ctx) = ctx();
    let pidfile = ctx.workspace.join("pids");
    let cmd = format!(
        "sleep 100 & echo $! > {p}; echo $$ >> {p}; wait",
        p = pidfile.display()
    );
    let cancel = ctx.cancel.clone();
    let pf = pidfile.clone();
    tokio::spawn(async move {
        pids_in(&pf).await;
        cancel.cancel();
    });
    let out = bash(&ctx, json!({"command": cmd})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("cancelled"));
    let pids = pids_in(&pidfile).await;
    assert!(all_gone(&pids).await, "survivors: {pids:?}");
}

#[tokio::test]
async fn interactive_programs_fail_fast() {
    let (_dir, ctx) = ctx();
    let started = std::time::Instant::now();
    let out = bash(&ctx, json!({"command": "vim x"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("interactive editor"));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        BashTool
            .preview(&json!({"command": "vim x"}), &ctx)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn preview_lists_commands_and_redirects() {
    let (_dir, ctx) = ctx();
    let p = BashTool
        .preview(
            &json!({"command": "cargo test 2>&1 | tee log.txt > out.txt"}),
            &ctx,
        )
        .await
        .unwrap();
    match p {
        Some(Preview::Command {
            commands,
            redirects,
            cwd,
            ..
        }) => {
            assert_eq!(commands[0], vec!["cargo", "test"]);
            assert_eq!(redirects, vec!["out.txt"]);
            assert_eq!(cwd, ".");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn records_versions_of_changed_files() {
    let (_dir, ctx) = ctx();
    fs::write(ctx.workspace.join("a.txt"), "old\n").unwrap();
    let out = bash(
        &ctx,
        json!({"command": "sed -i 's/old/new/' a.txt && touch b.txt"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text_content());
    let versions = ctx.session.versions();
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert_eq!(versions[0].path, ctx.workspace.join("a.txt"));
    assert_eq!(versions[0].before, Some(b"old\n".to_vec()));
    assert_eq!(versions[1].before, None);
}

#[test]
fn background_threshold_reads_the_variable() {
    assert_eq!(
        background_after_from(Some("250".into())),
        Duration::from_millis(250)
    );
    assert_eq!(
        background_after_from(Some("x".into())),
        Duration::from_secs(60)
    );
    assert_eq!(background_after_from(None), Duration::from_secs(60));
}

#[tokio::test]
async fn slow_commands_move_to_the_background() {
    let (_dir, ctx) = ctx();
    TEST_BACKGROUND_AFTER.with(|c| c.set(Some(Duration::from_millis(300))));
    let out = bash(
        &ctx,
        json!({"command": "echo first; sleep 1; echo second; sleep 100"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text_content());
    assert!(out.text_content().contains("background as job-1"));
    assert!(out.text_content().contains("first"));
    assert_eq!(
        out.display,
        Some(ToolDisplay::Job {
            job_id: "job-1".into()
        })
    );

    tokio::time::sleep(Duration::from_millis(1200)).await;
    let more = JobOutputTool.run(json!({"job_id": "job-1"}), &ctx).await;
    let text = more.text_content();
    assert!(text.contains("still running"), "{text}");
    let body = text.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body, "second", "{text}");

    let killed = JobKillTool.run(json!({"job_id": "job-1"}), &ctx).await;
    assert!(
        killed.text_content().contains("stopped"),
        "{}",
        killed.text_content()
    );
    let after = JobOutputTool.run(json!({"job_id": "job-1"}), &ctx).await;
    assert!(after.text_content().contains("finished with exit code"));
    assert!(
        JobOutputTool
            .run(json!({"job_id": "job-9"}), &ctx)
            .await
            .is_error
    );
}

#[tokio::test]
async fn run_in_background_returns_at_once_and_drop_kills() {
    if pids_are_namespaced("run_in_background_returns_at_once_and_drop_kills") {
        return;
    }
    let (_dir, ctx) = ctx();
    let pidfile = ctx.workspace.join("pids");
    let cmd = format!(
        "echo $$ > {p}; sleep 100 & echo $! >> {p}; wait",
        p = pidfile.display()
    );
    let started = std::time::Instant::now();
    let out = bash(&ctx, json!({"command": cmd, "run_in_background": true})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.text_content().contains("job-1"));
    let pids = pids_in(&pidfile).await;
    assert!(pids.iter().all(|&p| alive(p)));
    drop(ctx);
    assert!(all_gone(&pids).await, "survivors: {pids:?}");
}

#[test]
fn truncation_says_how_much_was_cut() {
    let text = "x".repeat(100);
    let cut = truncate_middle(&text, 20);
    assert!(cut.starts_with(&"x".repeat(10)));
    assert!(cut.contains("80 characters cut"));
    assert_eq!(truncate_middle("short", 20), "short");
}

#[tokio::test]
async fn output_streams_in_whole_lines_while_the_command_runs() {
    let (_dir, mut ctx) = ctx();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    ctx.progress = Some(tx);
    let run = bash(
        &ctx,
        json!({"command": "echo one; sleep 0.4; printf 'two\\nthr'; sleep 0.4; echo ee"}),
    );
    let watch = async {
        // The first line arrives while the command still sleeps.
        let first = rx.recv().await;
        assert_eq!(first, Some(crate::tools::Progress::Output("one\n".into())));
    };
    let (out, ()) = tokio::join!(run, watch);
    assert_eq!(out.text_content(), "one\ntwo\nthree");
    let mut chunks = Vec::new();
    while let Ok(crate::tools::Progress::Output(chunk)) = rx.try_recv() {
        chunks.push(chunk);
    }
    // Only whole lines were sent: `thr` waited for its end (on a loaded
    // machine `thr` and `ee` may come in one read: still whole lines).
    assert!(chunks.iter().all(|c| c.ends_with('\n')), "{chunks:?}");
    let rest = chunks.concat();
    assert!(rest == "two\n" || rest == "two\nthree\n", "{chunks:?}");
}

#[test]
fn the_pane_header_is_the_command_not_the_description() {
    let s = BashTool.summary(
        &json!({"command": "cargo test && rm -f README.md", "description": "run the tests"}),
    );
    assert_eq!(s, "bash cargo test && rm -f README.md");
}

#[test]
fn the_directory_trailer_is_silent_when_its_file_is_gone() {
    // A background job outlives its call, and the file with it.
    let s = script("echo out; exit 3", Path::new("/nonexistent-cairn-dir/cwd"));
    let run = std::process::Command::new("bash")
        .arg("-c")
        .arg(&s)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&run.stderr), "");
    assert_eq!(run.status.code(), Some(3));
}

/// The working-directory file is where commands can write: a link to a
/// FIFO (or the terminal) put in its place is not followed or waited on.
#[test]
fn a_cwd_file_replaced_by_a_link_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
    );
    let link = dir.path().join("cwd");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    assert_eq!(super::read_cwd_file(&link), None);
    assert_eq!(super::read_cwd_file(&fifo), None);
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "/w/p\n").unwrap();
    assert_eq!(super::read_cwd_file(&plain).as_deref(), Some("/w/p\n"));
}
