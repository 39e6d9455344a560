//! What a `PreToolUse` hook adds to a tool call: the hooks run before the
//! gate, so the added latency is the time `Hooks::run` takes for the call.
//! Figures: no hook matching (the cost every call pays), a no-op hook of
//! the person's own (`true`, runs as them), the same as a project's hook
//! (inside the sandbox), and a no-op Python script as a project's hook (the
//! shape people publish, with the same script of the person's own as its
//! baseline), with the input Claude Code's hooks read.

use std::path::Path;

use cairn::extensions::hooks::{Event, Files, Hooks};
use cairn::sandbox::Sandbox;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn settings(dir: &Path, file: &str, command: &str) {
    let text = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": command}]}]}});
    std::fs::create_dir_all(dir.join(file).parent().expect("a parent")).expect("dir");
    std::fs::write(dir.join(file), text.to_string()).expect("write settings");
}

fn hooks_in(ws: &Path, home: &Path) -> Hooks {
    let files = Files {
        workspace: ws.to_path_buf(),
        user_config: None,
        home: Some(home.to_path_buf()),
        claude: true,
    };
    Hooks::load(&files, true, Sandbox::default_for_user(), None)
}

fn pre_tool_use(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let input = json!({
        "session_id": "bench", "transcript_path": null, "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "cargo test"}
    });
    let cancel = CancellationToken::new();
    let mut group = c.benchmark_group("pre_tool_use");
    group.sample_size(30);
    let cases = [
        ("no_hook", None, None),
        (
            "noop_user_true",
            Some(".claude/settings.json"),
            Some("true"),
        ),
        (
            "noop_user_python",
            Some(".claude/settings.json"),
            Some("python3 -c pass"),
        ),
        ("noop_project_true_sandboxed", None, Some("true")),
        (
            "noop_project_python_sandboxed",
            None,
            Some("python3 -c pass"),
        ),
    ];
    for (name, user_file, command) in cases {
        let ws = tempfile::tempdir().expect("a workspace");
        let home = tempfile::tempdir().expect("a home");
        match (user_file, command) {
            (Some(file), Some(cmd)) => settings(home.path(), file, cmd),
            (None, Some(cmd)) => settings(ws.path(), ".claude/settings.json", cmd),
            _ => {}
        }
        let hooks = hooks_in(ws.path(), home.path());
        group.bench_function(name, |b| {
            b.iter(|| {
                let runs =
                    rt.block_on(hooks.run(Event::PreToolUse, &["Bash", "bash"], &input, &cancel));
                assert!(runs.iter().all(|r| r.code == Some(0)), "{runs:?}");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pre_tool_use);
criterion_main!(benches);
