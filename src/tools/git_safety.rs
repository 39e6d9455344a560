//! The bash tool's side of `permission::git_hooks`: a read-only git
//! command runs with the repository's command hooks overridden, through
//! `GIT_CONFIG_COUNT` settings exported before the command.

use std::path::Path;

use crate::permission::git_hooks::{neutralising_env, runs_read_only_git, transport_env};
use crate::shell::ShellAnalysis;

/// Shell lines to put before the command: a read-only git runs with every
/// hook of the repository overridden, anything else with its transport
/// programs overridden.
pub fn preamble(analysis: &ShellAnalysis, cwd: &Path) -> String {
    let env = if runs_read_only_git(analysis) {
        neutralising_env(cwd)
    } else {
        // Any other command may run git, directly or from a script or a
        // build: approved or covered by a rule, git may change things, but
        // what the repository's config makes it run to reach a remote is
        // not what the approval was for.
        transport_env(cwd)
    };
    let mut out = String::from("export");
    for (name, value) in env {
        out.push_str(&format!(" {name}={}", quote(&value)));
    }
    out.push('\n');
    out
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use serde_json::json;

    use crate::tools::{Tool, ToolContext, shell::BashTool};

    fn git(dir: &std::path::Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status();
        assert!(status.is_ok_and(|s| s.success()), "git {args:?}");
    }

    /// A repository whose configuration runs a program (which leaves a
    /// marker file) from every hook a read-only command could reach.
    fn hostile_repository() -> tempfile::TempDir {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let root = dir.path();
        git(root, &["init", "-q"]);
        let write = |name: &str, text: &str| {
            assert!(std::fs::write(root.join(name), text).is_ok(), "{name}");
        };
        write("a.txt", "one\n");
        write("b.bin", "two\n");
        git(root, &["add", "."]);
        git(
            root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "init",
            ],
        );
        write("a.txt", "one\nmore\n");
        write("b.bin", "two\nmore\n");
        write(
            ".git/info/attributes",
            "*.txt diff=evil\n*.bin filter=evil\n",
        );
        let marker =
            |name: &str| format!("touch '{}'", root.join(format!("MARK_{name}")).display());
        let settings = [
            ("core.fsmonitor", format!("{}; false", marker("fsmonitor"))),
            ("core.pager", format!("{}; cat", marker("pager"))),
            ("diff.external", marker("external")),
            ("diff.evil.textconv", format!("{}; cat", marker("textconv"))),
            ("filter.evil.clean", format!("{}; cat", marker("clean"))),
            ("log.showSignature", "true".to_string()),
            ("gpg.program", marker("gpg")),
        ];
        for (key, value) in &settings {
            git(root, &["config", key, value]);
        }
        dir
    }

    fn markers(root: &std::path::Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("MARK_"))
            .collect()
    }

    #[tokio::test]
    async fn read_only_git_runs_none_of_the_repositorys_programs() {
        let repo = hostile_repository();
        let ctx = ToolContext::new(repo.path().to_path_buf());
        for command in [
            "git status",
            "git diff",
            "git log -p",
            "git diff | cat",
            "git show",
        ] {
            let out = BashTool.run(json!({ "command": command }), &ctx).await;
            assert!(!out.is_error, "{command}: {}", out.text_content());
            assert_eq!(markers(repo.path()), Vec::<String>::new(), "{command}");
        }
        let diff = BashTool.run(json!({ "command": "git diff" }), &ctx).await;
        assert!(
            diff.text_content().contains("+more"),
            "{}",
            diff.text_content()
        );
        // Without the neutralising (an approved command that is not
        // read-only), the same repository does run them: the test's
        // repository really is hostile.
        let approved = "git diff; git commit --dry-run -q >/dev/null";
        BashTool.run(json!({ "command": approved }), &ctx).await;
        assert!(!markers(repo.path()).is_empty());
    }
}
