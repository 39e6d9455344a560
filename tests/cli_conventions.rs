//! Issue 31's command-line conventions, through the real binary: shell
//! completions bash can parse, a manual page, the options every command
//! takes described once, and `--no-save` leaving no session behind.

use crate::{mock_model, test_home};
use mock_model::{Format, MockModel, Reply};
use test_home::TestHome;

fn cairn(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn bash_completion_parses_and_knows_the_subcommands_and_options() {
    let out = cairn(&["completions", "bash"]);
    assert!(out.status.success());
    let script = stdout(&out);
    assert!(
        script.contains("sessions") && script.contains("--no-save") && script.contains("--model"),
        "{script}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cairn.bash");
    std::fs::write(&file, &script).unwrap();
    let checked = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    for shell in ["zsh", "fish"] {
        let out = cairn(&["completions", shell]);
        assert!(
            out.status.success() && stdout(&out).contains("cairn"),
            "{shell}"
        );
    }
    let out = cairn(&["completions", "tcsh"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash"));
}

#[test]
fn the_manual_page_is_roff_with_every_command() {
    let out = cairn(&["man"]);
    assert!(out.status.success());
    let page = stdout(&out);
    assert!(page.contains(".TH cairn 1"), "{page}");
    for word in ["sessions", "completions", "no\\-save", "resume"] {
        assert!(page.contains(word), "{word} missing from\n{page}");
    }
}

#[test]
fn options_for_every_command_are_described_once() {
    let top = stdout(&cairn(&["--help"]));
    assert!(
        top.contains("--model <MODEL>") && top.contains("--no-save"),
        "{top}"
    );
    for sub in [["run", "--help"], ["sessions", "--help"], ["mcp", "--help"]] {
        let help = stdout(&cairn(&sub));
        assert!(!help.contains("--model <MODEL>"), "{sub:?}:\n{help}");
        assert!(!help.contains("--no-sandbox"), "{sub:?}:\n{help}");
        assert!(help.contains("see `cairn --help`"), "{sub:?}:\n{help}");
    }
    // They are still accepted after the subcommand.
    let out = cairn(&["sessions", "list", "--model", "x", "--help"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn no_save_runs_without_recording_a_session() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Answered, not kept."), Reply::text("A title")],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "--no-save", "say something"])
        .output()
        .await
        .unwrap();
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Answered, not kept."), "{text}");
    let out = home
        .command(&mock.url())
        .args(["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(0), "{list}");
    // The same run without the flag is recorded.
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Kept."), Reply::text("A title")],
    )
    .await;
    let out = home
        .command(&mock.url())
        .args(["run", "say something"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let out = home
        .command(&mock.url())
        .args(["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    let out = home
        .command(&mock.url())
        .args(["--no-save", "-c", "-p", "again"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot continue"));
}

/// No debugging write is left in cairn's own (unsandboxed) process: a
/// fixed path under the shared `/tmp` is one a contained command can
/// replace with a link, so cairn would write wherever it points (hostile
/// review, s11 F1). Scans the source outside its test modules.
#[test]
fn no_debug_write_to_a_fixed_temporary_path_is_left_in_the_source() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for f in files {
        let name = f.to_string_lossy();
        if name.ends_with("tests.rs") || name.contains("/tests/") || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // Only the code before the file's inline test module (at its end).
        let lines: Vec<&str> = text.lines().collect();
        let end = (0..lines.len())
            .find(|&i| {
                lines[i].trim() == "#[cfg(test)]"
                    && lines.get(i + 1).is_some_and(|l| {
                        l.trim_start().starts_with("mod ") && l.trim_end().ends_with('{')
                    })
            })
            .unwrap_or(lines.len());
        for (n, line) in lines[..end].iter().enumerate() {
            let written = ["\"/tmp/", "force_capture()"];
            if written.iter().any(|w| line.contains(w)) {
                found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
