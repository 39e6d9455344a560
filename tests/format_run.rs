//! Formatting after an edit, through `cairn run`: with `[format.rust]
//! formatter = "rustfmt"`, the real rustfmt (from the Rust toolchain that
//! builds these tests) formats the edited file in the sandbox, the file on
//! disk is the formatted text and the model's result says so; a formatter
//! that fails leaves the edit as written and the result says why. The
//! rustfmt case skips, saying why, when rustfmt is not installed.

use crate::{mock_model, test_home};
use std::path::PathBuf;

use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::{TestHome, path_with};

/// The toolchain's own `bin` folder holding rustfmt. The `rustfmt` on
/// PATH is usually rustup's proxy, which needs the person's real HOME; the
/// binary under test runs with a home of its own.
pub(crate) fn rustfmt_bin() -> Option<PathBuf> {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let bin = sysroot.map(|s| s.join("bin"));
    let works = bin.as_ref().is_some_and(|b| {
        std::process::Command::new(b.join("rustfmt"))
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !works {
        eprintln!(
            "skipped: rustfmt is not installed in the Rust toolchain \
             (`rustup component add rustfmt`)"
        );
        return None;
    }
    bin
}

/// A crate of the 2021 edition: `async fn` does not parse as 2015, so
/// rustfmt formats it only when given the package's edition.
pub(crate) const MANIFEST: &str =
    "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
pub(crate) const LIB: &str = "pub async fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
pub(crate) const FORMATTED: &str =
    "pub async fn add(a: i32, b: i32) -> i32 {\n    let sum = a + b;\n    sum\n}\n";

/// The model views src/lib.rs and replaces its body with badly laid out
/// code.
pub(crate) fn edit_lib() -> Vec<Reply> {
    vec![
        Reply::tool("v1", "view", json!({"file_path": "src/lib.rs"})),
        Reply::tool(
            "e1",
            "edit",
            json!({"file_path": "src/lib.rs", "old_string": "    a + b\n",
                   "new_string": "      let  sum=a+b;\n  sum\n"}),
        ),
    ]
}

/// The person's config: rustfmt for Rust files, and no language server
/// (this test is about formatting).
pub(crate) const CONFIG: &str = "[format.rust]\nformatter = \"rustfmt\"\n[lsp]\nenabled = false\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_formatted_by_rustfmt_and_the_result_says_so() {
    let Some(bin) = rustfmt_bin() else { return };
    let home = TestHome::new();
    home.write_config(CONFIG);
    home.write("Cargo.toml", MANIFEST);
    home.write("src/lib.rs", LIB);
    home.write(
        "src/half.rs",
        "pub fn half(x: i32) -> i32 {\n    x / 2\n}\n",
    );
    let mut replies = edit_lib();
    // An edit that does not parse: rustfmt refuses it, the edit stays.
    replies.push(Reply::tool(
        "v2",
        "view",
        json!({"file_path": "src/half.rs"}),
    ));
    replies.push(Reply::tool(
        "e2",
        "edit",
        json!({"file_path": "src/half.rs", "old_string": "    x / 2\n", "new_string": "    x / (2\n"}),
    ));
    replies.extend([Reply::text("Done."), Reply::text("Title")]);
    let mock = MockModel::start(Format::Anthropic, replies).await;
    home.run_ok(
        &mock.url(),
        &[("PATH", path_with(&bin).as_ref())],
        &["run", "--mode", "auto", "make add clearer"],
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(home.path("src/lib.rs")).unwrap(),
        FORMATTED,
        "the file on disk is rustfmt's"
    );
    let requests = mock.requests();
    let result = mock_model::tool_result_texts(&requests[2]);
    let edit = result.last().expect("the edit's result");
    assert!(edit.starts_with("Edited src/lib.rs"), "{edit}");
    assert!(edit.contains("Formatted by rustfmt"), "{edit}");
    assert!(
        edit.contains("2\t    let sum = a + b;") && edit.contains("3\t    sum"),
        "the model sees the formatted lines: {edit}"
    );

    let broken = "pub fn half(x: i32) -> i32 {\n    x / (2\n}\n";
    assert_eq!(
        std::fs::read_to_string(home.path("src/half.rs")).unwrap(),
        broken,
        "an edit rustfmt cannot parse stays as written"
    );
    let result = mock_model::tool_result_texts(&requests[4]);
    let edit = result.last().expect("the second edit's result");
    assert!(edit.starts_with("Edited src/half.rs"), "{edit}");
    assert!(
        edit.contains("Not formatted: rustfmt failed (exit status 1): error"),
        "{edit}"
    );
    assert!(edit.contains("the edit is on disk as written"), "{edit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_formatter_leaves_the_edit_as_written_and_says_why() {
    let home = TestHome::new();
    home.write_config(
        "[format.text]\nfiletypes = [\"txt\"]\n\
         command = [\"sh\", \"-c\", \"cat >/dev/null; echo 'fmt.toml: unknown option wrap' >&2; exit 4\"]\n\
         [format.missing]\nfiletypes = [\"cfg\"]\ncommand = [\"no-such-formatter\", \"{file}\"]\n",
    );
    home.write("notes.txt", "one\n");
    home.write("app.cfg", "a = 1\n");
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "notes.txt"})).tool_call(
                "v2",
                "view",
                json!({"file_path": "app.cfg"}),
            ),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "notes.txt", "old_string": "one", "new_string": "two"}),
            )
            .tool_call(
                "w1",
                "write",
                json!({"file_path": "app.cfg", "content": "a = 2\n"}),
            ),
            Reply::text("Done."),
            Reply::text("Title"),
        ],
    )
    .await;
    home.run_ok(&mock.url(), &[], &["run", "--mode", "auto", "change both"])
        .await;
    assert_eq!(
        std::fs::read_to_string(home.path("notes.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.path("app.cfg")).unwrap(),
        "a = 2\n"
    );
    let results = mock_model::tool_result_texts(&mock.requests()[2]);
    let edit = results
        .iter()
        .find(|r| r.starts_with("Edited notes.txt"))
        .unwrap();
    assert!(
        edit.contains("Not formatted: sh failed (exit status 4): fmt.toml: unknown option wrap"),
        "{edit}"
    );
    let write = results
        .iter()
        .find(|r| r.starts_with("Replaced app.cfg"))
        .unwrap();
    assert!(
        write.contains("Not formatted: `no-such-formatter` is not installed or not on PATH"),
        "{write}"
    );
}
