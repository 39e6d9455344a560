//! What child processes inherit from cairn's environment, and the secret
//! values scrubbed from tool output.
//!
//! Every process cairn starts for the model — `bash`, background jobs, MCP
//! stdio servers — goes through [`scrub`]: the variables holding provider
//! keys and every variable whose name looks like a secret are removed, except
//! those the person lists in `[shell] env_passthrough` (an MCP server also
//! gets what its own `env` names). The values of those variables, and the key
//! cairn itself uses, are replaced in tool output by [`SecretPolicy::redact`]
//! before the model, the screen or the store see it.
//!
//! The environment is one per process, so the policy is too: `install` sets
//! it once the configuration is read; before that a default built from the
//! environment alone applies.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::sync::{Arc, OnceLock, RwLock};

use crate::config::Config;
use crate::llm::ResolvedProvider;

/// Values shorter than this are not redacted: they would match everywhere.
const MIN_SECRET_LEN: usize = 8;

/// Whether a variable's name says it holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const SUFFIXES: [&str; 5] = ["_KEY", "_APIKEY", "_TOKEN", "_PAT", "_AUTH"];
    const PARTS: [&str; 5] = ["SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY"];
    const EXACT: [&str; 4] = ["API_KEY", "APIKEY", "TOKEN", "PASSWORD"];
    SUFFIXES.iter().any(|s| n.ends_with(s))
        || PARTS.iter().any(|p| n.contains(p))
        || EXACT.contains(&n.as_str())
}

#[derive(Debug, Default)]
pub struct SecretPolicy {
    /// Withheld besides the secret-looking names: the variables providers
    /// read their keys from, whatever they are called.
    key_vars: BTreeSet<String>,
    /// Passed on purpose (`[shell] env_passthrough`).
    passthrough: BTreeSet<String>,
    /// `(value, variable)`, longest value first.
    values: Vec<(String, String)>,
}

impl SecretPolicy {
    /// From the process environment and these settings.
    pub fn new(
        key_vars: impl IntoIterator<Item = String>,
        passthrough: impl IntoIterator<Item = String>,
        known_keys: impl IntoIterator<Item = (String, String)>,
    ) -> SecretPolicy {
        let mut policy = SecretPolicy {
            key_vars: key_vars.into_iter().collect(),
            passthrough: passthrough.into_iter().collect(),
            values: Vec::new(),
        };
        let mut values: Vec<(String, String)> = known_keys.into_iter().collect();
        for (name, value) in std::env::vars_os() {
            let name = name.to_string_lossy();
            // Passed-through secrets are still secrets in the output.
            if policy.key_vars.contains(name.as_ref()) || looks_secret(&name) {
                values.push((value.to_string_lossy().into_owned(), name.into_owned()));
            }
        }
        values.retain(|(v, _)| v.trim().chars().count() >= MIN_SECRET_LEN);
        values.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.cmp(b)));
        values.dedup_by(|a, b| a.0 == b.0);
        policy.values = values;
        policy
    }

    /// The policy for a run: every provider's key variable, the person's
    /// pass-through list, and the key in use.
    pub fn for_run(config: &Config, provider: Option<&ResolvedProvider>) -> SecretPolicy {
        let mut key_vars: Vec<String> = config
            .file
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .collect();
        for name in crate::llm::resolve::PRESET_NAMES {
            if let Some(var) = crate::llm::preset(name).and_then(|p| p.key_env) {
                key_vars.push(var.to_string());
            }
        }
        let known = provider.and_then(|p| {
            let key = p.settings.api_key.clone()?;
            Some((key, format!("{} key", p.settings.name)))
        });
        SecretPolicy::new(key_vars, config.file.shell.env_passthrough.clone(), known)
    }

    /// Whether a child process must not inherit `name`.
    pub fn withheld(&self, name: &str) -> bool {
        !self.passthrough.contains(name) && (self.key_vars.contains(name) || looks_secret(name))
    }

    /// The variables of cairn's environment a child must not inherit.
    pub fn withheld_now(&self) -> Vec<OsString> {
        std::env::vars_os()
            .map(|(k, _)| k)
            .filter(|k| self.withheld(&k.to_string_lossy()))
            .collect()
    }

    /// `text` with every known secret value replaced by a marker naming
    /// where it came from.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (value, name) in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &format!("[redacted: {name}]"));
            }
        }
        out
    }

    pub fn has_values(&self) -> bool {
        !self.values.is_empty()
    }
}

/// Redacts a tool's output in place: its text and the diff shown for it.
pub fn redact_output(out: &mut super::ToolOutput) {
    let policy = current();
    if !policy.has_values() {
        return;
    }
    for part in &mut out.content {
        if let crate::conversation::ResultContent::Text { text } = part {
            *text = policy.redact(text);
        }
    }
    if let Some(super::ToolDisplay::Diff { old, new, .. }) = &mut out.display {
        *old = policy.redact(old);
        *new = policy.redact(new);
    }
}

fn slot() -> &'static RwLock<Option<Arc<SecretPolicy>>> {
    static SLOT: OnceLock<RwLock<Option<Arc<SecretPolicy>>>> = OnceLock::new();
    SLOT.get_or_init(|| RwLock::new(None))
}

/// Sets the policy for every child process and tool output from now on.
pub fn install(policy: SecretPolicy) {
    let mut s = slot().write().unwrap_or_else(|e| e.into_inner());
    *s = Some(Arc::new(policy));
}

/// The policy in force (a default from the environment before `install`).
pub fn current() -> Arc<SecretPolicy> {
    if let Some(p) = slot().read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return p.clone();
    }
    static DEFAULT: OnceLock<Arc<SecretPolicy>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| Arc::new(SecretPolicy::new([], [], [])))
        .clone()
}

/// Removes what a child must not inherit from `cmd`'s environment. Call it
/// before setting variables the child is meant to have.
pub fn scrub(cmd: &mut tokio::process::Command) {
    scrub_with(&current(), cmd.as_std_mut());
}

/// [`scrub`] for a blocking `std` command (cairn's own `git` calls).
pub fn scrub_std(cmd: &mut std::process::Command) {
    scrub_with(&current(), cmd);
}

fn scrub_with(policy: &SecretPolicy, cmd: &mut std::process::Command) {
    for name in policy.withheld_now() {
        cmd.env_remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "DB_PASSWORD",
            "MYSQL_PWD_SECRET",
            "client_secret",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SSH_PRIVATE_KEY_FILE",
            "NPM_TOKEN",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "SSH_AUTH_SOCK",
            "TOKENIZERS_PARALLELISM",
            "KEYMAP",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn passthrough_wins_and_key_vars_are_withheld_whatever_their_name() {
        let p = SecretPolicy::new(["WORK_LLM".to_string()], ["GITHUB_TOKEN".to_string()], []);
        assert!(p.withheld("WORK_LLM"));
        assert!(p.withheld("AWS_SESSION_TOKEN"));
        assert!(!p.withheld("GITHUB_TOKEN"));
        assert!(!p.withheld("PATH"));
    }

    /// A real child: the withheld variable is gone, and a variable set on
    /// the command afterwards (an MCP server's own `env`) is there.
    #[tokio::test]
    async fn a_child_does_not_inherit_what_is_withheld_unless_set_again() {
        let p = SecretPolicy::new(["HOME".to_string()], [], []);
        let run = |set_again: bool| {
            let mut cmd = tokio::process::Command::new("/bin/sh");
            cmd.arg("-c").arg("echo \"${HOME:-unset}\"");
            scrub_with(&p, cmd.as_std_mut());
            if set_again {
                cmd.env("HOME", "/named/by/the/server");
            }
            cmd.output()
        };
        let out = run(false).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "unset");
        let out = run(true).await.unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "/named/by/the/server"
        );
    }

    #[test]
    fn known_values_are_redacted_longest_first_and_short_ones_left() {
        let p = SecretPolicy::new(
            [],
            [],
            [
                ("sk-abcdefgh".to_string(), "openai key".to_string()),
                ("sk-abcdefgh-longer".to_string(), "other key".to_string()),
                ("short".to_string(), "tiny key".to_string()),
            ],
        );
        let out = p.redact("a sk-abcdefgh-longer b sk-abcdefgh c short");
        assert_eq!(
            out,
            "a [redacted: other key] b [redacted: openai key] c short"
        );
    }
}
