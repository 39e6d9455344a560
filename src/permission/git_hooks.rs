//! A read-only git command must not run the repository's programs. A
//! cloned repository's `.git/config` can name a command git runs during
//! `git status` (`core.fsmonitor`, a `filter.*.clean` for files
//! `.git/info/attributes` marks), `git diff` (`diff.external`,
//! `diff.*.textconv`, `diff.*.command`) or `git log` (`log.showSignature`
//! with `gpg.program`, a pager). When the gate lets such a command run
//! without asking, the bash tool runs it with these settings overridden
//! for that call (git's `GIT_CONFIG_COUNT` settings beat every file).

use std::path::Path;

use super::layers::layers;
use super::readonly;
use super::wrappers::basename;
use crate::shell::ShellAnalysis;

/// The tree with no entries (SHA-1 and SHA-256 repositories).
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// Whether the command runs git and every git in it only reads: then the
/// bash tool neutralises the repository's command hooks for the call. A
/// command that also runs a git the person approved (`git commit`) keeps
/// the repository's settings, which that approval covered.
pub fn runs_read_only_git(analysis: &ShellAnalysis) -> bool {
    if !analysis.is_complete() {
        return false;
    }
    let mut any = false;
    for cmd in &analysis.commands {
        let runs_git = layers(&cmd.words)
            .iter()
            .any(|l| l.first().is_some_and(|n| basename(n) == "git"));
        if !runs_git {
            continue;
        }
        any = true;
        if readonly::check(cmd).is_err() {
            return false;
        }
    }
    any
}

/// A unified diff of git's external-diff arguments (path, old file, old
/// hex, old mode, new file, …): what `git diff` shows without the
/// repository's own program. diff(1) exits 1 when files differ.
pub const PLAIN_EXTERNAL_DIFF: &str =
    "sh -c 'diff -u --label \"a/$1\" --label \"b/$1\" -- \"$2\" \"$5\"; [ $? -le 1 ]' git-diff";

/// The settings that neutralise a repository's hooks, given the names of
/// the keys its configuration sets (`git config --list --name-only`).
pub fn neutralising_settings(repo_keys: &[String]) -> Vec<(String, String)> {
    let sha256 = repo_keys
        .iter()
        .any(|k| k.eq_ignore_ascii_case("extensions.objectformat"));
    let empty_tree = if sha256 {
        EMPTY_TREE_SHA256
    } else {
        EMPTY_TREE_SHA1
    };
    let mut out: Vec<(String, String)> = [
        ("core.fsmonitor", "false"),
        ("core.pager", "cat"),
        ("core.hooksPath", "/dev/null"),
        ("core.attributesFile", "/dev/null"),
        ("attr.tree", empty_tree),
        ("log.showSignature", "false"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for key in repo_keys {
        let lower = key.to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('.').collect();
        let value = match (parts.first().copied(), parts.last().copied(), parts.len()) {
            (Some("diff"), Some("external"), 2) => PLAIN_EXTERNAL_DIFF,
            (Some("diff"), Some("command"), 3..) => PLAIN_EXTERNAL_DIFF,
            (Some("diff"), Some("textconv"), 3..) => "cat",
            (Some("filter"), Some("clean" | "smudge"), 3..) => "cat",
            (Some("filter"), Some("process"), 3..) => "",
            (Some("pager"), _, 2) => "false",
            _ => continue,
        };
        if !out.iter().any(|(k, _)| k.eq_ignore_ascii_case(key)) {
            out.push((key.clone(), value.to_string()));
        }
    }
    out
}

/// The environment that neutralises the hooks of the repository at `cwd`
/// for one git process (or a shell running git): `GIT_PAGER` and
/// `GIT_CONFIG_COUNT` settings appended to any the environment has.
pub fn neutralising_env(cwd: &Path) -> Vec<(String, String)> {
    let settings = neutralising_settings(&repository_keys(cwd));
    let base: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let count = settings.len();
    let mut out = vec![("GIT_PAGER".to_string(), "cat".to_string())];
    for (i, (key, value)) in settings.into_iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{}", base + i), key));
        out.push((format!("GIT_CONFIG_VALUE_{}", base + i), value));
    }
    out.push(("GIT_CONFIG_COUNT".to_string(), (base + count).to_string()));
    out
}

/// Settings that keep git from starting any transport, ssh, proxy or
/// credential program: cairn's own git calls never need the network.
const NO_TRANSPORT: &[(&str, &str)] = &[
    ("protocol.allow", "never"),
    ("credential.helper", ""),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
];

/// The environment of one of cairn's own git calls in the repository at
/// `cwd`: every hook `neutralising_settings` knows, no transport at all
/// (so a partial clone's lazy fetch starts nothing), no prompt. The
/// person's own `GIT_CONFIG_COUNT` settings are replaced, not appended to.
pub fn helper_env(cwd: &Path) -> Vec<(String, String)> {
    let mut settings = neutralising_settings(&repository_keys(cwd));
    settings.extend(
        NO_TRANSPORT
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let mut out: Vec<(String, String)> = [
        ("GIT_PAGER", "cat"),
        ("GIT_NO_LAZY_FETCH", "1"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_SSH_COMMAND", "false"),
        ("GIT_SSH", "false"),
        ("GIT_ASKPASS", "true"),
        ("SSH_ASKPASS", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    out.push(("GIT_CONFIG_COUNT".to_string(), settings.len().to_string()));
    for (i, (key, value)) in settings.into_iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{i}"), key));
        out.push((format!("GIT_CONFIG_VALUE_{i}"), value));
    }
    out
}

/// What a key the repository's own configuration sets is overridden with
/// in every git a command runs, approved or not: the settings that make
/// git start a program when it talks to a remote (ssh, a proxy, a
/// credential helper, the remote's upload/receive program) or that run a
/// program in the person's later git (fsmonitor). An approval of
/// `git fetch` is an approval of git, not of what the repository names.
pub fn transport_override(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('.').collect();
    match (parts.first().copied(), parts.last().copied(), parts.len()) {
        (Some("core"), Some("sshcommand"), 2) => Some("ssh"),
        (Some("core"), Some("gitproxy"), 2) => Some(""),
        (Some("core"), Some("askpass"), 2) => Some(""),
        (Some("core"), Some("fsmonitor"), 2) => Some("false"),
        (Some("credential"), Some("helper"), _) => Some(""),
        (Some("remote"), Some("uploadpack"), 3..) => Some("git-upload-pack"),
        (Some("remote"), Some("receivepack"), 3..) => Some("git-receive-pack"),
        (Some("remote"), Some("proxy"), 3..) => Some(""),
        (Some("http"), Some("proxy"), _) => Some(""),
        _ => None,
    }
}

/// `GIT_CONFIG_COUNT` settings for any git a command runs in the
/// repository at `cwd`: the repository's own program-naming transport keys
/// overridden, and the `ext::` transport (which runs a command) refused.
pub fn transport_env(cwd: &Path) -> Vec<(String, String)> {
    let mut settings = vec![("protocol.ext.allow".to_string(), "never".to_string())];
    for key in local_keys(cwd) {
        if let Some(value) = transport_override(&key) {
            settings.push((key, value.to_string()));
        }
    }
    let base: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut out = Vec::new();
    let count = settings.len();
    for (i, (key, value)) in settings.into_iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{}", base + i), key));
        out.push((format!("GIT_CONFIG_VALUE_{}", base + i), value));
    }
    out.push(("GIT_CONFIG_COUNT".to_string(), (base + count).to_string()));
    out
}

/// The keys the repository's own files set (`.git/config`, the worktree's
/// and what they include): what the repository, not the person, decides.
fn local_keys(cwd: &Path) -> Vec<String> {
    config_names(
        cwd,
        &["config", "--local", "--list", "--name-only", "--includes"],
    )
}

/// The names of the keys the configuration of the repository at `cwd`
/// sets. Reading configuration runs no program.
fn repository_keys(cwd: &Path) -> Vec<String> {
    config_names(cwd, &["config", "--list", "--name-only", "--includes"])
}

/// How long reading a repository's configuration may take.
const CONFIG_READ_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// `git config …` names, read in the kernel sandbox layer (read-only, no
/// terminal, no network: cheap to start): an `[include] path` the
/// repository names may be `/dev/tty`, a terminal's `/dev/pts/N` or a
/// FIFO, which git would open and wait on, reading what the person types.
/// Bounded in time whatever it meets.
fn config_names(cwd: &Path, args: &[&str]) -> Vec<String> {
    // One for the process: its caches are made once, not before every
    // command.
    static SANDBOX: std::sync::OnceLock<crate::sandbox::Sandbox> = std::sync::OnceLock::new();
    let sandbox = SANDBOX.get_or_init(crate::sandbox::Sandbox::default_for_user);
    let policy = sandbox
        .policy_in(cwd, crate::sandbox::Layer::Kernel)
        .map(|mut p| {
            p.mode = crate::config::SandboxMode::ReadOnly;
            // Reading config writes nothing: not even the temporary
            // folder, which may hold the workspace (`sandbox::
            // writes_workspace`); only the device files stay.
            p.writable.retain(|w| w.starts_with("/dev"));
            p.network = false;
            p
        });
    let Ok(mut cmd) = crate::sandbox::std_command("git".as_ref(), policy.as_ref()) else {
        return Vec::new();
    };
    cmd.args(args).current_dir(cwd).env("GIT_CONFIG_COUNT", "0");
    let Some(out) = crate::sandbox::output_within(&mut cmd, CONFIG_READ_LIMIT) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    #[test]
    fn only_commands_whose_every_git_reads_are_neutralised() {
        for yes in [
            "git status",
            "git diff | head",
            "cd src && git log -3",
            "ls; git show",
        ] {
            assert!(runs_read_only_git(&parse(yes)), "{yes}");
        }
        for no in [
            "ls",
            "git status && git commit -m x",
            "git push",
            "echo $((",
        ] {
            assert!(!runs_read_only_git(&parse(no)), "{no}");
        }
    }

    #[test]
    fn every_hook_the_repository_sets_is_overridden() {
        let keys: Vec<String> = ["diff.external", "diff.evil.textconv", "filter.lfs.process"]
            .iter()
            .map(|k| k.to_string())
            .collect();
        let settings = neutralising_settings(&keys);
        let value = |k: &str| {
            settings
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(value("core.fsmonitor"), Some("false"));
        assert_eq!(value("diff.external"), Some(PLAIN_EXTERNAL_DIFF));
        assert_eq!(value("diff.evil.textconv"), Some("cat"));
        assert_eq!(value("filter.lfs.process"), Some(""));
        assert_eq!(value("attr.tree"), Some(EMPTY_TREE_SHA1));
    }

    #[test]
    fn a_repositorys_transport_programs_are_overridden() {
        assert_eq!(transport_override("core.sshCommand"), Some("ssh"));
        assert_eq!(transport_override("credential.https://x.helper"), Some(""));
        assert_eq!(
            transport_override("remote.origin.uploadpack"),
            Some("git-upload-pack")
        );
        assert_eq!(transport_override("core.fsmonitor"), Some("false"));
        assert_eq!(transport_override("user.name"), None);
        assert_eq!(transport_override("remote.origin.url"), None);
    }
}
