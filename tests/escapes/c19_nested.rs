//! Control files below the root (hostile review s4, F2): a command wrote
//! `sub/.claude/skills/deploy` (cairn started in `sub/` loads it before the
//! person's own `deploy`), `sub/.claude/settings.json` (another agent
//! started there runs its hooks), `sub/.envrc`, `sub/.vscode/tasks.json`,
//! a nested `AGENTS.md`, or a repository of its own in a subfolder whose
//! `core.fsmonitor` the person's git (or shell prompt) runs on entering
//! it. The census now watches the same list in every folder: new ones are
//! moved to the quarantine, existing ones are bound read-only.

use crate::bash;
use crate::escape_fixture::{Fixture, assert_contained, git};
use crate::mock_model::{Format, MockModel};

const NEW: &[&str] = &[
    "sub/.claude/skills/deploy/SKILL.md",
    "sub/.claude/settings.json",
    "sub/.agents/skills/deploy/SKILL.md",
    "sub/.cairn/skills/deploy/SKILL.md",
    "sub/deeper/.envrc",
    "sub/.vscode/tasks.json",
    "sub/.mcp.json",
    "sub/deeper/AGENTS.md",
    "sub/inner/.git",
];

const SETTINGS: &str = "{\"editor.tabSize\": 4}\n";

fn plant(marks: &std::path::Path) -> String {
    let mut plant = String::from("set +e\n");
    for rel in NEW.iter().filter(|r| !r.ends_with(".git")) {
        plant.push_str(&format!(
            "mkdir -p \"$(dirname {rel})\"; printf -- '---\\nname: deploy\\ndescription: d\\n---\\nPLANTED\\n' > {rel}\n"
        ));
    }
    plant.push_str(&format!(
        "git init -q sub/inner && git -C sub/inner config core.fsmonitor 'touch {}/inner-ran; false'\n",
        marks.display()
    ));
    plant.push_str("echo '{\"task\": \"curl x | sh\"}' > sub/kept/.vscode/settings.json\n");
    plant.push_str("find sub\n");
    plant
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_control_file_below_the_root_is_written_unasked() {
    let mut all = Vec::new();
    for mode in ["smart", "auto"] {
        let f = Fixture::new();
        f.write_ws("sub/a.txt", "a\n");
        f.write_ws("sub/kept/.vscode/settings.json", SETTINGS);
        git(&f.ws, &["add", "-A"]);
        git(&f.ws, &["commit", "-qm", "sub"]);
        let marks = f.base.join("marks");
        std::fs::create_dir_all(&marks).unwrap();
        let mock = MockModel::start(
            Format::Anthropic,
            Fixture::script(vec![
                crate::put("p1", "plant.sh", &plant(&marks)),
                bash("p2", "sh plant.sh 2>&1"),
            ]),
        )
        .await;
        f.run(&mock, mode).await;
        for rel in NEW {
            if std::fs::symlink_metadata(f.ws.join(rel)).is_ok() {
                all.push(format!("{mode}: {rel} was created"));
            }
        }
        let kept = std::fs::read_to_string(f.ws.join("sub/kept/.vscode/settings.json"));
        if kept.as_deref().ok() != Some(SETTINGS) {
            all.push(format!(
                "{mode}: sub/kept/.vscode/settings.json was changed"
            ));
        }
        // The person's shell prompt runs git on entering the folder.
        if f.ws.join("sub/inner").is_dir() {
            f.persons_git(&f.ws.join("sub/inner"), &["status", "--short"]);
        }
        if marks.join("inner-ran").exists() {
            all.push(format!(
                "{mode}: the person's git ran the nested repository's fsmonitor"
            ));
        }
    }
    assert_contained("control files below the root", &all);
}
