//! Issue 11, files: tools keep modes and links, new files follow the
//! umask, cairn's own files are private — through the real binary.

use crate::{mock_model, test_home};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use mock_model::{Format, MockModel, Reply};
use serde_json::json;
use test_home::TestHome;

fn command(home: &TestHome, mock: &MockModel) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.current_dir(home.project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(home.vars(&mock.url()))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    // SAFETY: umask is async-signal-safe; it runs in the child before exec.
    unsafe {
        c.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    c
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn edits_keep_modes_and_links_and_new_files_follow_the_umask() {
    let home = TestHome::new();
    let script = home.path("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let real = home.path("real.txt");
    std::fs::write(&real, "alpha\n").unwrap();
    std::os::unix::fs::symlink("real.txt", home.path("link.txt")).unwrap();
    let mock =
        MockModel::start(
            Format::Anthropic,
            vec![
            Reply::tool("v1", "view", json!({"file_path": "run.sh"}))
                .tool_call("v2", "view", json!({"file_path": "link.txt"})),
            Reply::tool(
                "e1",
                "edit",
                json!({"file_path": "run.sh", "old_string": "echo old", "new_string": "echo new"}),
            )
            .tool_call(
                "e2",
                "edit",
                json!({"file_path": "link.txt", "old_string": "alpha", "new_string": "beta"}),
            )
            .tool_call(
                "w1",
                "write",
                json!({"file_path": "fresh.txt", "content": "made\n"}),
            ),
            Reply::text("Done."),
            Reply::text("Title"),
        ],
        )
        .await;
    let out = command(&home, &mock)
        .args(["run", "--mode", "auto", "change things"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho new\n"
    );
    assert_eq!(mode(&script), 0o755, "the script stays executable");
    let link = std::fs::symlink_metadata(home.path("link.txt")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is kept");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "beta\n");
    assert_eq!(mode(&home.path("fresh.txt")), 0o644);
    // No temporary file is left beside them.
    let names: Vec<String> = std::fs::read_dir(home.project.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[tokio::test]
async fn the_database_log_and_exports_are_private() {
    let home = TestHome::new();
    let mock = MockModel::start(
        Format::Anthropic,
        vec![Reply::text("Hello."), Reply::text("Title")],
    )
    .await;
    let out = command(&home, &mock)
        .args(["run", "hi"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h = home.home.path();
    for dir in ["data/cairn", "state/cairn"] {
        assert_eq!(mode(&h.join(dir)), 0o700, "{dir}");
    }
    let db = h.join("data/cairn/sessions.db");
    for f in ["sessions.db", "sessions.db-wal", "sessions.db-shm"] {
        let p = h.join("data/cairn").join(f);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        }
    }
    assert!(db.exists());
    assert_eq!(mode(&h.join("state/cairn/cairn.log")), 0o600);
    let export = home.path("session.md");
    let out = command(&home, &mock)
        .args(["sessions", "list", "--json"])
        .output()
        .await
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let out = command(&home, &mock)
        .args(["sessions", "export", &id, "-o"])
        .arg(&export)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&export), 0o600);
}

#[tokio::test]
async fn view_refuses_a_fifo_and_a_device_without_hanging() {
    let home = TestHome::new();
    let fifo = home.path("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // A character device inside the project (a link to /dev/zero would
    // point outside it and be asked about instead).
    let zero = home.path("zero");
    let made = nix::sys::stat::mknod(
        &zero,
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        nix::sys::stat::makedev(1, 5),
    );
    if let Err(e) = &made {
        eprintln!("skipping the device half: mknod is not permitted here ({e})");
    }
    let mock = MockModel::start(
        Format::Anthropic,
        vec![
            Reply::tool("v1", "view", json!({"file_path": "pipe"})).tool_call(
                "v2",
                "view",
                json!({"file_path": "zero"}),
            ),
            Reply::text("Neither is a file."),
            Reply::text("Title"),
        ],
    )
    .await;
    let run = command(&home, &mock)
        .args(["run", "--mode", "auto", "read them"])
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), run)
        .await
        .expect("cairn hung on a special file")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let results = mock.requests()[1].to_string();
    assert!(results.contains("named pipe (FIFO)"), "{results}");
    if made.is_ok() {
        assert!(results.contains("character device"), "{results}");
    }
}
