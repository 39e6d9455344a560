//! The modes with an enforced sandbox: smart and auto ask only for what
//! the sandbox would refuse; approvals grant exactly that for one run.

use serde_json::json;

use super::*;
use crate::sandbox::{Facts, Grant};

const WS: &str = "/tmp/cairn-gate-sandbox-ws";

const ENFORCED: Facts = Facts {
    enforced: true,
    network: false,
    workspace_writable: true,
    whole: true,
};

fn gate(mode: Mode, facts: Facts, rules: Rules) -> Gate {
    Gate::new(mode, rules, 100)
        .with_home(Some(PathBuf::from("/home/tester")))
        .with_sandbox(facts)
}

fn judge(g: &mut Gate, command: &str) -> (Verdict, Grant, Grant) {
    let input = json!({ "command": command });
    let info = CallInfo {
        tool: "bash",
        input: &input,
        read_only: false,
        paths: Vec::new(),
        workspace: Path::new(WS),
        cwd: Path::new(WS),
    };
    let verdict = g.check(&info);
    (verdict, g.grant_for(&info, false), g.grant_for(&info, true))
}

fn asks(v: &Verdict) -> Option<&Vec<String>> {
    match v {
        Verdict::Ask { reasons, .. } => Some(reasons),
        _ => None,
    }
}

#[test]
fn smart_runs_workspace_writes_unasked_and_asks_for_the_network() {
    let mut g = gate(Mode::Smart, ENFORCED, Rules::new());
    for command in [
        "touch new.txt",
        "cargo build",
        "cargo fmt",
        "echo x > notes.txt",
        "sed -i s/a/b/ f",
    ] {
        let (v, grant, _) = judge(&mut g, command);
        assert_eq!(v, Verdict::Allow, "{command}");
        assert!(grant.is_empty(), "{command}");
    }
    let (v, unapproved, approved) = judge(&mut g, "curl -s https://example.com -o page.html");
    let reasons = asks(&v).expect("curl asks");
    assert!(reasons.iter().any(|r| r.contains("network")), "{reasons:?}");
    assert!(!unapproved.network);
    assert_eq!(
        approved,
        Grant {
            network: true,
            write: Vec::new()
        }
    );
    // Cautions and paths outside still ask; approving grants that write.
    let (v, _, _) = judge(&mut g, "rm -rf src");
    assert!(asks(&v).is_some());
    let (v, _, approved) = judge(&mut g, "cp out.txt /home/tester/backup.txt");
    assert!(asks(&v).is_some());
    assert_eq!(approved.write, [PathBuf::from("/home/tester/backup.txt")]);
    assert!(!approved.network);
}

#[test]
fn without_an_enforced_sandbox_smart_asks_as_before() {
    let mut g = gate(Mode::Smart, Facts::NONE, Rules::new());
    let (v, _, approved) = judge(&mut g, "touch new.txt");
    assert!(asks(&v).is_some());
    assert!(approved.is_empty(), "nothing to grant without a sandbox");
    let (v, _, _) = judge(&mut g, "ls");
    assert_eq!(v, Verdict::Allow);
}

#[test]
fn auto_asks_only_for_what_the_sandbox_refuses() {
    let mut g = gate(Mode::Auto, ENFORCED, Rules::new());
    for command in [
        "touch x",
        "rm -rf build",
        "setsid bash -c 'make all'",
        "cat ~/.bashrc",
    ] {
        assert_eq!(judge(&mut g, command).0, Verdict::Allow, "{command}");
    }
    assert!(asks(&judge(&mut g, "git push origin topic").0).is_some());
    assert!(asks(&judge(&mut g, "cp x /home/tester/y").0).is_some());
    // The security inspector's blocks stay in force.
    assert!(matches!(judge(&mut g, "rm -rf ~").0, Verdict::Block { .. }));
    assert!(asks(&judge(&mut g, "npm install").0).is_some());
    // With the network on, those run too.
    let mut open = gate(
        Mode::Auto,
        Facts {
            network: true,
            ..ENFORCED
        },
        Rules::new(),
    );
    assert_eq!(judge(&mut open, "npm install").0, Verdict::Allow);
}

#[test]
fn always_ask_still_asks_and_approval_grants_what_is_needed() {
    let mut g = gate(Mode::AlwaysAsk, ENFORCED, Rules::new());
    assert!(asks(&judge(&mut g, "ls").0).is_some());
    let (_, _, approved) = judge(&mut g, "git fetch");
    assert!(approved.network);
    let (_, _, approved) = judge(&mut g, "ls");
    assert!(approved.is_empty());
}

#[test]
fn a_stored_rule_runs_the_command_with_the_network() {
    let rules = Rules::parse(&["bash(curl*)".to_string()], &Vec::<String>::new()).unwrap();
    let mut g = gate(Mode::Smart, ENFORCED, rules);
    let (v, grant, _) = judge(&mut g, "curl -s https://example.com");
    assert_eq!(v, Verdict::Allow);
    assert!(grant.network);
    let (v, grant, _) = judge(&mut g, "wget https://example.com");
    assert!(asks(&v).is_some());
    assert!(!grant.network);
}

#[test]
fn a_read_only_sandbox_asks_before_workspace_writes() {
    let facts = Facts {
        workspace_writable: false,
        ..ENFORCED
    };
    let mut g = gate(Mode::Smart, facts, Rules::new());
    assert_eq!(judge(&mut g, "cat README.md").0, Verdict::Allow);
    let (v, _, approved) = judge(&mut g, "touch x");
    let reasons = asks(&v).expect("asks");
    assert!(reasons[0].contains("read-only sandbox"), "{reasons:?}");
    assert_eq!(approved.write, [PathBuf::from(WS)]);
}

/// A scripted session of typical work: the dialogs smart mode raises
/// without the sandbox and with it. Run with `cargo test --lib
/// dialogs_in_a_typical_session -- --nocapture` to see the figures.
#[test]
fn dialogs_in_a_typical_session() {
    // (tool, command or path, asks with the sandbox)
    let session: &[(&str, &str, bool)] = &[
        ("bash", "ls", false),
        ("bash", "cat Cargo.toml", false),
        ("bash", "cargo build", false),
        ("bash", "cargo test", false),
        ("bash", "cargo fmt --all", false),
        ("bash", "cargo clippy --all-targets -- -D warnings", false),
        ("edit", "src/lib.rs", true),
        ("bash", "cargo test -- parser", false),
        ("bash", "cargo test 2>&1 | tail -20", false),
        ("bash", "git status", false),
        ("bash", "git diff", false),
        ("bash", "mkdir -p tests/fixtures", false),
        ("bash", "touch tests/fixtures/empty.txt", false),
        (
            "bash",
            "python3 scripts/gen.py > tests/fixtures/data.json",
            false,
        ),
        ("bash", "npm test", false),
        ("bash", "make", false),
        ("bash", "rm build/output.o", false),
        ("write", "notes.md", true),
        ("bash", "git add -A", false),
        ("bash", "git commit -m 'parser: handle empty input'", false),
        ("bash", "rm -rf target/debug/incremental", true),
        ("bash", "cargo add serde", true),
        ("bash", "git push origin topic", true),
    ];
    let count = |facts: Facts| -> (usize, Vec<&str>) {
        let mut g = gate(Mode::Smart, facts, Rules::new());
        let mut asked = Vec::new();
        for (tool, what, _) in session {
            let input = if *tool == "bash" {
                json!({ "command": what })
            } else {
                json!({ "file_path": what, "content": "x" })
            };
            let paths = if *tool == "bash" {
                Vec::new()
            } else {
                vec![Path::new(WS).join(what)]
            };
            let info = CallInfo {
                tool,
                input: &input,
                read_only: false,
                paths,
                workspace: Path::new(WS),
                cwd: Path::new(WS),
            };
            g.reset_repetition();
            if asks(&g.check(&info)).is_some() {
                asked.push(*what);
            }
        }
        (asked.len(), asked)
    };
    let (before, asked_before) = count(Facts::NONE);
    println!("asked without the sandbox: {asked_before:?}");
    let (after, asked) = count(ENFORCED);
    println!(
        "typical session of {} calls in smart mode: {before} dialogs without the sandbox, {after} with it",
        session.len()
    );
    let expected: Vec<&str> = session.iter().filter(|s| s.2).map(|s| s.1).collect();
    assert_eq!(asked, expected);
    assert!(after < before, "{after} vs {before}");
}

#[test]
fn a_partial_sandbox_is_not_trusted_as_a_whole_one() {
    let partial = Facts {
        whole: false,
        ..ENFORCED
    };
    for mode in [Mode::Smart, Mode::Auto] {
        let mut whole = gate(mode, ENFORCED, Rules::new());
        assert_eq!(judge(&mut whole, "python3 build.py").0, Verdict::Allow);
        let mut g = gate(mode, partial, Rules::new());
        if mode == Mode::Smart {
            assert!(asks(&judge(&mut g, "python3 build.py").0).is_some());
        }
        assert_eq!(judge(&mut g, "cat README.md").0, Verdict::Allow);
        // What it runs still gets what an approval grants.
        let (_, _, approved) = judge(&mut g, "curl -s https://example.com");
        assert!(approved.network);
    }
}
