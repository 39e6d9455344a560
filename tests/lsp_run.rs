//! Checked edits through `cairn run`: a real language server (pyright,
//! installed into tests/lsp_servers by `.ci/run`) checks each applied edit,
//! and the model's result names the errors the edit introduced and only
//! those. Skips, saying why, when pyright is not installed.

use crate::{mock_model, test_home};
use std::path::PathBuf;

use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::{TestHome, path_with};

/// tests/lsp_servers/node_modules/.bin, when pyright is installed there.
pub(crate) fn servers_bin() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_servers/node_modules/.bin");
    if bin.join("pyright-langserver").exists() {
        Some(bin)
    } else {
        eprintln!(
            "skipped: pyright is not installed in tests/lsp_servers \
             (`npm ci` there, as .ci/run does)"
        );
        None
    }
}

/// tests/lsp_servers/node_modules/.bin, when typescript-language-server
/// (and the TypeScript it drives) is installed there.
pub(crate) fn typescript_bin() -> Option<PathBuf> {
    let bin = servers_bin()?;
    if bin.join("typescript-language-server").exists() && bin.join("tsserver").exists() {
        Some(bin)
    } else {
        eprintln!(
            "skipped: typescript-language-server is not installed in tests/lsp_servers \
             (`npm ci` there, as .ci/run does)"
        );
        None
    }
}

/// A small TypeScript project: `greet` defined in a.ts, used twice in
/// b.ts, named once in a comment (which a rename leaves alone).
pub(crate) fn typescript_project(home: &TestHome) {
    home.write(
        "tsconfig.json",
        r#"{"compilerOptions": {"strict": true, "module": "commonjs"}, "include": ["*.ts"]}"#,
    );
    home.write(
        "a.ts",
        "export function greet(name: string): string {\n  return \"hello \" + name;\n}\n",
    );
    home.write(
        "b.ts",
        "import { greet } from \"./a\";\n\nconsole.log(greet(\"ann\"));\n\n\
         // greet stays in this comment\n\nconsole.log(greet(\"bob\"));\n",
    );
}

pub(crate) fn rename_call() -> Reply {
    Reply::tool(
        "r1",
        "lsp",
        json!({"operation": "rename", "file_path": "a.ts", "line": 1, "symbol": "greet", "new_name": "welcome"}),
    )
}

const OLD: &str = "import os\n\nprint(missing_one)\n\n\ndef f():\n    return 1\n";

fn edit_script() -> Vec<Reply> {
    vec![
        Reply::tool("v1", "view", json!({"file_path": "app.py"})),
        Reply::tool(
            "e1",
            "edit",
            json!({"file_path": "app.py", "old_string": "return 1", "new_string": "return undefined_two"}),
        ),
        Reply::text("Edited."),
        Reply::text("Title"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_adds_an_undefined_name_is_answered_with_that_error_only() {
    let Some(bin) = servers_bin() else { return };
    let home = TestHome::new();
    home.write("app.py", OLD);
    let mock = MockModel::start(Format::Anthropic, edit_script()).await;
    home.run_ok(
        &mock.url(),
        &[("PATH", path_with(&bin).as_ref())],
        &["run", "--mode", "auto", "make f return something"],
    )
    .await;
    assert!(
        std::fs::read_to_string(home.path("app.py"))
            .unwrap()
            .contains("undefined_two"),
        "the edit is applied"
    );
    let requests = mock.requests();
    let results = mock_model::tool_result_texts(&requests[2]);
    let edit = results.last().expect("the edit's result");
    assert!(edit.contains("1 new error"), "{edit}");
    assert!(
        edit.contains("line 7") && edit.contains("\"undefined_two\" is not defined"),
        "{edit}"
    );
    assert!(
        !edit.contains("missing_one"),
        "a pre-existing error is not repeated: {edit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_leaves_edits_working_and_says_so() {
    let home = TestHome::new();
    home.write("app.py", OLD);
    let config = home.home.path().join("config/cairn/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        "[lsp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo licence expired >&2; exit 3\"]\n\
         filetypes = [\"py\"]\n[lsp.pyright]\ndisabled = true\n[lsp.basedpyright]\ndisabled = true\n\
         [lsp.pylsp]\ndisabled = true\n",
    )
    .unwrap();
    let mock = MockModel::start(Format::Anthropic, edit_script()).await;
    home.run_ok(
        &mock.url(),
        &[],
        &["run", "--mode", "auto", "make f return something"],
    )
    .await;
    assert!(
        std::fs::read_to_string(home.path("app.py"))
            .unwrap()
            .contains("undefined_two")
    );
    let results = mock_model::tool_result_texts(&mock.requests()[2]);
    let edit = results.last().unwrap();
    assert!(edit.starts_with("Edited app.py"), "{edit}");
    assert!(
        edit.contains("Not checked by broken") && edit.contains("licence expired"),
        "{edit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lsp_tool_finds_definitions_references_and_diagnostics() {
    let Some(bin) = servers_bin() else { return };
    let home = TestHome::new();
    home.write("lib.py", "def helper(x):\n    return x * 2\n");
    home.write(
        "app.py",
        "from lib import helper\n\nprint(helper(1))\nprint(helper(2))\nprint(nope)\n",
    );
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "l1",
                "lsp",
                json!({"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "helper"}),
            ),
            Reply::tool(
                "l2",
                "lsp",
                json!({"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "helper"}),
            ),
            Reply::tool("l3", "lsp", json!({"operation": "diagnostics", "file_path": "app.py"})),
            Reply::tool("l4", "lsp", json!({"operation": "document_symbols", "file_path": "lib.py"})),
            Reply::text("Found."),
            Reply::text("Title"),
        ],
    )
    .await;
    home.run_ok(
        &mock.url(),
        &[("PATH", path_with(&bin).as_ref())],
        &["run", "where is helper defined?"],
    )
    .await;
    let results = mock_model::tool_result_texts(&mock.requests()[4]);
    assert!(
        results[0].contains("lib.py:1: def helper(x):"),
        "{results:?}"
    );
    assert!(
        results[1].contains("app.py:3:")
            && results[1].contains("app.py:4:")
            && results[1].contains("lib.py:1:"),
        "{results:?}"
    );
    assert!(
        results[2].contains("app.py:5: error: \"nope\" is not defined"),
        "{results:?}"
    );
    assert!(
        results[3].contains("function helper  lib.py:1"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_breaks_a_caller_in_a_viewed_file_is_told_with_it() {
    let Some(bin) = servers_bin() else { return };
    let home = TestHome::new();
    home.write("lib.py", "def helper(x):\n    return x * 2\n");
    home.write(
        "app.py",
        "from lib import helper\n\nprint(helper(1))\nprint(nope)\n",
    );
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "app.py"})),
            Reply::tool("v2", "view", json!({"file_path": "lib.py"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "lib.py", "old_string": "def helper", "new_string": "def assist"}),
            ),
            Reply::text("Renamed."),
            Reply::text("Title"),
        ],
    )
    .await;
    home.run_ok(
        &mock.url(),
        &[("PATH", path_with(&bin).as_ref())],
        &["run", "--mode", "auto", "rename helper"],
    )
    .await;
    let results = mock_model::tool_result_texts(&mock.requests()[3]);
    let edit = results.last().expect("the edit's result");
    assert!(
        edit.contains("also reports new errors in other files")
            && edit.contains("app.py line 1:")
            && edit.contains("helper"),
        "{edit}"
    );
    assert!(
        !edit.contains("nope"),
        "a pre-existing error elsewhere is not repeated: {edit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_changes_every_file_the_server_names_and_says_which() {
    let Some(bin) = typescript_bin() else { return };
    let home = TestHome::new();
    typescript_project(&home);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![rename_call(), Reply::text("Renamed."), Reply::text("Title")],
    )
    .await;
    home.run_ok(
        &mock.url(),
        &[("PATH", path_with(&bin).as_ref())],
        &["run", "--mode", "auto", "rename greet to welcome"],
    )
    .await;
    let a = std::fs::read_to_string(home.path("a.ts")).unwrap();
    let b = std::fs::read_to_string(home.path("b.ts")).unwrap();
    assert!(a.contains("export function welcome("), "{a}");
    assert_eq!(b.matches("welcome").count(), 3, "{b}");
    assert!(b.contains("// greet stays in this comment"), "{b}");
    let results = mock_model::tool_result_texts(&mock.requests()[1]);
    let said = results.last().unwrap();
    assert!(
        said.starts_with("Renamed `greet` to `welcome` in 2 files")
            && said.contains("a.ts (+1 -1 lines)")
            && said.contains("b.ts (+3 -3 lines)"),
        "{said}"
    );
    assert!(
        results
            .iter()
            .any(|r| r.contains("no new problems in the renamed files")),
        "the renamed files are checked: {results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_is_never_run_unasked_in_smart_mode() {
    let Some(bin) = typescript_bin() else { return };
    let home = TestHome::new();
    typescript_project(&home);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            rename_call(),
            Reply::text("Could not."),
            Reply::text("Title"),
        ],
    )
    .await;
    // Smart mode, and no one to ask: the rename is not run.
    let out = home
        .command(&mock.url())
        .env("PATH", path_with(&bin))
        .args(["run", "rename greet to welcome"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let b = std::fs::read_to_string(home.path("b.ts")).unwrap();
    assert!(!b.contains("welcome"), "{b}\n{stderr}");
    let results = mock_model::tool_result_texts(&mock.requests()[1]);
    let said = results.last().unwrap();
    assert!(said.contains("renames `greet` to `welcome`"), "{said}");
}

/// The cargo and rustup homes, when rustup's rust-analyzer runs here
/// (`rustup component add rust-analyzer`, as .ci/run does).
fn rust_analyzer_homes() -> Option<(String, String)> {
    let home = std::env::var("HOME").unwrap_or_default();
    let cargo = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let rustup = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"));
    let works = std::process::Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !works {
        eprintln!("skipped: rust-analyzer is not installed (`rustup component add rust-analyzer`)");
        return None;
    }
    Some((cargo, rustup))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer_loads_a_project_with_dependencies_and_writes_no_target_in_it() {
    let Some((cargo_home, rustup_home)) = rust_analyzer_homes() else {
        return;
    };
    let home = TestHome::new();
    home.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nserde = \"1\"\n",
    );
    home.write(
        "src/main.rs",
        "fn main() {\n    let x: u32 = 1;\n    println!(\"{x}\");\n}\n",
    );
    // A crate already downloaded: the test needs no network.
    let locked = std::process::Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(home.project.path())
        .output()
        .is_ok_and(|o| o.status.success());
    if !locked {
        eprintln!("skipped: serde is not in the local cargo registry (offline lockfile failed)");
        return;
    }
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "src/main.rs"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "src/main.rs", "old_string": "let x: u32 = 1;", "new_string": "let x: u32 = \"one\";"}),
            ),
            Reply::text("Edited."),
            Reply::text("Title"),
        ],
    )
    .await;
    home.run_ok(
        &mock.url(),
        &[
            ("CARGO_HOME", cargo_home.as_ref()),
            ("RUSTUP_HOME", rustup_home.as_ref()),
        ],
        &["run", "--mode", "auto", "break it"],
    )
    .await;
    let results = mock_model::tool_result_texts(&mock.requests()[2]);
    let edit = results.last().unwrap();
    assert!(
        edit.contains("rust-analyzer") && edit.contains("line 2: expected u32"),
        "{edit}"
    );
    assert!(
        !home.path("target").exists(),
        "the server's cargo wrote into the workspace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_edit_is_checked_by_a_server_that_publishes_only_changes() {
    // typescript-language-server publishes a file's diagnostics only when
    // they differ from the last: a clean edit of a clean file gets none.
    let Some(bin) = typescript_bin() else { return };
    let home = TestHome::new();
    typescript_project(&home);
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "a.ts"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "a.ts", "old_string": "\"hello \"", "new_string": "\"hi \""}),
            ),
            Reply::text("Edited."),
            Reply::text("Title"),
        ],
    )
    .await;
    home.run_ok(
        &mock.url(),
        &[("PATH", path_with(&bin).as_ref())],
        &["run", "--mode", "auto", "say hi"],
    )
    .await;
    let results = mock_model::tool_result_texts(&mock.requests()[2]);
    let edit = results.last().unwrap();
    assert!(
        edit.contains("Checked by typescript: no new problems"),
        "{edit}"
    );
}

/// Where the sandbox cannot be enforced (no Landlock: a kernel before 5.13,
/// or its calls filtered — here a preloaded `syscall` that answers ENOSYS),
/// a language server of a project not trusted never starts: it would run
/// the repository's config and build scripts with the person's rights.
#[tokio::test]
async fn without_an_enforceable_sandbox_no_server_starts_for_an_untrusted_project() {
    let shim_dir = tempfile::tempdir().unwrap();
    let source = shim_dir.path().join("no_landlock.c");
    std::fs::write(
        &source,
        "#define _GNU_SOURCE\n#include <stdarg.h>\n#include <errno.h>\n#include <dlfcn.h>\n\
         long syscall(long n, ...) {\n  va_list ap; va_start(ap, n);\n  long a[6];\n\
         for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);\n  va_end(ap);\n\
         /* landlock_create_ruleset, add_rule, restrict_self */\n\
         if (n >= 444 && n <= 446) { errno = ENOSYS; return -1; }\n\
         static long (*next)(long, ...);\n  if (!next) next = dlsym(RTLD_NEXT, \"syscall\");\n\
         return next(n, a[0], a[1], a[2], a[3], a[4], a[5]);\n}\n",
    )
    .unwrap();
    let shim = shim_dir.path().join("no_landlock.so");
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&shim)
        .arg(&source)
        .arg("-ldl")
        .output();
    if !built.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: without_an_enforceable_sandbox…: no C compiler ({built:?})");
        return;
    }
    let home = TestHome::new();
    home.write("a.ev", "hello\n");
    let marker = home.home.path().join("server-ran");
    let config = home.home.path().join("config/cairn/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[lsp.probe]\ncommand = \"sh\"\nargs = [\"-c\", \"touch {}; cat\"]\nfiletypes = [\"ev\"]\n",
            marker.display()
        ),
    )
    .unwrap();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool(
                "l1",
                "lsp",
                json!({"operation": "diagnostics", "file_path": "a.ev"}),
            ),
            Reply::text("No server."),
            Reply::text("Title"),
        ],
    )
    .await;
    let out = home
        .command(&mock.url())
        .env("LD_PRELOAD", &shim)
        .args(["run", "any problems in a.ev?"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let results = mock_model::tool_result_texts(&mock.requests()[1]);
    let said = results.join("\n");
    assert!(said.contains("cannot be enforced here"), "{said}\n{stderr}");
    assert!(!marker.exists(), "the server ran unconfined");
}
