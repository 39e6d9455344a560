//! The system prompt: cairn's instructions, facts about the environment and
//! the project's own instructions.

use std::cell::OnceCell;
use std::path::Path;

use super::instructions::{self, Instructions};

const SYSTEM: &str = include_str!("../../assets/prompts/system.md");

/// Facts the model should know about where it works.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    pub cwd: String,
    pub project_root: String,
    pub os: String,
    pub date: String,
    pub git_branch: Option<String>,
    /// `git status --short`, capped.
    pub git_status: Option<String>,
}

/// The branch and the capped change list of `git status --short --branch`;
/// nothing for a repository without a commit (no branch to name yet).
fn split_status(out: &str) -> (Option<String>, Option<String>) {
    let mut lines = out.lines();
    let head = lines
        .next()
        .and_then(|l| l.strip_prefix("## "))
        .unwrap_or("");
    if head.is_empty() || head.starts_with("No commits yet on ") {
        return (None, None);
    }
    let branch = if head.starts_with("HEAD (no branch)") {
        "HEAD"
    } else {
        head.split("...").next().unwrap_or(head)
    };
    let lines: Vec<&str> = lines.collect();
    let status = if lines.len() > 40 {
        format!(
            "{}\n… and {} more changed files",
            lines[..40].join("\n"),
            lines.len() - 40
        )
    } else if lines.is_empty() {
        "(clean)".to_string()
    } else {
        lines.join("\n")
    };
    (Some(branch.to_string()), Some(status))
}

/// How long cairn's start-up git call may take.
const GIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Environment {
    /// Asks git for the branch and status through the sandbox's helper
    /// rules: read-only, no network, no transport (a partial clone's lazy
    /// fetch starts nothing), every program the repository's config names
    /// overridden (`git_hooks::helper_env`).
    pub fn gather(cwd: &Path, root: &Path, sandbox: &crate::sandbox::Sandbox) -> Environment {
        let settings = OnceCell::new();
        let git = |args: &[&str]| -> Option<String> {
            let mut cmd = crate::sandbox::helper_std_command(
                sandbox,
                crate::sandbox::Helper::Git,
                "git",
                root,
            )
            .ok()?;
            cmd.arg("-C").arg(cwd).args(args).envs(
                (settings.get_or_init(|| crate::permission::git_hooks::helper_env(cwd)))
                    .iter()
                    .map(|(k, v)| (k, v)),
            );
            // A configuration that names a FIFO or a terminal stalls git;
            // the session starts without git's view instead.
            let out = crate::sandbox::output_within(&mut cmd, GIT_LIMIT)?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
        };
        // One sandboxed call: `--branch` puts the branch on the first line.
        let (git_branch, git_status) = git(&[
            "--no-optional-locks",
            "status",
            "--short",
            "--branch",
            "--ignore-submodules=all",
        ])
        .map_or((None, None), |out| split_status(&out));
        Environment {
            cwd: cwd.display().to_string(),
            project_root: root.display().to_string(),
            os: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            git_branch,
            git_status,
        }
    }

    fn render(&self) -> String {
        let mut s = String::from("<environment>\n");
        s.push_str(&format!("Working directory: {}\n", self.cwd));
        if self.project_root != self.cwd {
            s.push_str(&format!("Project root: {}\n", self.project_root));
        }
        s.push_str(&format!(
            "Platform: {}\nToday's date: {}\n",
            self.os, self.date
        ));
        match &self.git_branch {
            Some(b) => {
                s.push_str(&format!("Git branch: {b}\n"));
                if let Some(st) = &self.git_status {
                    s.push_str(&format!("Git status:\n{st}\n"));
                }
            }
            None => s.push_str("Not a git repository.\n"),
        }
        s.push_str("</environment>\n");
        s
    }
}

/// Builds the whole system prompt.
pub fn system_prompt(env: &Environment, files: &[Instructions]) -> String {
    system_prompt_from(SYSTEM, env, files)
}

/// The whole system prompt over a given base text (the short one for a
/// small window).
pub fn system_prompt_from(base: &str, env: &Environment, files: &[Instructions]) -> String {
    let mut s = String::with_capacity(base.len() + 1024);
    s.push_str(base.trim_end());
    s.push_str("\n\n");
    s.push_str(&env.render());
    if !files.is_empty() {
        s.push_str(
            "\nThe project gives these instructions; follow them where they apply (deeper directories take precedence):\n",
        );
        s.push_str(&instructions::render(files));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_holds_environment_and_instructions() {
        let env = Environment {
            cwd: "/w/p".into(),
            project_root: "/w/p".into(),
            os: "linux (x86_64)".into(),
            date: "2026-01-02".into(),
            git_branch: Some("main".into()),
            git_status: Some(" M src/lib.rs".into()),
        };
        let files = vec![Instructions {
            path: "/w/p/AGENTS.md".into(),
            text: "Use tabs.".into(),
            truncated: 0,
        }];
        let p = system_prompt(&env, &files);
        assert!(p.starts_with("You are cairn"));
        assert!(p.contains("Working directory: /w/p"));
        assert!(p.contains("Git branch: main"));
        assert!(p.contains(" M src/lib.rs"));
        assert!(p.contains("2026-01-02"));
        assert!(p.contains("<instructions path=\"/w/p/AGENTS.md\">\nUse tabs."));
    }

    fn git(dir: &Path, args: &[&str]) -> bool {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    #[test]
    fn the_branch_line_and_the_changes_are_split() {
        let (b, s) = split_status("## main...origin/main [ahead 1]\n M a.rs\n?? b");
        assert_eq!(b.as_deref(), Some("main"));
        assert_eq!(s.as_deref(), Some(" M a.rs\n?? b"));
        assert_eq!(
            split_status("## HEAD (no branch)").0.as_deref(),
            Some("HEAD")
        );
        assert_eq!(split_status("## work").1.as_deref(), Some("(clean)"));
        assert_eq!(
            split_status("## No commits yet on main\n?? a"),
            (None, None)
        );
    }

    #[test]
    fn gathers_git_facts_in_a_repo() {
        let dir = tempfile::tempdir().unwrap();
        if !git(dir.path(), &["init", "-q", "-b", "trunk"]) {
            eprintln!("skipped: git is not available");
            return;
        }
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        git(dir.path(), &["add", "a.txt"]);
        git(
            dir.path(),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        );
        std::fs::write(dir.path().join("b.txt"), "y").unwrap();
        let sandbox = crate::sandbox::Sandbox::default_for_user();
        let env = Environment::gather(dir.path(), dir.path(), &sandbox);
        assert_eq!(env.git_branch.as_deref(), Some("trunk"));
        assert_eq!(env.git_status.as_deref(), Some("?? b.txt"));
        assert!(!env.os.is_empty());
    }

    /// A partial clone missing a blob `git status` needs: its lazy fetch
    /// would run the `core.sshCommand` the repository names.
    #[test]
    fn a_partial_clones_lazy_fetch_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        if !git(ws, &["init", "-q", "-b", "trunk"]) {
            eprintln!("skipped: git is not available");
            return;
        }
        std::fs::write(ws.join("d.txt"), "alpha\n".repeat(30)).unwrap();
        git(ws, &["add", "d.txt"]);
        git(
            ws,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        );
        let blob = std::process::Command::new("git")
            .args(["rev-parse", "HEAD:d.txt"])
            .current_dir(ws)
            .output()
            .unwrap();
        let blob = String::from_utf8_lossy(&blob.stdout).trim().to_string();
        git(ws, &["rm", "-q", "--cached", "d.txt"]);
        std::fs::rename(ws.join("d.txt"), ws.join("e.txt")).unwrap();
        git(ws, &["add", "e.txt"]);
        std::fs::remove_file(ws.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
            .unwrap();
        let marker = ws.join("ran");
        let helper = format!("touch {}", marker.display());
        for (k, v) in [
            ("extensions.partialclone", "origin"),
            ("remote.origin.url", "ssh://git.example.invalid/a.git"),
            ("remote.origin.promisor", "true"),
            ("core.sshCommand", helper.as_str()),
        ] {
            git(ws, &["config", k, v]);
        }
        let sandbox = crate::sandbox::Sandbox::off();
        let env = Environment::gather(ws, ws, &sandbox);
        assert!(!marker.exists(), "git ran the repository's ssh command");
        assert_eq!(env.git_branch.as_deref(), Some("trunk"));
    }

    /// The cost of the start-up git calls, in and out of the sandbox:
    /// `cargo test --lib start_up_git_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement printed for a person, not a check"]
    fn start_up_git_cost() {
        let dir = tempfile::tempdir().unwrap();
        if !git(dir.path(), &["init", "-q", "-b", "trunk"]) {
            return;
        }
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        for (label, sandbox) in [
            ("sandboxed", crate::sandbox::Sandbox::default_for_user()),
            ("sandbox off", crate::sandbox::Sandbox::off()),
        ] {
            let mut times: Vec<u128> = (0..21)
                .map(|_| {
                    let start = std::time::Instant::now();
                    Environment::gather(dir.path(), dir.path(), &sandbox);
                    start.elapsed().as_micros()
                })
                .collect();
            times.sort_unstable();
            eprintln!("{label}: median {} µs over 21 runs", times[10]);
        }
    }
}
