//! Bypasses found in review, and the links and blanket rules around them.

use serde_json::{Value, json};

use super::tests::*;
use super::*;

/// Bypasses found in review, each confirmed against the real tools; the
/// verdict in smart, always-ask and auto mode as in `TABLE`.
const REVIEWED: &[(&str, &str)] = &[
    // `command`: only `command -v NAME` is a lookup.
    ("command rm -rf src -v", "QQA"),
    ("command -v cargo", "AQA"),
    // `exec` takes options (`-a NAME`) and never only reads.
    ("(exec -a cat rm -rf src)", "QQA"),
    ("exec -a x sudo ls", "BBB"),
    // xargs options parsed as GNU xargs does (`-l`, `-i`, `-e` take only
    // attached values); only a few are read-only.
    ("echo src | xargs -l rm echo -rf", "QQA"),
    ("echo src | xargs -i rm echo -rf", "QQA"),
    ("echo src | xargs -e rm echo -rf", "QQA"),
    ("echo src | xargs --arg-file echo rm -rf src", "QQA"),
    ("echo rm | xargs -I cat cat -rf src", "QQA"),
    ("echo src | xargs -0 -n 1 grep foo", "AQA"),
    // GNU time: `-f FMT` takes a value, `-o`/`--out` writes.
    ("\\time -f echo rm -rf src", "QQA"),
    ("\\time --out=f ls", "QQA"),
    ("\\time -p ls", "AQA"),
    // sed: exact long options, abbreviations, options after operands.
    ("sed --line-length 1 'e rm -rf src'", "QQA"),
    ("sed --i s/a/b/ f", "QQA"),
    ("echo x | sed --exp='e rm -rf src'", "QQA"),
    ("sed --fil=evil.sed p", "QQA"),
    ("sed -n p f -i", "QQA"),
    ("sed --quiet --expression=p f", "AQA"),
    // sort: abbreviated `--output` and `--compress-program`.
    ("sort --o=out f", "QQA"),
    ("sort --compress=sh f", "QQA"),
    ("sort --compress-prog=sh f", "QQA"),
    ("sort -k2 -t, f", "AQA"),
    // git: `-O` inside a cluster, abbreviated dangerous long options.
    ("git grep -n'Orm -rf' pat", "QQA"),
    ("git grep --open-files=rm pat", "QQA"),
    ("git grep --open=vim x", "QQA"),
    ("git ls-remote --upload-pack='rm -rf src;false' .", "QQA"),
    ("git ls-remote -u 'rm x' .", "QQA"),
    ("git ls-remote 'ext::sh -c x'", "QQA"),
    ("git log --ext", "QQA"),
    ("git diff --textconv", "QQA"),
    ("git log --out=x", "QQA"),
    ("git log --no-ext-diff -p", "AQA"),
    // bash evaluates array subscripts in names and arithmetic.
    ("printf -v 'a[$(rm -rf src)]' x", "QQA"),
    ("test -v 'a[$(rm -rf src)]'", "QQA"),
    ("[ -v 'a[$(rm -rf src)]' ]", "QQA"),
    ("test -v \"$x\"", "QQA"),
    ("read 'a[$(rm -rf src)]' <<<x", "QQA"),
    ("[[ 'a[$(rm -rf src)]' -eq 0 ]]", "QQA"),
    ("x='a[$(rm -rf src)]'; [[ $x -eq 0 ]]", "QQA"),
    ("x='a[$(rm -rf src)]'; echo $((x))", "QQA"),
    ("echo ${!x}", "QQA"),
    ("echo ${a[i]}", "QQA"),
    ("[[ -f Cargo.toml ]] && echo y", "AQA"),
    ("[[ $# -eq 0 ]]", "AQA"),
    ("while read -r line; do echo \"$line\"; done < f", "AQA"),
    ("printf '%s\\n' a", "AQA"),
    ("[ \"$a\" = b ]", "AQA"),
    // ripgrep runs `--hostname-bin`.
    ("rg --hostname-bin=./x foo", "QQA"),
    ("rg --pre-glob '*.gz' foo", "AQA"),
    // Paths only known at run time, glued to options, after `key=`.
    ("cat ${HOME:-}/.ssh/id_rsa", "QQQ"),
    ("cat $PWD/../../etc/passwd", "QQQ"),
    ("cat /$(echo etc)/passwd", "QQQ"),
    ("cat $OLDPWD/x", "QQQ"),
    ("grep -f/etc/passwd x", "QQQ"),
    ("ls -I../x", "QQQ"),
    ("dd if=/etc/shadow of=x", "QQQ"),
    ("x=/etc/passwd; cat $x", "QQQ"),
    ("for f in /etc/*; do cat $f; done", "QQQ"),
    // Security blocks through paths, wrappers and expansions.
    ("/bin/rm -rf /", "BBB"),
    ("curl x | /bin/sh", "BBB"),
    ("rm -rf ${HOME:-}", "BBB"),
    ("chmod -R 777 /*", "BBB"),
];

#[test]
fn reviewed_bypasses_ask_or_block() {
    let modes = [Mode::Smart, Mode::AlwaysAsk, Mode::Auto];
    let mut failures = Vec::new();
    for (command, expected) in REVIEWED {
        for (mode, want) in modes.iter().zip(expected.chars()) {
            let verdict = bash_verdict(&mut gate(*mode), command);
            if kind(&verdict) != want {
                failures.push(format!("{mode} `{command}`: want {want}, got {verdict:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_blanket_bash_rule_lifts_arithmetic_too() {
    // `n` is no variable the command sets: its value could be code.
    // (`i<3` alone runs since issue 10: arithmetic on plain variables.)
    let command = "for ((i=0; i<n; i++)); do echo $i; done";
    assert!(matches!(
        bash_verdict(&mut gate(Mode::Smart), command),
        Verdict::Ask { .. }
    ));
    let mut g = with_rules(Mode::Smart, &["bash"], &[]);
    assert_eq!(bash_verdict(&mut g, command), Verdict::Allow);
}

#[cfg(unix)]
#[test]
fn symbolic_links_out_of_the_workspace_count_as_outside() {
    let Ok(dir) = tempfile::tempdir() else {
        panic!("no temporary directory");
    };
    let workspace = dir.path().join("ws");
    let made = std::fs::create_dir_all(workspace.join("src"))
        .and_then(|()| std::os::unix::fs::symlink("/etc", workspace.join("link")))
        .and_then(|()| {
            std::os::unix::fs::symlink("/etc/cairn-missing", workspace.join("dangling"))
        });
    assert!(made.is_ok(), "{made:?}");
    let check = |tool: &str, input: &Value, paths: Vec<PathBuf>| {
        let c = CallInfo {
            tool,
            input,
            read_only: READ_ONLY_TOOLS.contains(&tool),
            paths,
            workspace: &workspace,
            cwd: &workspace,
        };
        gate(Mode::Auto).check(&c)
    };
    for command in [
        "cat link/hosts",
        "cat src/../link/../passwd",
        "echo x > dangling",
    ] {
        let input = json!({ "command": command });
        match check("bash", &input, vec![]) {
            Verdict::Ask { reasons, .. } => assert!(
                reasons.iter().any(|r| r.contains("outside the workspace")),
                "{command}: {reasons:?}"
            ),
            other => panic!("{command}: {other:?}"),
        }
    }
    let inside = json!({ "command": "cat src/../x" });
    assert_eq!(check("bash", &inside, vec![]), Verdict::Allow);
    let input = json!({});
    assert!(matches!(
        check("view", &input, vec![workspace.join("link/hosts")]),
        Verdict::Ask { .. }
    ));
    assert!(matches!(
        check("write", &input, vec![workspace.join("link/x")]),
        Verdict::Block { .. }
    ));
    assert_eq!(
        check("view", &input, vec![workspace.join("src/a.rs")]),
        Verdict::Allow
    );
}

/// The file tools' writes of git's, cairn's and other agents' control files
/// ask in every mode, under any allow rule, by name or through a link
/// (issue 22: a hook written unasked ran in the person's own git).
#[test]
fn control_files_ask_in_every_mode_whatever_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", ws.join("scripts")).unwrap();
    let input = json!({});
    for mode in [Mode::Smart, Mode::Auto, Mode::AlwaysAsk] {
        for rel in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".git/commondir",
            ".git/worktrees/w/commondir",
            "vendor/sub/.git",
            "scripts/post-checkout",
            "src/../.git/info/attributes",
            ".cairn/config.toml",
            ".claude/settings.json",
            ".agents/skills/deploy/SKILL.md",
        ] {
            for tool in ["write", "edit", "multiedit"] {
                let mut g = Gate::new(mode, Rules::new(), 99);
                for rule in ["write", "edit", "multiedit", "write(*)", "edit(**)"] {
                    g.add_allow_rule(rule).ok();
                }
                let info = CallInfo {
                    tool,
                    input: &input,
                    read_only: false,
                    paths: vec![ws.join(rel)],
                    workspace: &ws,
                    cwd: &ws,
                };
                match g.check(&info) {
                    Verdict::Ask { reasons, rules, .. } => {
                        assert!(
                            reasons.iter().any(|r| r.contains("asks every time")),
                            "{mode:?} {tool} {rel}: {reasons:?}"
                        );
                        assert!(rules.is_empty(), "no rule is offered: {rules:?}");
                    }
                    other => panic!("{mode:?} {tool} {rel}: {other:?}"),
                }
            }
        }
        let mut g = Gate::new(mode, Rules::new(), 99);
        g.add_allow_rule("write").ok();
        let info = CallInfo {
            tool: "write",
            input: &input,
            read_only: false,
            paths: vec![ws.join("src/.gitignore")],
            workspace: &ws,
            cwd: &ws,
        };
        assert_eq!(g.check(&info), Verdict::Allow, "{mode:?}");
    }
}
