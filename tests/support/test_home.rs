//! A private home and project for running the real binary: its own config,
//! data and state directories, and a model provider pointing at the
//! scripted server.

#![allow(dead_code)]

use std::path::PathBuf;

pub struct TestHome {
    pub home: tempfile::TempDir,
    pub project: tempfile::TempDir,
    /// The binary's TMPDIR. The test home lies under /tmp, and the sandbox
    /// cannot let a command create files directly in a directory that holds
    /// an unreadable one (cairn's data directory in the test home), so
    /// commands get a temporary directory of their own, as on a real
    /// machine, where the home is not under /tmp.
    pub tmp: tempfile::TempDir,
}

impl TestHome {
    /// A fresh home and a project that looks like a git repository.
    pub fn new() -> TestHome {
        let env = TestHome {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(env.project.path().join(".git")).unwrap();
        env
    }

    /// The environment the binary runs with, talking Anthropic to `model_url`.
    pub fn vars(&self, model_url: &str) -> Vec<(String, String)> {
        let h = self.home.path();
        let s = |p: PathBuf| p.display().to_string();
        vec![
            ("HOME".into(), s(h.to_path_buf())),
            ("XDG_CONFIG_HOME".into(), s(h.join("config"))),
            ("XDG_DATA_HOME".into(), s(h.join("data"))),
            ("XDG_STATE_HOME".into(), s(h.join("state"))),
            ("TMPDIR".into(), s(self.tmp.path().to_path_buf())),
            ("ANTHROPIC_API_KEY".into(), "test-key".into()),
            ("ANTHROPIC_BASE_URL".into(), model_url.to_string()),
        ]
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.project.path().join(rel)
    }

    /// The real `cairn` in the project, with only this home's environment
    /// and the scripted model at `model_url`.
    pub fn command(&self, model_url: &str) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.current_dir(self.project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.vars(model_url))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        c
    }

    /// `cairn` with `args` (a `cairn run …`), with `env` set too; it must
    /// succeed (its stderr is the failure's message).
    pub async fn run_ok(
        &self,
        model_url: &str,
        env: &[(&str, &std::ffi::OsStr)],
        args: &[&str],
    ) -> std::process::Output {
        let out = self
            .command(model_url)
            .envs(env.iter().copied())
            .args(args)
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        out
    }

    /// The rules the person stored with "Allow always" for this project
    /// (in their own config folder, never in the repository), as text.
    pub fn own_rules(&self) -> String {
        let dir = self.home.path().join("config/cairn/projects");
        let mut out = String::new();
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        out
    }

    /// Writes `text` to `rel` in the project, making its folders.
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a file in the project")).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Writes the person's own config (`$XDG_CONFIG_HOME/cairn/config.toml`).
    pub fn write_config(&self, text: &str) {
        let dir = self.home.path().join("config/cairn");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
    }
}

/// `PATH` with `bin` first (test servers, a toolchain's own tools).
pub fn path_with(bin: &std::path::Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Whether `tool` is on the PATH; prints why a test skips when it is not.
pub fn have(tool: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("skipped: `{tool}` is not installed (.ci/run installs it)");
    }
    found
}
