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

pub use crate::config::secrets::looks_secret;

/// The password of a URL that carries one (`postgres://me:pw@host/db`, as
/// in `DATABASE_URL`), whatever the variable is called.
pub fn url_password(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once("://")?;
    let plain_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let authority = rest.split(['/', '?', '#']).next()?;
    let (userinfo, _host) = authority.rsplit_once('@')?;
    let (_user, password) = userinfo.split_once(':')?;
    (plain_scheme && !password.is_empty()).then_some(password)
}

/// Whether a variable, by its name or its value, holds a secret.
fn holds_secret(name: &str, value: &str) -> bool {
    looks_secret(name)
        || url_password(value).is_some()
        || crate::config::secrets::value_looks_secret(value)
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
            let (name, value) = (name.to_string_lossy(), value.to_string_lossy());
            // Passed-through secrets are still secrets in the output.
            if policy.key_vars.contains(name.as_ref()) || holds_secret(&name, &value) {
                if let Some(password) = url_password(&value) {
                    values.push((password.to_string(), name.to_string()));
                }
                values.push((value.into_owned(), name.into_owned()));
            }
        }
        values.retain(|(v, _)| v.trim().chars().count() >= MIN_SECRET_LEN);
        let forms: Vec<(String, String)> = (values.iter())
            .flat_map(|(v, name)| super::secret_forms::forms(v, name))
            .collect();
        values.extend(forms);
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
        let known = known.into_iter().chain(config_secrets(config));
        SecretPolicy::new(key_vars, config.file.shell.env_passthrough.clone(), known)
    }

    /// Whether a child process must not inherit `name` set to `value`.
    pub fn withheld(&self, name: &str, value: &str) -> bool {
        !self.passthrough.contains(name)
            && (self.key_vars.contains(name) || holds_secret(name, value))
    }

    /// The variables of cairn's environment a child must not inherit.
    pub fn withheld_now(&self) -> Vec<OsString> {
        std::env::vars_os()
            .filter(|(k, v)| self.withheld(&k.to_string_lossy(), &v.to_string_lossy()))
            .map(|(k, _)| k)
            .collect()
    }

    /// `text` with every known secret value replaced by a marker naming
    /// where it came from.
    ///
    /// A key-like value is also caught in pieces: output cut in the middle,
    /// or read in chunks (`job_output`), can hold only part of it. Every run
    /// of [`piece_len`] characters of it is replaced, so at a cut at most
    /// that many characters less one stay on the shorter side.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (value, name) in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &format!("[redacted: {name}]"));
            }
        }
        // Whole values first, so one that begins another is named as itself.
        for (value, name) in &self.values {
            if let Some(k) = piece_len(value) {
                out = redact_pieces(&out, value, k, name);
            }
        }
        out
    }

    pub fn has_values(&self) -> bool {
        !self.values.is_empty()
    }
}

/// Secrets written into the config itself rather than named by variable: a
/// provider's or MCP server's auth headers, an MCP server's secret-looking
/// `env` entries. A server may echo them, the config file may be viewed.
fn config_secrets(config: &Config) -> Vec<(String, String)> {
    let auth_header = |h: &str| {
        let h = h.to_ascii_lowercase();
        looks_secret(&h) || h == "authorization" || h.contains("key") || h.contains("token")
    };
    // `Bearer xyz`: the credential is the last word.
    let value = |v: &str| v.split_whitespace().last().unwrap_or("").to_string();
    let mut out = Vec::new();
    for (name, p) in &config.file.providers {
        for (h, v) in p.headers.iter().filter(|(h, _)| auth_header(h)) {
            out.push((value(v), format!("providers.{name}.headers.{h}")));
        }
    }
    for (name, m) in &config.file.mcp {
        for (h, v) in m.headers.iter().filter(|(h, _)| auth_header(h)) {
            out.push((value(v), format!("mcp.{name}.headers.{h}")));
        }
        for (k, v) in m.env.iter().filter(|(k, _)| looks_secret(k)) {
            out.push((v.clone(), format!("mcp.{name}.env.{k}")));
        }
    }
    // `${NAME}` is filled from the environment, which is covered already.
    out.retain(|(v, _)| !v.contains("${"));
    out
}

/// How long a piece of `value` is redacted on its own: for values that look
/// like keys (16 characters or more, no spaces, not a URL), half the value
/// up to 12 characters; `None` for the rest, which only match whole.
fn piece_len(value: &str) -> Option<usize> {
    let n = value.chars().count();
    let key_like = n >= 16 && !value.contains("://") && !value.chars().any(char::is_whitespace);
    key_like.then(|| (n / 2).clamp(8, 12))
}

/// `text` with every run of `k` characters of `secret` (and whatever runs
/// join them) replaced by one marker.
fn redact_pieces(text: &str, secret: &str, k: usize, name: &str) -> String {
    let bounds: Vec<usize> = secret
        .char_indices()
        .map(|(i, _)| i)
        .chain([secret.len()])
        .collect();
    let windows: std::collections::HashSet<&str> =
        bounds.windows(k + 1).map(|w| &secret[w[0]..w[k]]).collect();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let starts: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    for w in starts.windows(k + 1) {
        let (start, end) = (w[0], w[k]);
        if !windows.contains(&text[start..end]) {
            continue;
        }
        match spans.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => spans.push((start, end)),
        }
    }
    if spans.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&text[at..start]);
        out.push_str(&format!("[redacted: part of {name}]"));
        at = end;
    }
    out.push_str(&text[at..]);
    out
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
    if let Some(display) = &mut out.display {
        for d in display.diffs_mut() {
            d.old = policy.redact(&d.old);
            d.new = policy.redact(&d.new);
        }
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

/// Keeps cairn's own environment away from the processes it starts.
///
/// Scrubbing a child's environment is not enough: any process of the same
/// user can read `/proc/<cairn's pid>/environ`, which shows the environment
/// cairn was started with, keys included. So, on Linux, cairn (1) marks
/// itself not dumpable, which makes its `/proc` files, memory and `ptrace`
/// out of reach of other processes of the same user, and (2) because that
/// does not stop a process running as root, moves the secret variables to
/// fresh memory and blanks them in the block `/proc/<pid>/environ` shows.
///
/// Call it first thing in `main`, while cairn has one thread.
pub fn shield_own_environment() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: only sets a flag of this process.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        let keys: Vec<&str> = crate::llm::resolve::PRESET_NAMES
            .iter()
            .filter_map(|n| crate::llm::preset(n).and_then(|p| p.key_env))
            .collect();
        // SAFETY: called before any other thread exists (see above).
        unsafe {
            blank_initial_environment(|name, value| {
                holds_secret(name, value) || keys.contains(&name)
            })
        };
    }
}

#[cfg(target_os = "linux")]
unsafe extern "C" {
    static mut environ: *mut *mut libc::c_char;
}

/// Points each entry `secret` names at a copy, then zeroes the original
/// bytes (in the block the kernel shows as `/proc/<pid>/environ`).
///
/// # Safety
/// No other thread may read or change the environment meanwhile.
#[cfg(target_os = "linux")]
unsafe fn blank_initial_environment(secret: impl Fn(&str, &str) -> bool) {
    use std::ffi::{CStr, CString};
    // SAFETY: `environ` is the C library's null-terminated array of
    // "NAME=value" strings; the caller guarantees nobody else touches it.
    unsafe {
        let mut entry = environ;
        if entry.is_null() {
            return;
        }
        while !(*entry).is_null() {
            let original = *entry;
            let bytes = CStr::from_ptr(original).to_bytes();
            let eq = bytes.iter().position(|&b| b == b'=');
            if let Some(eq) = eq
                && secret(
                    &String::from_utf8_lossy(&bytes[..eq]),
                    &String::from_utf8_lossy(&bytes[eq + 1..]),
                )
                && let Ok(copy) = CString::new(bytes)
            {
                let len = bytes.len();
                // Leaked on purpose: the environment keeps pointing at it.
                *entry = copy.into_raw();
                std::ptr::write_bytes(original.add(eq + 1), 0, len - eq - 1);
            }
            entry = entry.add(1);
        }
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
            "MYSQL_PWD",
            "SMTP_PASS",
            "GPG_PASSPHRASE",
            "SENTRY_DSN",
            "registry_creds",
            "pgpassword",
            "my_api_key",
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
            "PWD",
            "OLDPWD",
            "GIT_ASKPASS",
            "DATABASE_URL",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn a_url_with_a_password_is_a_secret_whatever_its_name() {
        let p = SecretPolicy::new([], [], []);
        let url = "postgres://app:s3cr3t-pw@db.internal:5432/app?sslmode=require";
        assert_eq!(url_password(url), Some("s3cr3t-pw"));
        assert!(p.withheld("DATABASE_URL", url));
        assert!(p.withheld("redis_url", "redis://:hunter2hunter2@cache:6379/0"));
        for harmless in [
            "postgres://localhost/app",
            "https://user@example.com/x",
            "https://example.com/a:b@c",
            "mailto:me@example.com",
            "not a url: x:y@z",
        ] {
            assert!(!p.withheld("DATABASE_URL", harmless), "{harmless}");
        }
    }

    #[test]
    fn passthrough_wins_and_key_vars_are_withheld_whatever_their_name() {
        let p = SecretPolicy::new(["WORK_LLM".to_string()], ["GITHUB_TOKEN".to_string()], []);
        assert!(p.withheld("WORK_LLM", "x"));
        assert!(p.withheld("AWS_SESSION_TOKEN", "x"));
        assert!(!p.withheld("GITHUB_TOKEN", "x"));
        assert!(!p.withheld("PATH", "/bin"));
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
    fn secrets_written_in_the_config_are_redacted_too() {
        let file = crate::config::parse(
            "[providers.work]\nheaders = { Authorization = \"Bearer tok-work-0011223344\", X-Trace = \"trace-id-5566778899\" }\n\
             [mcp.gh]\ncommand = \"gh-mcp\"\nenv = { GITHUB_TOKEN = \"ghp_literal_aabbccdd\", LOG = \"verbose-logging\" }\n\
             [mcp.web]\nurl = \"http://h/mcp\"\nheaders = { X-Api-Key = \"${WEB_KEY}\" }\n",
        )
        .unwrap();
        let config = Config {
            file,
            ..Config::default()
        };
        let p = SecretPolicy::for_run(&config, None);
        let out = p.redact("tok-work-0011223344 ghp_literal_aabbccdd trace-id-5566778899 verbose-logging ${WEB_KEY}");
        assert_eq!(
            out,
            "[redacted: providers.work.headers.Authorization] [redacted: mcp.gh.env.GITHUB_TOKEN] \
             trace-id-5566778899 verbose-logging ${WEB_KEY}"
        );
    }

    #[test]
    fn pieces_of_a_key_left_by_a_cut_are_redacted() {
        let key = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let p = SecretPolicy::new([], [], [(key.to_string(), "anthropic key".to_string())]);
        let cut = format!("head {}\n[... cut ...]\n{} tail", &key[..20], &key[30..]);
        let out = p.redact(&cut);
        assert_eq!(
            out,
            "head [redacted: part of anthropic key]\n[... cut ...]\n\
             [redacted: part of anthropic key] tail"
        );
        // Whole, it is named as whole; short runs and other text stay.
        let out = p.redact(&format!("{key} and {} and sk-ant-api", &key[..12]));
        assert_eq!(
            out,
            "[redacted: anthropic key] and [redacted: part of anthropic key] and sk-ant-api"
        );
        // Values that are not key-like only match whole.
        let url = "postgres://app:pw@localhost:5432/app";
        let p = SecretPolicy::new([], [], [(url.to_string(), "DATABASE_URL".to_string())]);
        assert_eq!(p.redact("at localhost:5432/app"), "at localhost:5432/app");
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
