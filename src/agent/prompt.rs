//! The system prompt: cairn's instructions, facts about the environment and
//! the project's own instructions.

use std::cell::OnceCell;
use std::path::Path;
use std::process::Command;

use super::instructions::{self, Instructions};

const SYSTEM: &str = include_str!("../../assets/prompts/system.md");

/// `-c` options that keep a repository's own `.git/config` from running a
/// program during cairn's read-only `git` calls: no fsmonitor, and every
/// filter driver it defines emptied (a clean filter runs when `git status`
/// rereads a file). `--no-optional-locks` (no index write, so no
/// `post-index-change` hook) and `--ignore-submodules` do the rest.
fn neutral_git_config(cwd: &Path) -> Vec<String> {
    let mut out = vec!["-c".to_string(), "core.fsmonitor=false".to_string()];
    let mut cmd = Command::new("git");
    crate::tools::env::scrub_std(&mut cmd);
    let listed = cmd
        .args(["config", "--name-only", "--get-regexp", r"^filter\."])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let text = listed
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut drivers: Vec<&str> = text
        .lines()
        .filter_map(|key| key.strip_prefix("filter.")?.rsplit_once('.'))
        .map(|(driver, _)| driver)
        .collect();
    drivers.dedup();
    for driver in drivers {
        for (field, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            out.push("-c".to_string());
            out.push(format!("filter.{driver}.{field}={value}"));
        }
    }
    out
}

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

impl Environment {
    pub fn gather(cwd: &Path, root: &Path) -> Environment {
        let neutral = OnceCell::new();
        let git = |args: &[&str]| -> Option<String> {
            let mut cmd = Command::new("git");
            // A repository's own config must not run a program here (its
            // fsmonitor, filters, pager: see `git_hooks`), and git gets no
            // secrets in case one does.
            crate::tools::env::scrub_std(&mut cmd);
            let out = cmd
                .args(neutral.get_or_init(|| neutral_git_config(cwd)))
                .args(args)
                .envs(crate::permission::git_hooks::neutralising_env(cwd))
                .current_dir(cwd)
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
        };
        let git_branch = git(&["rev-parse", "--abbrev-ref", "HEAD"]).filter(|s| !s.is_empty());
        let git_status = git_branch.as_ref().and_then(|_| {
            git(&[
                "--no-optional-locks",
                "status",
                "--short",
                "--ignore-submodules=all",
            ])
            .map(|s| {
                let lines: Vec<&str> = s.lines().collect();
                if lines.len() > 40 {
                    format!(
                        "{}\n… and {} more changed files",
                        lines[..40].join("\n"),
                        lines.len() - 40
                    )
                } else if s.is_empty() {
                    "(clean)".to_string()
                } else {
                    s
                }
            })
        });
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

    #[test]
    fn gathers_git_facts_in_a_repo() {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .args(["init", "-q", "-b", "trunk"])
            .current_dir(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("skipped: git is not available");
            return;
        }
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let env = Environment::gather(dir.path(), dir.path());
        // A fresh repository has no commit, so HEAD names no branch yet.
        assert!(env.git_status.is_none() || env.git_status.as_deref() == Some("?? a.txt"));
        assert!(!env.os.is_empty());
    }
}
