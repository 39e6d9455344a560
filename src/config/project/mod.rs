//! What a project's `.cairn/config.toml` may do on its own, and what waits
//! until the person trusts the project.
//!
//! A repository is someone else's text. Whatever in its config makes cairn
//! stricter is applied at once; whatever loosens cairn, runs a program, or
//! could send the person's key somewhere else is held back and listed, and
//! applies only once the person trusts the project (see `trust.rs`). A value
//! equal to the person's own setting adds nothing and is not asked about.
//!
//! | field | from an untrusted project |
//! |---|---|
//! | `provider`, `model` | held (could send the key or the code elsewhere) |
//! | `[providers.*]` (every field) | held |
//! | `theme`, `[keys]` | held (a key map could swap Allow and Deny) |
//! | `[ui] notify`, `[ui] scroll_regions`, `[ui] colors`, `[ui] on_exit`, `[ui] export_dir` | held (how your terminal is driven is yours to say) |
//! | `max_turns`, `max_tokens`, `retry.max_attempts` | lower applies, higher held (`max_tokens` is held when you set none: the model's default is unknown here) |
//! | `reasoning` | `false` applies, `true` held |
//! | `retry.base_delay_ms`, `retry.max_delay_ms` | held |
//! | `permissions.mode` | stricter applies (auto < smart < always-ask < chat), looser held |
//! | `permissions.allow` | held, rule by rule |
//! | `permissions.deny` | applies |
//! | `permissions.repeat_limit` | lower applies, higher held |
//! | `context.compact_threshold` | held |
//! | `context.instructions_max_bytes` | lower applies, higher held |
//! | `[mcp.NAME]` with `disabled = true` | applies (disables that server) |
//! | `[mcp.NAME]` otherwise (command, url, env, headers, `trusted`) | held, server by server |
//! | `[shell] env_passthrough` | held, name by name |
//! | `[models."ID"]` | held, model by model (windows and prices shape compaction and the cost shown) |
//! | `effort` | held |
//! | `[search]` | held (the service the model's searches go to) |
//! | `[lsp] enabled = false`, `[lsp.NAME] disabled = true` | applies (turns servers off) |
//! | `[lsp.NAME]` otherwise, `[lsp] enabled = true` | held, server by server (runs a program) |
//! | `[acp] editor_terminals = false` | applies; `true` is ignored, trusted or not (`config::acp`) |
//! | `[format] enabled = false`, `[format.NAME] disabled = true` | applies (turns formatting off) |
//! | `[format] timeout_secs` | lower applies, higher held |
//! | `[format.NAME]` otherwise, `[format] enabled = true` | held, language by language (runs a formatter over the repository's config and plugins) |
//!
//! Trusted or not, a project never pairs an address with the person's key:
//! a provider or search service at an address the project names gets no
//! key from the person's environment ([`withhold_keys`]).
//!
//! A new section gets its own `split_*` function below: put what tightens
//! into `s.out` and call `s.hold` for everything else.

use std::fmt;

use super::Mode;
use super::{Config, ConfigFile, McpServerConfig, ProviderConfig};

/// One thing the project file would add that needs the person's trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Where it is in the file: `permissions.allow`, `mcp.build`, ...
    pub key: String,
    /// What it would do, in full (a server's whole command line).
    pub what: String,
}

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", printable(&self.key), printable(&self.what))
    }
}

/// A project file sorted into what applies anyway and what is held.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// Only the tightening settings; lay it over the person's own config.
    pub tightening: ConfigFile,
    pub held: Vec<Held>,
}

/// Sorts `project` against `base` (the person's own, merged config).
pub fn split(base: &ConfigFile, project: &ConfigFile) -> Split {
    let mut s = Sorter {
        base,
        current: Config {
            file: base.clone(),
            ..Config::default()
        },
        out: ConfigFile::default(),
        held: Vec::new(),
    };
    split_top(&mut s, project);
    split_providers(&mut s, project);
    split_retry(&mut s, project);
    split_permissions(&mut s, project);
    split_context(&mut s, project);
    split_keys(&mut s, project);
    split_mcp(&mut s, project);
    split_lsp(&mut s, project);
    split_format(&mut s, project);
    split_shell(&mut s, project);
    split_models(&mut s, project);
    Split {
        tightening: s.out,
        held: s.held,
    }
}

struct Sorter<'a> {
    base: &'a ConfigFile,
    /// The base with its defaults, for comparisons.
    current: Config,
    out: ConfigFile,
    held: Vec<Held>,
}

impl Sorter<'_> {
    fn hold(&mut self, key: impl Into<String>, what: impl Into<String>) {
        self.held.push(Held {
            key: key.into(),
            what: what.into(),
        });
    }

    /// A number where lower is stricter: lower applies, higher is held.
    fn lower<T: PartialOrd + Copy + fmt::Display>(
        &mut self,
        key: &str,
        project: Option<T>,
        current: Option<T>,
    ) -> Option<T> {
        let p = project?;
        match current {
            Some(c) if p <= c => Some(p),
            Some(c) => {
                self.hold(key, format!("raises `{key}` to {p} (yours: {c})"));
                None
            }
            None => {
                self.hold(key, format!("sets `{key}` to {p}"));
                None
            }
        }
    }

    /// A value with no stricter side: held unless it equals the person's.
    fn same<T: PartialEq + fmt::Debug>(
        &mut self,
        key: &str,
        project: &Option<T>,
        base: &Option<T>,
    ) {
        if let Some(p) = project
            && base.as_ref() != Some(p)
        {
            self.hold(key, format!("sets `{key}` to {p:?}"));
        }
    }
}

fn split_top(s: &mut Sorter, p: &ConfigFile) {
    let base = s.base;
    s.same("provider", &p.provider, &base.provider);
    s.same("model", &p.model, &base.model);
    s.same("theme", &p.theme, &base.theme);
    s.same("ui.notify", &p.ui.notify, &base.ui.notify);
    s.same("ui.colors", &p.ui.colors, &base.ui.colors);
    s.same("ui.on_exit", &p.ui.on_exit, &base.ui.on_exit);
    // Where the person's conversations are written.
    s.same("ui.export_dir", &p.ui.export_dir, &base.ui.export_dir);
    s.same(
        "ui.scroll_regions",
        &p.ui.scroll_regions,
        &base.ui.scroll_regions,
    );
    s.same("effort", &p.effort, &base.effort);
    // Where the model's searches (and so words of the code) would go, and
    // which of the person's keys would go with them: said in words.
    if let Some(search) = &p.search
        && base.search.as_ref() != Some(search)
    {
        let to = search.url.as_deref().unwrap_or("its default address");
        let mine = base
            .search
            .as_ref()
            .filter(|b| b.provider == search.provider);
        let key = if search.url.is_some() && search.url != mine.and_then(|m| m.url.clone()) {
            NO_KEY.to_string()
        } else {
            match &search.api_key_env {
                Some(var) => format!(", sending the value of ${var} as its key"),
                None => String::new(),
            }
        };
        s.hold(
            "search",
            format!("sends web searches to {} at {to}{key}", search.provider),
        );
    }
    let turns = Some(s.current.max_turns());
    s.out.max_turns = s.lower("max_turns", p.max_turns, turns);
    s.out.max_tokens = s.lower("max_tokens", p.max_tokens, base.max_tokens);
    match p.reasoning {
        Some(false) => s.out.reasoning = Some(false),
        Some(true) if base.reasoning == Some(false) => {
            s.hold("reasoning", "turns reasoning on (yours: off)")
        }
        _ => {}
    }
}

fn split_providers(s: &mut Sorter, p: &ConfigFile) {
    for (name, entry) in &p.providers {
        let base = s.base.providers.get(name).cloned().unwrap_or_default();
        let fields = provider_fields(entry, &base);
        if !fields.is_empty() {
            let elsewhere = entry.base_url.is_some() && entry.base_url != base.base_url;
            s.hold(
                format!("providers.{name}"),
                format!(
                    "sets provider `{name}`: {}{}",
                    fields.join(", "),
                    if elsewhere { NO_KEY } else { "" }
                ),
            );
        }
    }
}

/// The fields of `p` that differ from `base`, as `key = value`.
fn provider_fields(p: &ProviderConfig, base: &ProviderConfig) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |key: &str, v: Option<String>, b: Option<String>| {
        if let Some(v) = v
            && Some(&v) != b.as_ref()
        {
            out.push(format!("{key} = {v}"));
        }
    };
    field("kind", p.kind.clone(), base.kind.clone());
    field("base_url", p.base_url.clone(), base.base_url.clone());
    field(
        "api_key_env",
        p.api_key_env.clone(),
        base.api_key_env.clone(),
    );
    field("model", p.model.clone(), base.model.clone());
    field(
        "small_model",
        p.small_model.clone(),
        base.small_model.clone(),
    );
    field(
        "azure",
        p.azure.map(|a| a.to_string()),
        base.azure.map(|a| a.to_string()),
    );
    field(
        "timeout_secs",
        p.timeout_secs.map(|t| t.to_string()),
        base.timeout_secs.map(|t| t.to_string()),
    );
    field(
        "idle_timeout_secs",
        p.idle_timeout_secs.map(|t| t.to_string()),
        base.idle_timeout_secs.map(|t| t.to_string()),
    );
    field("project", p.project.clone(), base.project.clone());
    field("location", p.location.clone(), base.location.clone());
    field("region", p.region.clone(), base.region.clone());
    field("profile", p.profile.clone(), base.profile.clone());
    for (k, v) in &p.headers {
        field(
            &format!("headers.{k}"),
            Some(v.clone()),
            base.headers.get(k).cloned(),
        );
    }
    for (k, v) in &p.query {
        field(
            &format!("query.{k}"),
            Some(v.clone()),
            base.query.get(k).cloned(),
        );
    }
    out
}

/// Makes the person's keys flow only to addresses the person named. In
/// `full` (the person's config with a trusted project's laid over it), a
/// provider or `[search]` service whose address the project set (one that
/// differs from the person's own) is marked to get no key or credential
/// from the person's environment; where the address stays the person's,
/// the variable its key is read from stays the person's too. So a
/// repository cannot pair `base_url = "https://its.server"` with
/// `api_key_env = "ANTHROPIC_API_KEY"` (or with a preset's usual key).
pub fn withhold_keys(base: &ConfigFile, full: &mut ConfigFile) {
    for (name, entry) in full.providers.iter_mut() {
        let mine = base.providers.get(name);
        let my_url = mine.and_then(|m| m.base_url.clone());
        if entry.base_url.is_some() && entry.base_url != my_url {
            entry.key_withheld = entry.base_url.clone();
        } else {
            entry.api_key_env = mine.and_then(|m| m.api_key_env.clone());
        }
    }
    if let Some(search) = full.search.as_mut() {
        let mine = base
            .search
            .as_ref()
            .filter(|b| b.provider == search.provider);
        let my_url = mine.and_then(|m| m.url.clone());
        if search.url.is_some() && search.url != my_url {
            search.key_withheld = true;
        } else {
            search.api_key_env = mine.and_then(|m| m.api_key_env.clone());
        }
    }
}

/// What the trust question adds to a provider or service the project
/// points elsewhere.
const NO_KEY: &str = " (an address from this project: cairn sends it no key of yours)";

fn split_retry(s: &mut Sorter, p: &ConfigFile) {
    let base = s.base;
    let (r, b) = (&p.retry, &base.retry);
    let attempts = Some(b.max_attempts.unwrap_or(super::DEFAULT_RETRY_ATTEMPTS));
    s.out.retry.max_attempts = s.lower("retry.max_attempts", r.max_attempts, attempts);
    s.same("retry.base_delay_ms", &r.base_delay_ms, &b.base_delay_ms);
    s.same("retry.max_delay_ms", &r.max_delay_ms, &b.max_delay_ms);
}

/// How strict a mode is: a project may only move up this scale.
pub fn strictness(mode: Mode) -> u8 {
    match mode {
        Mode::Auto => 0,
        Mode::Smart => 1,
        Mode::AlwaysAsk => 2,
        Mode::Plan => 3,
        Mode::Chat => 4,
    }
}

fn split_permissions(s: &mut Sorter, p: &ConfigFile) {
    let perms = &p.permissions;
    if let Some(mode) = perms.mode {
        let current = s.current.mode();
        if strictness(mode) >= strictness(current) {
            s.out.permissions.mode = Some(mode);
        } else {
            s.hold(
                "permissions.mode",
                format!("loosens the permission mode to {mode} (yours: {current})"),
            );
        }
    }
    for rule in &perms.allow {
        if !s.base.permissions.allow.contains(rule) {
            s.hold(
                "permissions.allow",
                format!("allows without asking: {rule}"),
            );
        }
    }
    s.out.permissions.deny = perms.deny.clone();
    let limit = Some(s.current.repeat_limit());
    s.out.permissions.repeat_limit = s.lower("permissions.repeat_limit", perms.repeat_limit, limit);
}

fn split_context(s: &mut Sorter, p: &ConfigFile) {
    let c = &p.context;
    let whole = s.base;
    let base = &whole.context;
    s.same(
        "context.compact_threshold",
        &c.compact_threshold,
        &base.compact_threshold,
    );
    let max = Some(s.current.instructions_max_bytes());
    s.out.context.instructions_max_bytes = s.lower(
        "context.instructions_max_bytes",
        c.instructions_max_bytes,
        max,
    );
}

fn split_models(s: &mut Sorter, p: &ConfigFile) {
    for (id, m) in &p.models {
        if s.base.models.get(id) != Some(m) {
            s.hold(
                format!("models.{id}"),
                format!("describes model `{id}` (window, prices or capabilities)"),
            );
        }
    }
}

fn split_keys(s: &mut Sorter, p: &ConfigFile) {
    for (action, key) in &p.keys {
        if s.base.keys.get(action) != Some(key) {
            s.hold(
                format!("keys.{action}"),
                format!("binds `{action}` to {key}"),
            );
        }
    }
}

fn split_mcp(s: &mut Sorter, p: &ConfigFile) {
    for (name, server) in &p.mcp {
        let base = s.base.mcp.get(name);
        if server.disabled {
            // Turning a server off only ever removes something.
            if let Some(b) = base {
                s.out.mcp.insert(
                    name.clone(),
                    McpServerConfig {
                        disabled: true,
                        ..b.clone()
                    },
                );
            }
            continue;
        }
        if base == Some(server) {
            continue;
        }
        s.hold(format!("mcp.{name}"), describe_server(name, server));
    }
}

/// Everything a server entry would do, with its whole command line.
pub fn describe_server(name: &str, m: &McpServerConfig) -> String {
    let mut text = match (&m.command, &m.url) {
        (Some(cmd), _) => {
            let line: Vec<String> = std::iter::once(cmd)
                .chain(&m.args)
                .map(|w| shell_quote(w))
                .collect();
            format!("runs MCP server `{name}`: {}", line.join(" "))
        }
        (None, Some(url)) => format!("connects to MCP server `{name}` at {url}"),
        (None, None) => format!("defines MCP server `{name}` (no command or url)"),
    };
    for (k, v) in &m.env {
        text.push_str(&format!("; env {k}={v}"));
    }
    for (k, v) in &m.headers {
        text.push_str(&format!("; header {k}: {v}"));
    }
    let secrets = secret_references(m);
    if !secrets.is_empty() {
        text.push_str(&format!(
            "; is given the secret environment variable{} {} (`${{NAME}}` is filled in)",
            if secrets.len() == 1 { "" } else { "s" },
            secrets.join(", ")
        ));
    }
    if m.trusted {
        text.push_str("; trusted = true (its tools run without asking)");
    }
    if m.command.is_some() && m.sandbox == Some(false) {
        text.push_str(
            "; sandbox = false (it runs OUTSIDE the sandbox, as you, and can load any file \
             here: it stops when a session changes the workspace, and you are asked again)",
        );
    }
    text
}

/// The secret-looking variables a server entry names as `${NAME}` in its
/// command, arguments, env, url or headers: their values go to the server
/// (and, in arguments, into its command line) though the dialog shows only
/// the name.
fn secret_references(m: &McpServerConfig) -> Vec<String> {
    let texts = m
        .command
        .iter()
        .chain(&m.args)
        .chain(m.env.values())
        .chain(&m.url)
        .chain(m.headers.values());
    let mut names = Vec::new();
    for text in texts {
        let mut rest = text.as_str();
        while let Some(start) = rest.find("${") {
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else { break };
            let name = &after[..end];
            if super::secrets::looks_secret(name) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
            rest = &after[end + 1..];
        }
    }
    names
}

fn split_lsp(s: &mut Sorter, p: &ConfigFile) {
    match p.lsp.enabled {
        Some(false) => s.out.lsp.enabled = Some(false),
        Some(true) if s.base.lsp.enabled == Some(false) => {
            s.hold("lsp.enabled", "turns language servers back on");
        }
        _ => {}
    }
    for (name, server) in &p.lsp.servers {
        if server.disabled {
            // Turning a server off only ever removes something.
            s.out.lsp.servers.insert(
                name.clone(),
                crate::config::lsp::LspServerConfig {
                    disabled: true,
                    ..Default::default()
                },
            );
            continue;
        }
        if s.base.lsp.servers.get(name) == Some(server) {
            continue;
        }
        let command = match (&server.command, &server.args) {
            (Some(c), args) => std::iter::once(c)
                .chain(args.iter().flatten())
                .map(|w| shell_quote(w))
                .collect::<Vec<_>>()
                .join(" "),
            (None, _) => format!("changes the built-in `{name}` language server"),
        };
        s.hold(
            format!("lsp.{name}"),
            format!("runs the language server `{name}`: {command}"),
        );
    }
}

fn split_format(s: &mut Sorter, p: &ConfigFile) {
    let whole = s.base;
    let (f, base) = (&p.format, &whole.format);
    match f.enabled {
        Some(false) => s.out.format.enabled = Some(false),
        Some(true) if base.enabled != Some(true) => s.hold(
            "format.enabled",
            "formats every applied edit with the installed formatter of its language \
             (rustfmt, ruff or black, prettier, gofmt, clang-format), which reads this \
             repository's formatter config and plugins",
        ),
        _ => {}
    }
    let timeout = Some(base.timeout().as_secs());
    s.out.format.timeout_secs = s.lower("format.timeout_secs", f.timeout_secs, timeout);
    for (name, language) in &f.languages {
        if language.disabled {
            // Turning a language off only ever removes something.
            s.out.format.languages.insert(
                name.clone(),
                crate::config::format::FormatLanguage {
                    disabled: true,
                    ..Default::default()
                },
            );
            continue;
        }
        if base.languages.get(name) == Some(language) {
            continue;
        }
        s.hold(format!("format.{name}"), describe_format(name, language));
    }
}

/// What a `[format.NAME]` table would run, in full.
fn describe_format(name: &str, l: &crate::config::format::FormatLanguage) -> String {
    let with = match (&l.command, l.formatter) {
        (Some(words), _) => format!(
            "the command {}",
            words
                .iter()
                .map(|w| shell_quote(w))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        (None, Some(crate::config::format::FormatterName::Lsp)) => {
            "the language server's formatting".to_string()
        }
        (None, Some(f)) => format!("`{}`", f.as_str()),
        (None, None) => "its built-in formatter".to_string(),
    };
    let files = match &l.filetypes {
        Some(types) => format!(" (files: {})", types.join(", ")),
        None => String::new(),
    };
    format!("formats `{name}` files{files} after each applied edit with {with}")
}

fn split_shell(s: &mut Sorter, p: &ConfigFile) {
    for name in &p.shell.env_passthrough {
        if !s.base.shell.env_passthrough.contains(name) {
            s.hold(
                "shell.env_passthrough",
                format!("passes the environment variable {name} to commands"),
            );
        }
    }
}

/// A word as a shell would need it written to mean exactly that word.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Control characters shown as escapes, so a config cannot drive the
/// terminal it is shown on; so are the characters that reorder or hide text
/// (bidirectional overrides, zero-width ones), so what is shown is what runs.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else if reorders_or_hides(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Bidirectional marks, embeddings, overrides and isolates; zero-width and
/// other invisible format characters.
fn reorders_or_hides(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

#[cfg(test)]
mod tests;
