//! Programs cairn runs as the person (fifth hostile review, G6): `bwrap`
//! itself, the person's own hooks' shell, the shell of the model's
//! commands, `tic`, the editor, the person's own MCP servers — all were
//! looked up on the person's whole `PATH`. With a venv activated (its
//! `.venv/bin` inside the workspace, first on `PATH`), one contained
//! command planted `.venv/bin/bwrap` and the next session ran it, as the
//! person, to start every command. cairn's own `PATH` now leaves out the
//! workspace (and relative entries); the model's commands still see the
//! person's whole `PATH`, their venv included, inside the sandbox.

use crate::escape_fixture::{Fixture, assert_contained, needs};
use crate::mock_model::{Format, MockModel};
use crate::{bash, put};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_planted_in_a_workspace_folder_on_path_never_runs_as_the_person() {
    if !needs(&["bwrap"]) {
        return;
    }
    let mut f = Fixture::new();
    let venv = f.ws.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    let path = format!(
        "{}:{}",
        venv.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    f.set_env("PATH", &path);
    // The person's own hook, run outside the sandbox by name.
    f.write_home(
        ".config/cairn/config.toml",
        "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"git --version >/dev/null\"\n",
    );
    let marks = f.base.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    // Each planted program leaves a mark outside the workspace (which only
    // a process outside the sandbox can write) and then runs the real one.
    let mut plant = String::from("mkdir -p .venv/bin\n");
    for name in ["bwrap", "bash", "sh", "git", "tic", "python3"] {
        let real = format!(
            "$(PATH=$(echo \"$PATH\" | tr ':' '\\n' | grep -v '/.venv/bin' | paste -sd:) command -v {name})"
        );
        plant.push_str(&format!(
            "printf '#!/bin/sh\\ntouch {marks}/{name}-ran 2>/dev/null\\nexec {real} \"$@\"\\n' > .venv/bin/{name}\nchmod +x .venv/bin/{name}\n",
            marks = marks.display(),
        ));
    }
    let first = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            put("p1", "plant.sh", &plant),
            bash("p2", "sh plant.sh; ls -l .venv/bin"),
        ]),
    )
    .await;
    f.run(&first, "smart").await;
    let planted = std::fs::read_dir(&venv).map(|d| d.count()).unwrap_or(0);
    // The next session: any command, and the person's hook at its end.
    let second = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![bash("c1", "echo \"$PATH\" > seen-path; echo ok")]),
    )
    .await;
    f.run(&second, "smart").await;
    let mut all = Vec::new();
    if planted == 0 {
        all.push("nothing was planted: nothing tested".to_string());
    }
    for entry in std::fs::read_dir(&marks).unwrap().flatten() {
        all.push(format!(
            "ran as the person: {}",
            entry.file_name().to_string_lossy()
        ));
    }
    let seen = std::fs::read_to_string(f.ws.join("seen-path")).unwrap_or_default();
    if !seen.contains("/.venv/bin") {
        all.push(format!(
            "the model's command lost the person's venv from PATH (saw {seen:?})"
        ));
    }
    assert_contained("programs found on a PATH with workspace folders", &all);
}
