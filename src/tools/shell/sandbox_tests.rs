//! `bash` under the real sandbox: foreground answers name the sandbox,
//! and background jobs inherit it.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::sandbox::tests::{enforced, fixture};
use crate::sandbox::{Sandbox, Stop};
use crate::tools::job_tools::JobOutputTool;

fn ctx(f: &crate::sandbox::tests::Fixture) -> ToolContext {
    let mut ctx = ToolContext::new(f.ws.clone());
    ctx.sandbox = Sandbox::with_dirs(&Default::default(), false, Some(f.home.clone()), Vec::new());
    ctx
}

#[tokio::test]
async fn a_stopped_command_is_named_plainly_with_its_policy() {
    if !enforced() {
        return;
    }
    let f = fixture();
    if ctx(&f)
        .sandbox
        .policy(&f.ws)
        .is_some_and(|p| p.layer == crate::sandbox::Layer::Namespace)
    {
        // Under bubblewrap the rest of the home does not exist for the
        // command: the write fails with "No such file", which the detector
        // does not yet name as the sandbox's doing.
        eprintln!("skipped: outside paths do not exist under bubblewrap");
        return;
    }
    let out = BashTool
        .run(
            json!({"command": "echo x > ../other/escaped.txt"}),
            &ctx(&f),
        )
        .await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(
        text.starts_with("stopped by the sandbox: writing"),
        "{text}"
    );
    assert!(!f.home.join("other/escaped.txt").exists());
    match out.display {
        Some(ToolDisplay::Command {
            sandbox, stopped, ..
        }) => {
            assert_eq!(sandbox, "sandbox: workspace-write, network off");
            assert_eq!(
                stopped,
                Some(Stop::Write {
                    path: f.home.join("other/escaped.txt")
                })
            );
        }
        other => panic!("{other:?}"),
    }
    // A grant for this run lets exactly that through.
    let mut granted = ctx(&f);
    granted.grant.write = vec![f.home.join("other/escaped.txt")];
    let out = BashTool
        .run(
            json!({"command": "echo x > ../other/escaped.txt"}),
            &granted,
        )
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    assert!(f.home.join("other/escaped.txt").exists());
}

async fn job_output(ctx: &ToolContext, id: &str) -> String {
    let mut seen = String::new();
    for _ in 0..100 {
        let out = JobOutputTool.run(json!({"job_id": id}), ctx).await;
        seen.push_str(&out.text_content());
        if seen.contains("fin-ished") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    seen
}

#[tokio::test]
async fn background_jobs_inherit_the_sandbox() {
    if !enforced() {
        return;
    }
    let f = fixture();
    let ctx = ctx(&f);
    let script = "echo in > job-inside.txt; echo out > ../job-outside.txt; cat ~/.ssh/id_rsa; \
                  (exec 3<>/dev/tcp/127.0.0.1/9) 2>&1; echo fin''-ished";
    let out = BashTool
        .run(json!({"command": script, "run_in_background": true}), &ctx)
        .await;
    let Some(ToolDisplay::Job { job_id }) = out.display else {
        panic!("{out:?}");
    };
    let text = job_output(&ctx, &job_id).await;
    assert!(text.contains("fin-ished"), "{text}");
    assert!(f.ws.join("job-inside.txt").exists(), "{text}");
    assert!(!f.home.join("job-outside.txt").exists(), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    assert!(text.contains("Permission denied"), "{text}");
}

#[tokio::test]
async fn a_command_moved_to_the_background_stays_in_the_sandbox() {
    if !enforced() {
        return;
    }
    TEST_BACKGROUND_AFTER.with(|c| c.set(Some(Duration::from_millis(200))));
    let f = fixture();
    let ctx = ctx(&f);
    let script =
        "sleep 0.5; echo late > ../late-outside.txt; echo late > late-inside.txt; echo fin''-ished";
    let out = BashTool.run(json!({"command": script}), &ctx).await;
    let Some(ToolDisplay::Job { job_id }) = out.display else {
        panic!("{out:?}");
    };
    let text = job_output(&ctx, &job_id).await;
    assert!(text.contains("fin-ished"), "{text}");
    assert!(f.ws.join("late-inside.txt").exists());
    assert!(!f.home.join("late-outside.txt").exists());
}
