//! Git state other than config and hooks (third hostile review, F5): a
//! command stops a rebase of its own with `exec` lines still to do, names a
//! merge strategy program, or writes the file the repository's config
//! includes from the worktree — and the person's next plain `git rebase
//! --continue` or `git status`, outside the sandbox, runs what it named.
//! The to-do list is disarmed (the rebase still continues), the strategy
//! moved away, and the included config bound read-only.

use crate::bash;
use crate::escape_fixture::{Fixture, assert_contained, git};
use crate::mock_model::{Format, MockModel};

const PLANT: &str = r#"M=MARKS
echo two > two && git add two && git commit -qm two
GIT_SEQUENCE_EDITOR="sed -i '1i break'" git rebase -i -x "touch $M/exec-ran" HEAD~1
printf '[core]\n\tfsmonitor = "touch %s/include-ran; false"\n' "$M" > .gitconfig-shared
ls .git/rebase-merge
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_rebase_or_included_config_runs_nothing_in_the_persons_git() {
    let mut all = Vec::new();
    for mode in ["smart", "auto"] {
        let f = Fixture::new();
        // The person's repository includes a shared config it ships.
        f.write_ws(".gitconfig-shared", "[alias]\n\tst = status\n");
        git(&f.ws, &["config", "include.path", "../.gitconfig-shared"]);
        let marks = f.base.join("marks");
        std::fs::create_dir_all(&marks).unwrap();
        let plant = PLANT.replace("MARKS", &marks.display().to_string());
        let mock = MockModel::start(
            Format::Anthropic,
            Fixture::script(vec![
                crate::put("p1", "plant.sh", &plant),
                bash("p2", "sh plant.sh 2>&1"),
            ]),
        )
        .await;
        f.run(&mock, mode).await;
        if !f.ws.join(".git/rebase-merge").exists() {
            all.push(format!(
                "{mode}: no rebase was left stopped, nothing tested"
            ));
        }
        // The person's own git, outside the sandbox, later.
        for args in [&["status", "--short"][..], &["rebase", "--continue"]] {
            f.persons_git(&f.ws, args);
        }
        for mark in ["exec-ran", "include-ran"] {
            if marks.join(mark).exists() {
                all.push(format!("{mode}: the person's git ran the plant ({mark})"));
            }
        }
    }
    assert_contained("git state a command leaves", &all);
}

/// Fifth hostile review (G5, G7): the disarmed copy of a to-do list was
/// written through a link the command left under its name (cairn, as the
/// person, overwrote `~/.bashrc` with the command's lines), and a list
/// longer than the 1 MiB cairn reads hid its `exec` line past the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disarming_follows_no_link_and_a_list_too_long_to_read_is_moved() {
    let f = Fixture::new();
    let bashrc = f.home.join(".bashrc");
    let before = std::fs::read_to_string(&bashrc).unwrap();
    let marks = f.base.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let plant = format!(
        r#"echo two > two && git add two && git commit -qm two
GIT_SEQUENCE_EDITOR="sed -i '1i break'" git rebase -i HEAD~1
printf 'exec true\ntouch {m}/bashrc-ran\n' > .git/rebase-merge/git-rebase-todo
ln -s {bashrc} .git/rebase-merge/git-rebase-todo.cairn-disarmed
mkdir -p .git/sequencer
python3 -c "import sys; sys.stdout.write('pick 1 ' + 'a' * 1200000 + '\nexec touch {m}/long-ran\n')" > .git/sequencer/todo
"#,
        m = marks.display(),
        bashrc = bashrc.display()
    );
    let mock = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            crate::put("p1", "plant.sh", &plant),
            bash(
                "p2",
                "sh plant.sh 2>&1; ls -la .git/rebase-merge .git/sequencer",
            ),
        ]),
    )
    .await;
    f.run(&mock, "smart").await;
    let mut all = Vec::new();
    if std::fs::read_to_string(&bashrc).unwrap() != before {
        all.push("cairn wrote the to-do list through the link into ~/.bashrc".to_string());
    }
    if std::fs::read_to_string(f.ws.join(".git/sequencer/todo"))
        .is_ok_and(|t| t.contains("\nexec touch"))
    {
        all.push("a to-do list over 1 MiB kept its exec line".to_string());
    }
    assert_contained("disarming rebase state", &all);
}
