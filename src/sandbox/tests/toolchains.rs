//! Real toolchains keep working inside the sandbox, in each layer: cargo
//! with a vendored dependency and no network, npm, pytest, git, make.
//! Each runs as the model would run it: `bash -c` in the workspace, with
//! the fixture's (empty) home and the person's toolchains on `PATH`.

use super::*;

fn have(program: &str) -> bool {
    let found = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: {program} is not installed");
    }
    found
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The person's real home, where rustup and cargo live, with the fixture
/// workspace: the toolchains come from the allow-list, nothing else.
fn real_home_policy(f: &Fixture, layer: Layer) -> (Policy, PathBuf) {
    let home = crate::paths::home_dir().expect("HOME");
    let sandbox = Sandbox::with_dirs(&Default::default(), false, Some(home.clone()), Vec::new());
    (sandbox.policy_in(&f.ws, layer).unwrap(), home)
}

#[test]
fn cargo_builds_and_tests_a_crate_with_a_vendored_dependency_offline() {
    if !enforced() || !have("cargo") {
        return;
    }
    for layer in layers() {
        let f = fixture();
        write(
            &f.ws,
            &[
                (
                    "Cargo.toml",
                    "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                     [dependencies]\ngreet = \"0.1\"\n",
                ),
                (
                    "src/lib.rs",
                    "pub fn hello() -> String { greet::greet(\"sandbox\") }\n\
                     #[test]\nfn says_hello() { assert_eq!(hello(), \"hello, sandbox\"); }\n",
                ),
                (
                    ".cargo/config.toml",
                    "[source.crates-io]\nreplace-with = \"vendored\"\n\n\
                     [source.vendored]\ndirectory = \"vendor\"\n",
                ),
                (
                    "vendor/greet/Cargo.toml",
                    "[package]\nname = \"greet\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
                ),
                (
                    "vendor/greet/src/lib.rs",
                    "pub fn greet(who: &str) -> String { format!(\"hello, {who}\") }\n",
                ),
                ("vendor/greet/.cargo-checksum.json", "{\"files\":{}}"),
            ],
        );
        let (p, home) = real_home_policy(&f, layer);
        let (code, out) = run_in(
            &p,
            &f.ws,
            &home,
            "cargo build --offline -q && cargo test --offline -q 2>&1",
        );
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("1 passed"), "{layer:?}: {out}");
        assert!(f.ws.join("target").is_dir());
    }
}

#[test]
fn npm_test_runs() {
    if !enforced() || !have("npm") {
        return;
    }
    for layer in layers() {
        let f = fixture();
        write(
            &f.ws,
            &[
                (
                    "package.json",
                    "{\"name\":\"tiny\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node test.js\"}}",
                ),
                (
                    "test.js",
                    "const assert = require('assert');\nassert.strictEqual(1 + 1, 2);\n\
                     console.log('tests passed');\n",
                ),
            ],
        );
        let (p, home) = real_home_policy(&f, layer);
        let (code, out) = run_in(&p, &f.ws, &home, "npm test 2>&1");
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("tests passed"), "{out}");
    }
}

/// A python that has pytest, if any.
fn pytest_python() -> Option<&'static str> {
    let found = ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        std::process::Command::new(py)
            .args(["-m", "pytest", "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        eprintln!("skipped: no python3 here has pytest (`.ci/run` installs python3-pytest)");
    }
    found
}

#[test]
fn pytest_runs() {
    if !enforced() {
        return;
    }
    let Some(python) = pytest_python() else {
        return;
    };
    for layer in layers() {
        let f = fixture();
        write(
            &f.ws,
            &[
                ("calc.py", "def add(a, b):\n    return a + b\n"),
                (
                    "test_calc.py",
                    "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
                ),
            ],
        );
        let (p, home) = real_home_policy(&f, layer);
        let (code, out) = run_in(&p, &f.ws, &home, &format!("{python} -m pytest -q 2>&1"));
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("1 passed"), "{out}");
    }
}

#[test]
fn git_add_commit_branch_and_stash_work() {
    if !enforced() || !have("git") {
        return;
    }
    for layer in layers() {
        let f = fixture();
        // The person's repository, made before cairn starts.
        let made = std::process::Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&f.ws)
            .status()
            .unwrap();
        assert!(made.success());
        let p = policy(&f, false, layer);
        let script = "set -e; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
                      GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; \
                      git add main.txt && git commit -qm first && git checkout -qb feature && \
                      echo change >> main.txt && git stash -q && git stash list && \
                      git log --oneline && git status --short";
        let (code, out) = run(&p, &f, script);
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("stash@{0}") && out.contains("first"), "{out}");
        assert_eq!(
            std::fs::read_to_string(f.ws.join(".git/HEAD")).unwrap(),
            "ref: refs/heads/feature\n"
        );
    }
}

#[test]
fn make_builds_with_a_compiler() {
    if !enforced() || !have("make") || !have("cc") {
        return;
    }
    for layer in layers() {
        let f = fixture();
        write(
            &f.ws,
            &[
                (
                    "Makefile",
                    "hello: hello.c\n\tcc -o hello hello.c\n\ncheck: hello\n\t./hello\n",
                ),
                (
                    "hello.c",
                    "#include <stdio.h>\nint main(void) { puts(\"made it\"); return 0; }\n",
                ),
            ],
        );
        let p = policy(&f, false, layer);
        let (code, out) = run(&p, &f, "make -s check 2>&1");
        assert_eq!(code, 0, "{layer:?}: {out}");
        assert!(out.contains("made it"), "{out}");
    }
}
