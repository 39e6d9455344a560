use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;
use crate::permission::suggest::suggest_rules;

fn rule(text: &str) -> Rule {
    match Rule::parse(text) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

fn cmd(text: &str) -> SimpleCommand {
    shell::parse(text)
        .commands
        .into_iter()
        .next()
        .unwrap_or_default()
}

fn call<'a>(tool: &'a str, input: &'a Value, paths: Vec<PathBuf>) -> CallInfo<'a> {
    CallInfo {
        tool,
        input,
        read_only: false,
        paths,
        workspace: Path::new("/ws"),
        cwd: Path::new("/ws"),
    }
}

#[test]
fn parse_errors_are_clear() {
    let cases = [
        ("bash(ls", "must end with `)`"),
        ("(ls)", "tool name is missing"),
        ("bsh(ls)", "unknown tool `bsh`"),
        ("bash()", "pattern in `()` is empty"),
        ("job_kill(3)", "`job_kill` takes no pattern"),
        ("fetch(https://docs.rs/x)", "write just the host"),
        ("edit(src/[)", "bad path glob"),
        ("mcp__a*b", "only MCP tool names may end in `*`"),
        ("ba*sh", "unknown tool"),
    ];
    for (text, message) in cases {
        match Rule::parse(text) {
            Ok(_) => panic!("`{text}` should not parse"),
            Err(e) => {
                let shown = e.to_string();
                assert!(shown.contains(message), "{text}: {shown}");
                assert!(shown.contains(text.trim()), "{shown}");
            }
        }
    }
}

#[test]
fn valid_rules_parse() {
    for text in [
        "bash",
        "bash(cargo test*)",
        "edit(src/**)",
        "write(notes.txt)",
        "view(/etc/**)",
        "fetch(docs.rs)",
        "mcp__github__create_issue",
        "mcp__github__*",
        "todos",
        " bash( git log* ) ",
    ] {
        assert!(Rule::parse(text).is_ok(), "{text}");
    }
}

#[test]
fn command_patterns_keep_the_last_word_whole() {
    assert!(command_matches("cargo test*", "cargo test"));
    assert!(command_matches("cargo test*", "cargo test --lib foo"));
    assert!(!command_matches("cargo test*", "cargo testify"));
    assert!(!command_matches("cargo test*", "cargo build"));
    assert!(command_matches("cargo test", "cargo test"));
    assert!(!command_matches("cargo test", "cargo test --lib"));
    assert!(command_matches("npm run *", "npm run build"));
    assert!(!command_matches("npm run *", "npm run"));
    assert!(command_matches("git * --oneline", "git log --oneline"));
    assert!(command_matches("*", "anything at all"));
    assert!(!command_matches("a*a", "a"));
}

#[test]
fn bash_rules_cover_single_commands() {
    let r = rule("bash(cargo test*)");
    assert!(r.covers_command(&cmd("cargo test --lib")));
    assert!(r.covers_command(&cmd("LC_ALL=C cargo test")));
    assert!(!r.covers_command(&cmd("LD_PRELOAD=./x.so cargo test")));
    assert!(rule("bash(FOO=1 cargo test*)").covers_command(&cmd("FOO=1 cargo test --lib")));
    assert!(!r.covers_command(&cmd("cargo testify")));
    assert!(!r.covers_command(&cmd("rm x")));
    assert!(rule("bash").covers_command(&cmd("rm x")));
    assert!(!rule("edit").covers_command(&cmd("rm x")));
}

#[test]
fn path_rules_glob_workspace_relative_paths() {
    let r = rule("edit(src/**)");
    let ws = Path::new("/ws");
    assert!(r.covers_path(Path::new("/ws/src/main.rs"), ws, false));
    assert!(r.covers_path(Path::new("/ws/src/a/b/c.rs"), ws, false));
    assert!(!r.covers_path(Path::new("/ws/tests/a.rs"), ws, false));
    assert!(!r.covers_path(Path::new("/other/src/a.rs"), ws, false));
    let star = rule("edit(src/*.rs)");
    assert!(star.covers_path(Path::new("/ws/src/a.rs"), ws, false));
    assert!(
        !star.covers_path(Path::new("/ws/src/x/a.rs"), ws, false),
        "`*` stays in one directory"
    );
    let abs = rule("view(/etc/**)");
    assert!(abs.covers_path(Path::new("/etc/hosts"), ws, true));
    assert!(!abs.covers_path(Path::new("/etc/hosts"), ws, false));
}

#[test]
fn allow_rules_match_calls() {
    let rules = Rules::parse(
        &[
            "edit(src/**)",
            "fetch(docs.rs)",
            "mcp__gh__*",
            "write(notes.txt)",
        ],
        &[] as &[&str],
    );
    let rules = rules.unwrap_or_default();
    let input = json!({});
    assert!(
        rules
            .allowed_by(&call("edit", &input, vec!["/ws/src/a.rs".into()]))
            .is_some()
    );
    assert!(
        rules
            .allowed_by(&call("multiedit", &input, vec!["/ws/src/a.rs".into()]))
            .is_some()
    );
    assert!(
        rules
            .allowed_by(&call("edit", &input, vec!["/ws/README.md".into()]))
            .is_none()
    );
    assert!(
        rules
            .allowed_by(&call("write", &input, vec!["/ws/src/a.rs".into()]))
            .is_none()
    );
    assert!(
        rules
            .allowed_by(&call("write", &input, vec!["/ws/notes.txt".into()]))
            .is_some()
    );
    assert!(rules.allowed_by(&call("edit", &input, vec![])).is_none());
    let docs = json!({"url": "https://docs.rs/globset"});
    let sub = json!({"url": "https://api.docs.rs/x"});
    let other = json!({"url": "https://evildocs.rs/x"});
    assert!(rules.allowed_by(&call("fetch", &docs, vec![])).is_some());
    assert!(
        rules.allowed_by(&call("fetch", &sub, vec![])).is_some(),
        "subdomains count"
    );
    assert!(rules.allowed_by(&call("fetch", &other, vec![])).is_none());
    assert!(
        rules
            .allowed_by(&call("mcp__gh__create_issue", &input, vec![]))
            .is_some()
    );
    assert!(
        rules
            .allowed_by(&call("mcp__ghost__x", &input, vec![]))
            .is_none()
    );
    assert!(rules.allowed_by(&call("bash", &input, vec![])).is_none());
}

#[test]
fn deny_rules_match_any_command_through_wrappers() {
    let rules = Rules::parse(&[] as &[&str], &["bash(rm*)", "view(.env)"]).unwrap_or_default();
    for command in [
        "rm x",
        "ls && rm x",
        "echo $(rm x)",
        "env FOO=1 rm x",
        "xargs rm",
        "bash -c 'rm x'",
        "timeout 5 rm x",
    ] {
        let input = json!({ "command": command });
        assert!(
            rules
                .denied_by(&call("bash", &input, vec![]), None)
                .is_some(),
            "{command}"
        );
    }
    for command in ["ls", "echo rm", "rmdir x"] {
        let input = json!({ "command": command });
        assert!(
            rules
                .denied_by(&call("bash", &input, vec![]), None)
                .is_none(),
            "{command}"
        );
    }
    let input = json!({});
    assert!(
        rules
            .denied_by(&call("view", &input, vec!["/ws/.env".into()]), None)
            .is_some()
    );
    assert!(
        rules
            .denied_by(&call("grep", &input, vec!["/ws/.env".into()]), None)
            .is_some()
    );
    assert!(
        rules
            .denied_by(&call("view", &input, vec!["/ws/a.rs".into()]), None)
            .is_none()
    );
}

#[test]
fn adding_a_rule_twice_keeps_one() {
    let mut rules = Rules::new();
    rules.add_allow(rule("bash(ls*)"));
    rules.add_allow(rule("bash(ls*)"));
    assert_eq!(rules.allow().len(), 1);
}

fn suggest(tool: &str, input: &Value, paths: Vec<PathBuf>) -> Vec<String> {
    let c = call(tool, input, paths);
    let analysis = input
        .get("command")
        .and_then(|v| v.as_str())
        .map(shell::parse);
    suggest_rules(&c, analysis.as_ref())
}

#[test]
fn destructive_commands_are_offered_only_as_themselves() {
    let s = |command: &str| suggest("bash", &json!({ "command": command }), vec![]);
    assert_eq!(
        s("cargo build && git clean -fdx"),
        ["bash(cargo build*)", "bash(git clean -fdx)"]
    );
    assert_eq!(
        s("git reset --hard HEAD~1"),
        ["bash(git reset --hard HEAD~1)"]
    );
    assert_eq!(s("rm -rf target"), ["bash(rm -rf target)"]);
    assert_eq!(s("git commit -m x"), ["bash(git commit*)"]);
}

#[test]
fn suggestions_for_bash_are_narrow() {
    let s = |command: &str| suggest("bash", &json!({ "command": command }), vec![]);
    assert_eq!(s("cargo test --lib"), ["bash(cargo test*)"]);
    assert_eq!(s("FOO=1 cargo build"), ["bash(FOO=1 cargo build*)"]);
    assert_eq!(s("RUST_BACKTRACE=1 cargo test"), ["bash(cargo test*)"]);
    assert_eq!(
        s("cargo build && cargo test"),
        ["bash(cargo build*)", "bash(cargo test*)"]
    );
    assert_eq!(s("cargo test 2>&1 | tail"), ["bash(cargo test*)"]);
    assert_eq!(s("npm run build -- --prod"), ["bash(npm run build*)"]);
    // A tool with subcommands but none given: `bash(make*)` would also
    // cover `make -f other.mk`, an option before the subcommand.
    assert_eq!(s("make"), ["bash(make)"]);
    assert_eq!(s("make test"), ["bash(make test*)"]);
    assert_eq!(s("git commit -m wip"), ["bash(git commit*)"]);
    assert_eq!(s("rm -f a.o"), ["bash(rm -f a.o)"]);
    assert_eq!(
        s("cargo test > log.txt"),
        ["bash(cargo test*)", "write(log.txt)"]
    );
    assert!(
        s("rm -f *.o").is_empty(),
        "a glob in an exact rule would widen it"
    );
    assert!(s("$CMD x").is_empty());
    assert!(s("echo 'unterminated").is_empty());
    assert!(s("python -c \"$(cat x)\"").is_empty());
    for command in ["cargo test", "rm -rf build", "bash -c ls", "ls | sh"] {
        for r in s(command) {
            assert_ne!(r, "bash(*)");
            assert_ne!(r, "bash");
        }
    }
}

#[test]
fn suggestions_for_files_fetch_and_mcp() {
    let input = json!({});
    assert_eq!(
        suggest("edit", &input, vec!["/ws/src/main.rs".into()]),
        ["edit(src/main.rs)", "edit(src/**)"]
    );
    assert_eq!(
        suggest("multiedit", &input, vec!["/ws/src/a/b.rs".into()]),
        ["edit(src/a/b.rs)", "edit(src/a/**)"]
    );
    assert_eq!(
        suggest("write", &input, vec!["/ws/notes.txt".into()]),
        ["write(notes.txt)"]
    );
    assert!(suggest("edit", &input, vec!["/etc/hosts".into()]).is_empty());
    assert_eq!(
        suggest("fetch", &json!({"url": "https://Docs.rs/x?y"}), vec![]),
        ["fetch(docs.rs)"]
    );
    assert_eq!(
        suggest("mcp__gh__issue", &input, vec![]),
        ["mcp__gh__issue"]
    );
    assert!(suggest("job_kill", &input, vec![]).is_empty());
}

#[test]
fn suggestions_never_prefix_wrappers_or_leading_options() {
    let s = |command: &str| suggest("bash", &json!({ "command": command }), vec![]);
    for (command, rule) in [
        ("cargo +nightly test", "bash(cargo +nightly test)"),
        ("docker -H h run x", "bash(docker -H h run x)"),
        ("make -j4", "bash(make -j4)"),
        ("cargo", "bash(cargo)"),
        ("ksh x.sh", "bash(ksh x.sh)"),
        ("stdbuf -oL x", "bash(stdbuf -oL x)"),
        ("ionice x", "bash(ionice x)"),
        ("python3.12 x", "bash(python3.12 x)"),
        ("/usr/bin/python3 x.py", "bash(/usr/bin/python3 x.py)"),
        // (awk programs that only print are read-only since issue 10)
        ("mawk '{system(x)}' f", "bash(mawk {system(x)} f)"),
        ("sort --o=out f", "bash(sort --o=out f)"),
        (
            "rg --hostname-bin=./x foo",
            "bash(rg --hostname-bin=./x foo)",
        ),
    ] {
        assert_eq!(s(command), [rule], "{command}");
    }
    assert_eq!(s("cargo test --lib"), ["bash(cargo test*)"]);
}

#[test]
fn deny_rules_see_through_shells_paths_and_builtins() {
    let rules = Rules::parse(&[] as &[&str], &["bash(rm*)"]).unwrap_or_default();
    let denied = |command: &str| {
        let input = json!({ "command": command });
        rules
            .denied_by(&call("bash", &input, vec![]), None)
            .is_some()
    };
    for command in [
        "eval 'rm x'",
        "eval rm x",
        "bash -ec 'rm x'",
        "sh -c 'rm x'",
        "bash -o pipefail -c 'rm x'",
        "/bin/rm x",
        "command rm x",
        "exec -a x rm y",
        "find . -exec rm {} +",
        "env -S 'rm x'",
        "busybox rm x",
        "sudo /bin/rm x",
    ] {
        assert!(denied(command), "{command}");
    }
    for command in ["ls", "echo rm", "command -v rm", "find . -name rm"] {
        assert!(!denied(command), "{command}");
    }
}

#[test]
fn deny_rules_match_git_subcommands_after_global_options() {
    let rules = Rules::parse(&[] as &[&str], &["bash(git push*)", "bash(rm*)"]).unwrap_or_default();
    let denied = |command: &str| {
        let input = json!({ "command": command });
        rules
            .denied_by(&call("bash", &input, vec![]), None)
            .is_some()
    };
    for command in [
        "git -C . push",
        "git -c k=v push",
        "git --no-pager push",
        "git --git-dir=.git push",
        "git --git-dir .git --work-tree=. -P push -f",
        "git --namespace x --literal-pathspecs push",
        "setsid flock /tmp/l git -C src push",
        "git -c alias.x='!rm -rf y' x",
        "$'\\x72\\x6d' x",
        "xargs rm <<< x",
        "GIT_EXTERNAL_DIFF='rm x' git diff",
        "tar --to-command='rm x' -xf a.tar",
    ] {
        assert!(denied(command), "{command}");
    }
    for command in [
        "git -C . status",
        "git log --grep push",
        "git -c push.default=x status",
    ] {
        assert!(!denied(command), "{command}");
    }
}

#[test]
fn only_a_bare_allow_rule_without_a_deny_allows_a_tool_outright() {
    let rules = |allow: &[&str], deny: &[&str]| Rules::parse(allow, deny).unwrap();
    assert!(rules(&["web_search"], &[]).allows_outright("web_search"));
    assert!(!rules(&[], &[]).allows_outright("web_search"));
    assert!(!rules(&["fetch"], &[]).allows_outright("web_search"));
    assert!(!rules(&["web_search"], &["web_search"]).allows_outright("web_search"));
    assert!(!rules(&["fetch(docs.rs)"], &[]).allows_outright("fetch"));
}
