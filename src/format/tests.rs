use super::*;
use crate::tools::format::Formatting;

fn config(text: &str) -> FormatConfig {
    crate::config::parse(text).unwrap().format
}

fn off() -> crate::sandbox::Sandbox {
    crate::sandbox::Sandbox::off()
}

/// Formatters over `ws` finding programs only in `bin` (and the system's).
fn formatters(text: &str, ws: &Path, bin: &Path, trusted: bool) -> Formatters {
    let path = std::env::join_paths([bin, Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    Formatters::with_path(
        &config(text),
        ws.to_path_buf(),
        off(),
        trusted,
        None,
        Some(&path),
    )
}

const UPPER: &str =
    "[format.text]\ncommand = [\"tr\", \"a-z\", \"A-Z\"]\nfiletypes = [\"txt\", \"md\"]\n";

#[test]
fn a_command_formats_the_files_of_its_types_only() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let f = formatters(UPPER, &ws, &ws.join("bin"), true);
    let cancel = CancellationToken::new();
    let file = ws.join("notes/a.txt");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    assert_eq!(f.formatter_for(&file), Some(Ok("tr".into())));
    assert_eq!(f.format(&file, "abc\n", &cancel).unwrap(), "ABC\n");
    assert_eq!(f.formatter_for(&ws.join("main.rs")), None);
    assert_eq!(f.formatter_for(&ws.join("Makefile")), None);
}

#[test]
fn control_files_and_files_outside_the_workspace_are_never_formatted() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(ws.join(".claude/commands")).unwrap();
    let f = formatters(UPPER, &ws, &ws.join("bin"), true);
    for rel in [
        ".cairn/notes.txt",
        ".git/info/x.txt",
        "AGENTS.md",
        "sub/CLAUDE.md",
        ".claude/commands/deploy.md",
        ".cursor/rules.md",
        "../elsewhere.txt",
    ] {
        assert_eq!(f.formatter_for(&ws.join(rel)), None, "{rel}");
    }
    // Nor through a link that leads to one.
    std::os::unix::fs::symlink(".claude/commands/deploy.md", ws.join("plain.md")).unwrap();
    assert_eq!(f.formatter_for(&ws.join("plain.md")), None);
    assert_eq!(
        f.formatter_for(&ws.join("README.md")),
        Some(Ok("tr".into()))
    );
}

#[test]
fn a_missing_formatter_is_said_when_asked_for_and_left_out_when_a_default() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let bin = ws.join("no-bin");
    let cancel = CancellationToken::new();
    // A PATH where nothing is installed.
    let bare = |text: &str| {
        Formatters::with_path(
            &config(text),
            ws.clone(),
            off(),
            true,
            None,
            Some(bin.as_os_str()),
        )
    };
    let named = bare("[format.web]\nformatter = \"prettier\"\nfiletypes = [\"ts\"]\n");
    let file = ws.join("a.ts");
    let missing = "`prettier` is not installed or not on PATH";
    assert_eq!(named.formatter_for(&file), Some(Err(missing.into())));
    assert_eq!(named.format(&file, "x", &cancel).unwrap_err(), missing);
    let defaults = bare("[format]\nenabled = true\n");
    assert_eq!(defaults.formatter_for(&file), None, "a default is left out");
    // `lsp` where no language server looks after the file.
    let server = bare("[format.rust]\nformatter = \"lsp\"\n");
    let said = server.formatter_for(&ws.join("a.rs")).unwrap().unwrap_err();
    assert!(said.contains("no language server looks after"), "{said}");
    let empty = formatters(
        "[format.x]\ncommand = []\nfiletypes = [\"x\"]\n",
        &ws,
        &bin,
        true,
    );
    assert!(
        (empty.format(&ws.join("a.x"), "x", &cancel).unwrap_err()).contains("command` is empty")
    );
    let bad = formatters("[format.x]\nformatter = \"gofmt\"\n", &ws, &bin, true);
    assert_eq!(
        bad.problems(),
        ["`[format.x]` needs `filetypes` (the extensions it formats); it formats nothing"]
    );
}

#[test]
fn with_the_sandbox_off_an_untrusted_projects_formatter_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let f = formatters(UPPER, &ws, &ws.join("bin"), false);
    let said = f.formatter_for(&ws.join("a.txt")).unwrap().unwrap_err();
    assert!(said.contains("not trusted"), "{said}");
    let err = f
        .format(&ws.join("a.txt"), "abc", &CancellationToken::new())
        .unwrap_err();
    assert!(err.contains("not trusted"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_formatter_runs_contained_in_the_files_folder() {
    use crate::sandbox::tests::{enforced, fixture, sandbox_for};
    if !enforced() {
        return;
    }
    let fx = fixture();
    let sandbox = sandbox_for(&fx, Default::default());
    let script = "pwd >&2; touch planted 2>/dev/null; \
                  printf 'ran in %s\\n' \"$(pwd)\"";
    let text =
        format!("[format.text]\ncommand = [\"sh\", \"-c\", {script:?}]\nfiletypes = [\"txt\"]\n");
    let f = Formatters::with_path(
        &config(&text),
        fx.ws.clone(),
        sandbox,
        false,
        None,
        std::env::var_os("PATH").as_deref(),
    );
    std::fs::create_dir_all(fx.ws.join("sub")).unwrap();
    let file = fx.ws.join("sub/a.txt");
    let out = f.format(&file, "x\n", &CancellationToken::new()).unwrap();
    assert_eq!(out, format!("ran in {}\n", fx.ws.join("sub").display()));
    assert!(!fx.ws.join("sub/planted").exists(), "nothing written");
}

/// `formatter = "lsp"`: rust-analyzer (which formats with the toolchain's
/// rustfmt) answers `textDocument/formatting`, called from a blocking
/// thread as the file tools call it. Skips, saying why, without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_servers_formatting_formats_for_lsp() {
    let runs = std::process::Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        eprintln!("skipped: rust-analyzer is not installed (`rustup component add rust-analyzer`)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let file = ws.join("src/lib.rs");
    std::fs::write(&file, "pub fn f() {}\n").unwrap();
    let sandbox = crate::sandbox::Sandbox::default_for_user();
    let lsp = LspManager::new(&Default::default(), ws.clone(), sandbox.clone(), true);
    let f = Formatters::new(
        &config("[format.rust]\nformatter = \"lsp\"\n"),
        ws.clone(),
        sandbox,
        true,
        Some(lsp.clone()),
    );
    assert_eq!(f.formatter_for(&file), Some(Ok("rust-analyzer".into())));
    let formatted = tokio::task::spawn_blocking(move || {
        f.format(&file, "pub fn f(){let x=1;}\n", &CancellationToken::new())
    })
    .await
    .unwrap();
    lsp.shutdown().await;
    assert_eq!(formatted.unwrap(), "pub fn f() {\n    let x = 1;\n}\n");
}
