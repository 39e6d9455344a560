//! Configuration: `<config dir>/cairn/config.toml` overlaid by
//! `<project>/.cairn/config.toml`, then the command line.
//!
//! Each file is checked on its own, so an error names the file, the line and
//! the key; nothing starts half-configured.
//!
//! The project file is someone else's text until the person trusts the
//! project: only what tightens applies before that (`project/` lists every
//! field and what a project may do with it, `project_file` reads a file a
//! repository supplies without following it out, `trust/` keeps the
//! answers).
//!
//! Writing goes one way for every file cairn changes for the person (a
//! setting, the chosen provider, permission rules, MCP servers): `settings`
//! reads, edits with comments kept, and writes beside-and-renamed. `keys`
//! keeps API keys typed at set-up; `mode`, `sandbox` and `ui` are sections
//! of the file.

pub mod acp;
pub mod effort;
pub mod format;
pub mod keys;
pub mod log;
pub mod lsp;
mod mode;
pub mod own_rules;
pub mod project;
pub mod project_file;
mod range;
mod sandbox;
pub mod secrets;
mod settings;
pub mod trust;
pub mod ui;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use mode::Mode;
pub use sandbox::{SandboxConfig, SandboxMode};
pub use settings::{SaveError, edit_toml, read_toml, save_setting, write_toml};
pub use ui::UiConfig;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    ProjectFile(#[from] project_file::ProjectFileError),
}

/// One provider entry: `[providers.NAME]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The wire format: "openai", "anthropic", ... (checked when the
    /// provider is resolved at start-up).
    pub kind: Option<String>,
    pub base_url: Option<String>,
    /// The environment variable holding the key.
    pub api_key_env: Option<String>,
    /// The default model for this provider.
    pub model: Option<String>,
    /// A cheaper model for titles and summaries.
    pub small_model: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Azure OpenAI: the key goes in an `api-key` header.
    pub azure: Option<bool>,
    /// Seconds to wait for a response to start.
    #[serde(default, deserialize_with = "range::seconds")]
    pub timeout_secs: Option<u64>,
    /// Seconds a started response may stay silent before it counts as
    /// stalled (and is retried).
    #[serde(default, deserialize_with = "range::seconds")]
    pub idle_timeout_secs: Option<u64>,
    /// Seconds a response may take to send its first byte (a local server
    /// reads the whole prompt first).
    #[serde(default, deserialize_with = "range::seconds")]
    pub first_byte_timeout_secs: Option<u64>,
    /// The largest single event of a streamed answer, in MB.
    #[serde(default, deserialize_with = "range::megabytes")]
    pub max_event_mb: Option<u64>,
    /// The largest whole answer, in MB.
    #[serde(default, deserialize_with = "range::megabytes")]
    pub max_response_mb: Option<u64>,
    /// Vertex AI: the Google Cloud project and location.
    pub project: Option<String>,
    pub location: Option<String>,
    /// Bedrock: the AWS region and profile.
    pub region: Option<String>,
    pub profile: Option<String>,
    /// `false` asks for whole answers instead of streams, for servers that
    /// cannot stream (or cannot stream with tools).
    pub stream: Option<bool>,
    /// Fields added to every request body as they are (`{ top_k = 20 }`),
    /// for what a server needs that cairn does not send.
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Set when a trusted project's file names this provider's address:
    /// no key or cloud credential from the person's environment goes to
    /// it (`project::withhold_keys`); the address is said.
    #[serde(skip)]
    pub key_withheld: Option<String>,
}

/// Tries of a model request when `[retry] max_attempts` is not set.
pub const DEFAULT_RETRY_ATTEMPTS: u32 = 5;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    #[serde(default, deserialize_with = "range::attempts")]
    pub max_attempts: Option<u32>,
    #[serde(default, deserialize_with = "range::millis")]
    pub base_delay_ms: Option<u64>,
    #[serde(default, deserialize_with = "range::millis")]
    pub max_delay_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    pub mode: Option<Mode>,
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default, deserialize_with = "range::count")]
    pub repeat_limit: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// Fraction of the window at which cairn compacts (0.5 to 0.95).
    #[serde(default, deserialize_with = "range::fraction")]
    pub compact_threshold: Option<f64>,
    /// Bytes of project instructions (AGENTS.md, ...) taken at most.
    #[serde(default, deserialize_with = "range::instruction_bytes")]
    pub instructions_max_bytes: Option<usize>,
    /// Windows (in tokens) below which requests carry a shorter system
    /// prompt and compact tool descriptions; 0 turns that off.
    #[serde(default, deserialize_with = "range::tokens")]
    pub small_window: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// For `url`: `http` (streamable HTTP, the default) or `sse` (the
    /// older HTTP+SSE transport).
    pub transport: Option<String>,
    /// Its tools run without asking.
    #[serde(default)]
    pub trusted: bool,
    /// Its tools that the server marks read-only (`readOnlyHint`) run
    /// without asking. The server's hints alone never do that.
    #[serde(default)]
    pub trust_read_only_hints: bool,
    /// Both limits below at once (the older setting).
    #[serde(default, deserialize_with = "range::seconds")]
    pub timeout_secs: Option<u64>,
    /// How long it may take to start and list its tools (default 10 s).
    #[serde(default, deserialize_with = "range::seconds")]
    pub startup_timeout_secs: Option<u64>,
    /// How long one tool call may take (default 120 s).
    #[serde(default, deserialize_with = "range::seconds")]
    pub tool_timeout_secs: Option<u64>,
    /// Only these of its tools are offered (all when absent).
    pub enabled_tools: Option<Vec<String>>,
    /// These of its tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    #[serde(default)]
    pub disabled: bool,
    /// Run a stdio server inside the sandbox (read-only, network on).
    /// A project's server does unless this is `false`; the person's own
    /// do when this is `true`.
    pub sandbox: Option<bool>,
    /// Set by cairn for a server a trusted project's file defines.
    #[serde(skip)]
    pub from_project: bool,
}

impl McpServerConfig {
    /// The words of its command line and the values of its environment,
    /// as written: what names the files it runs.
    pub fn command_words(&self) -> Vec<String> {
        (self
            .command
            .iter()
            .chain(&self.args)
            .chain(self.env.values()))
        .cloned()
        .collect()
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShellConfig {
    /// Secret-looking environment variables commands get anyway.
    #[serde(default)]
    pub env_passthrough: Vec<String>,
}

/// What one file may hold. Every field is optional so files overlay.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The provider to use, by name.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub theme: Option<String>,
    /// Model round trips allowed in one turn.
    #[serde(default, deserialize_with = "range::count")]
    pub max_turns: Option<u32>,
    #[serde(default, deserialize_with = "range::answer_tokens")]
    pub max_tokens: Option<u32>,
    pub reasoning: Option<bool>,
    /// How hard reasoning models think (`minimal` … `xhigh`).
    pub effort: Option<effort::Effort>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    #[serde(default)]
    pub retry: RetryConfig,
    #[serde(default)]
    pub permissions: PermissionsConfig,
    #[serde(default)]
    pub context: ContextConfig,
    #[serde(default)]
    pub keys: BTreeMap<String, String>,
    #[serde(default)]
    pub mcp: BTreeMap<String, McpServerConfig>,
    #[serde(default)]
    pub shell: ShellConfig,
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// `[ui]`: notifications and drawing.
    #[serde(default)]
    pub ui: UiConfig,
    /// `[models."ID"]`: what cairn should know of a model, over the
    /// built-in catalogue.
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    /// `[compat]`: which other agents' files cairn reads.
    #[serde(default)]
    pub compat: CompatConfig,
    /// `[hooks]`, in Claude Code's shape. Never overlaid: the hooks room
    /// reads each file's own (`crate::extensions::hooks`), so every hook
    /// keeps the file it came from, and lists a project's for trust.
    #[serde(default)]
    pub hooks: BTreeMap<String, toml::Value>,
    /// `[agents]`: sub-agents.
    #[serde(default)]
    pub agents: AgentsConfig,
    /// `[search]`: the service the `web_search` tool asks.
    pub search: Option<SearchConfig>,
    /// `[log]`: the size and count of cairn's log files (the person's own
    /// config only).
    #[serde(default)]
    pub log: log::LogConfig,
    /// `[lsp]`: the language servers that check edits.
    #[serde(default)]
    pub lsp: lsp::LspConfig,
    /// `[acp]`: what `cairn acp` uses of the editor (a project may only
    /// turn things off).
    #[serde(default)]
    pub acp: acp::AcpConfig,
    /// `[format]`: formatting a file after an edit is applied.
    #[serde(default)]
    pub format: format::FormatConfig,
}

/// `[agents]`: how many sub-agents run at once (4 unless set).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentsConfig {
    #[serde(default, deserialize_with = "range::count_usize")]
    pub max_parallel: Option<usize>,
}

impl AgentsConfig {
    pub fn max_parallel(&self) -> usize {
        self.max_parallel.unwrap_or(4).clamp(1, 16)
    }
}

/// `[search] provider = "searxng" | "brave" | "tavily"`, its `url` and the
/// variable holding its key; or `"native"` (the default: the model
/// provider's own search, where it has one) or `"off"` (no search).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    #[serde(default)]
    pub provider: String,
    /// How many searches the provider may run in one request (Anthropic's
    /// `max_uses`), 1 to 20; 5 unless set.
    pub max_uses: Option<u32>,
    pub url: Option<String>,
    pub api_key_env: Option<String>,
    /// Set when a trusted project's file names the service's address: no
    /// key from the person's environment goes to it.
    #[serde(skip)]
    pub key_withheld: bool,
}

impl SearchConfig {
    /// Whether `provider` names a search service cairn asks itself.
    pub fn names_backend(&self) -> bool {
        !matches!(self.provider.as_str(), "" | "native" | "off")
    }

    /// What is wrong with the section, if anything, besides the service's
    /// own settings (which `web_search::Backend` checks).
    pub fn problem(&self) -> Option<String> {
        match self.max_uses {
            Some(n) if !(1..=20).contains(&n) => Some(format!(
                "[search] max_uses = {n}: use a number from 1 to 20"
            )),
            _ => None,
        }
    }
}

/// Searches one request may run with the provider's own search when
/// nothing else is configured.
pub const NATIVE_SEARCH_MAX_USES: u32 = 5;

/// The provider's own search as `[search]` allows it: how many searches a
/// request may run, or `None` when a service of cairn's own is configured
/// (its `web_search` tool is offered instead) or search is `"off"`.
pub fn native_search(search: Option<&SearchConfig>) -> Option<u32> {
    match search {
        None => Some(NATIVE_SEARCH_MAX_USES),
        Some(c) if c.names_backend() || c.provider == "off" => None,
        Some(c) => Some(c.max_uses.unwrap_or(NATIVE_SEARCH_MAX_USES)),
    }
}

/// `[compat]`: read Claude Code's `.claude/` folders (commands, skills,
/// settings); on unless `claude = false`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CompatConfig {
    pub claude: Option<bool>,
}

impl CompatConfig {
    pub fn claude(&self) -> bool {
        self.claude.unwrap_or(true)
    }
}

/// One `[models."ID"]` entry. Prices in US dollars per million tokens.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    #[serde(default, deserialize_with = "range::tokens")]
    pub context_window: Option<u64>,
    #[serde(default, deserialize_with = "range::tokens")]
    pub max_output: Option<u64>,
    #[serde(default, deserialize_with = "range::price")]
    pub input_price: Option<f64>,
    #[serde(default, deserialize_with = "range::price")]
    pub output_price: Option<f64>,
    #[serde(default, deserialize_with = "range::price")]
    pub cache_read_price: Option<f64>,
    #[serde(default, deserialize_with = "range::price")]
    pub cache_write_price: Option<f64>,
    pub images: Option<bool>,
    pub reasoning: Option<bool>,
    /// This model's reasoning effort (the main model's, or the side
    /// model's for titles and summaries).
    pub effort: Option<effort::Effort>,
}

/// The merged configuration and where it came from.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub file: ConfigFile,
    pub global_path: Option<PathBuf>,
    pub project_path: PathBuf,
    /// The person's own rules for this project (see `own_rules`), when
    /// there is a config directory to keep them in.
    pub own_rules_path: Option<PathBuf>,
    /// True when neither file exists.
    pub is_empty: bool,
    /// The project file's settings that wait for trust, when it has any.
    pub pending: Option<trust::Pending>,
}

impl Config {
    pub fn mode(&self) -> Mode {
        self.file.permissions.mode.unwrap_or_default()
    }
    pub fn max_turns(&self) -> u32 {
        self.file.max_turns.unwrap_or(100)
    }
    pub fn repeat_limit(&self) -> u32 {
        self.file.permissions.repeat_limit.unwrap_or(3)
    }
    /// `[context] small_window`, 16k unless set.
    pub fn small_window(&self) -> u64 {
        self.file.context.small_window.unwrap_or(16_384)
    }

    pub fn compact_threshold(&self) -> f64 {
        self.file
            .context
            .compact_threshold
            .unwrap_or(0.8)
            .clamp(0.3, 0.98)
    }
    pub fn instructions_max_bytes(&self) -> usize {
        self.file
            .context
            .instructions_max_bytes
            .unwrap_or(32 * 1024)
    }
}

/// `<user config dir>/cairn` (honours `XDG_CONFIG_HOME` on Linux).
pub fn global_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cairn").map(|d| d.config_dir().to_path_buf())
}

/// `<user state dir>/cairn`, for logs and input history.
pub fn state_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cairn").map(|d| {
        d.state_dir()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| d.data_local_dir().to_path_buf())
    })
}

/// `<user data dir>/cairn` (honours `XDG_DATA_HOME` on Linux).
pub fn data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cairn").map(|d| d.data_dir().to_path_buf())
}

pub fn project_config_path(project_root: &Path) -> PathBuf {
    project_root.join(".cairn").join("config.toml")
}

/// Loads the global file, the person's own rules for this project, then
/// the project file over them.
pub fn load(project_root: &Path) -> Result<Config, ConfigError> {
    let dir = global_dir();
    let global_path = dir.as_ref().map(|d| d.join("config.toml"));
    let own = dir.map(|d| own_rules::path_in(&d, project_root));
    let config = load_layers(
        global_path.as_deref(),
        own.as_deref(),
        &project_config_path(project_root),
    )?;
    log::apply(&config.file.log);
    Ok(config)
}

/// [`load_layers`] without the person's own rules.
pub fn load_from(global: Option<&Path>, project: &Path) -> Result<Config, ConfigError> {
    load_layers(global, None, project)
}

/// The person's files are theirs; the project file applies only where it
/// tightens, and [`Config::trust_project`] lays the rest over once the
/// person agrees. The own rules join the person's before the project file
/// is sorted, so a rule the person granted is never asked about again.
pub fn load_layers(
    global: Option<&Path>,
    own: Option<&Path>,
    project: &Path,
) -> Result<Config, ConfigError> {
    let mut merged = ConfigFile::default();
    let mut any = false;
    if let Some((mut file, _)) = global.map(read_file).transpose()?.flatten() {
        merged.sandbox = std::mem::take(&mut file.sandbox);
        merged.overlay(file);
        any = true;
    }
    if let Some(path) = own {
        let rules = own_rules::read(path)?.permissions;
        any |= !(rules.allow.is_empty() && rules.deny.is_empty());
        merged.permissions.allow.extend(rules.allow);
        merged.permissions.deny.extend(rules.deny);
    }
    let mut pending = None;
    if let Some((mut file, text)) = read_project_file(project)? {
        any = true;
        // The project's sandbox section may only tighten the person's,
        // trusted or not: containment is the person's to loosen.
        merged.sandbox.tighten(std::mem::take(&mut file.sandbox));
        // How much of the person's disk cairn's log may take is theirs.
        file.log = Default::default();
        // Where commands run is the person's to say: a project only
        // turns the editor's terminals off.
        merged.acp.tighten(std::mem::take(&mut file.acp));
        let split = project::split(&merged, &file);
        let mut full = merged.clone();
        let servers: Vec<String> = (file.mcp.iter())
            .filter(|(name, server)| merged.mcp.get(*name) != Some(server))
            .map(|(name, _)| name.clone())
            .collect();
        full.overlay(file);
        // Keys go only where the person's own config (or a built-in
        // default) sends them, trusted project or not.
        project::withhold_keys(&merged, &mut full);
        for name in servers {
            if let Some(server) = full.mcp.get_mut(&name) {
                server.from_project = true;
            }
        }
        merged.overlay(split.tightening);
        if !split.held.is_empty() {
            pending = Some(trust::Pending {
                held: split.held,
                hash: trust::hash_text(text.as_bytes()),
                full,
            });
        }
    }
    Ok(Config {
        file: merged,
        global_path: global.map(Path::to_path_buf),
        project_path: project.to_path_buf(),
        own_rules_path: own.map(Path::to_path_buf),
        is_empty: !any,
        pending,
    })
}

/// The largest project config file cairn reads.
const MAX_PROJECT_FILE: u64 = 1024 * 1024;

/// The project's file, which lies at `<root>/.cairn/config.toml`: read only
/// when it stays inside that root (see `project_file.rs`).
fn read_project_file(path: &Path) -> Result<Option<(ConfigFile, String)>, ConfigError> {
    let root = path.parent().and_then(Path::parent);
    let over = project_file::Over::Refuse;
    let Some(contents) = project_file::read(root, path, MAX_PROJECT_FILE, over)? else {
        return Ok(None);
    };
    let text = String::from_utf8(contents.bytes).map_err(|_| ConfigError::Invalid {
        path: path.to_path_buf(),
        message: "not UTF-8 text".into(),
    })?;
    parse(&text)
        .map(|file| Some((file, text)))
        .map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })
}

/// A file parsed, with the text it was parsed from.
fn read_file(path: &Path) -> Result<Option<(ConfigFile, String)>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse(&text)
        .map(|file| Some((file, text)))
        .map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })
}

/// Parses one file; the error says the line, column and key.
pub fn parse(text: &str) -> Result<ConfigFile, String> {
    toml::from_str::<ConfigFile>(text).map_err(|e| describe_toml_error(text, &e))
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before
                .rsplit('\n')
                .next()
                .map(|l| l.chars().count())
                .unwrap_or(0)
                + 1;
            let src_line = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line}, column {col}: {msg}\n    {src_line}")
        }
        None => msg,
    }
}

/// A more specific file's value, when it sets one, replaces this one
/// (every section's `overlay` lays fields over each other so).
pub(crate) fn set<T>(dst: &mut Option<T>, src: Option<T>) {
    if src.is_some() {
        *dst = src;
    }
}

impl ConfigFile {
    /// Lays `other` (the more specific file) over `self`.
    fn overlay(&mut self, other: ConfigFile) {
        set(&mut self.provider, other.provider);
        set(&mut self.model, other.model);
        set(&mut self.theme, other.theme);
        set(&mut self.max_turns, other.max_turns);
        set(&mut self.max_tokens, other.max_tokens);
        set(&mut self.reasoning, other.reasoning);
        set(&mut self.effort, other.effort);
        set(&mut self.search, other.search);
        set(&mut self.ui.notify, other.ui.notify);
        set(&mut self.ui.scroll_regions, other.ui.scroll_regions);
        set(&mut self.ui.colors, other.ui.colors);
        set(&mut self.ui.on_exit, other.ui.on_exit);
        set(&mut self.ui.export_dir, other.ui.export_dir);
        set(&mut self.compat.claude, other.compat.claude);
        set(&mut self.agents.max_parallel, other.agents.max_parallel);
        set(&mut self.log.max_mb, other.log.max_mb);
        set(&mut self.log.files, other.log.files);
        for (id, m) in other.models {
            let entry = self.models.entry(id).or_default();
            set(&mut entry.context_window, m.context_window);
            set(&mut entry.max_output, m.max_output);
            set(&mut entry.input_price, m.input_price);
            set(&mut entry.output_price, m.output_price);
            set(&mut entry.cache_read_price, m.cache_read_price);
            set(&mut entry.cache_write_price, m.cache_write_price);
            set(&mut entry.images, m.images);
            set(&mut entry.reasoning, m.reasoning);
            set(&mut entry.effort, m.effort);
        }
        for (name, p) in other.providers {
            let entry = self.providers.entry(name).or_default();
            set(&mut entry.kind, p.kind);
            set(&mut entry.base_url, p.base_url);
            set(&mut entry.api_key_env, p.api_key_env);
            set(&mut entry.model, p.model);
            set(&mut entry.small_model, p.small_model);
            set(&mut entry.azure, p.azure);
            set(&mut entry.timeout_secs, p.timeout_secs);
            set(&mut entry.idle_timeout_secs, p.idle_timeout_secs);
            set(
                &mut entry.first_byte_timeout_secs,
                p.first_byte_timeout_secs,
            );
            set(&mut entry.max_event_mb, p.max_event_mb);
            set(&mut entry.max_response_mb, p.max_response_mb);
            set(&mut entry.stream, p.stream);
            set(&mut entry.extra_body, p.extra_body);
            set(&mut entry.project, p.project);
            set(&mut entry.location, p.location);
            set(&mut entry.region, p.region);
            set(&mut entry.profile, p.profile);
            entry.headers.extend(p.headers);
            entry.query.extend(p.query);
        }
        set(&mut self.retry.max_attempts, other.retry.max_attempts);
        set(&mut self.retry.base_delay_ms, other.retry.base_delay_ms);
        set(&mut self.retry.max_delay_ms, other.retry.max_delay_ms);
        set(&mut self.permissions.mode, other.permissions.mode);
        set(
            &mut self.permissions.repeat_limit,
            other.permissions.repeat_limit,
        );
        self.permissions.allow.extend(other.permissions.allow);
        self.permissions.deny.extend(other.permissions.deny);
        set(
            &mut self.context.compact_threshold,
            other.context.compact_threshold,
        );
        set(
            &mut self.context.instructions_max_bytes,
            other.context.instructions_max_bytes,
        );
        self.keys.extend(other.keys);
        self.mcp.extend(other.mcp);
        self.lsp.overlay(other.lsp);
        self.format.overlay(other.format);
        self.acp.overlay(other.acp);
        self.shell
            .env_passthrough
            .extend(other.shell.env_passthrough);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_file_reports_line_and_key() {
        let text = "provider = \"anthropic\"\n\n[providers.work]\nkind = \"openai\"\nbase_ulr = \"http://x\"\n";
        let err = parse(text).unwrap_err();
        assert!(err.contains("line 5"), "{err}");
        assert!(err.contains("base_ulr"), "{err}");
    }

    #[test]
    fn syntax_error_reports_line() {
        let err = parse("model = \"x\"\nmode = = 3\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn wrong_type_reports_line() {
        let err = parse("max_turns = \"many\"\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn project_overlays_global() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("g.toml");
        let p = dir.path().join("p.toml");
        std::fs::write(
            &g,
            "provider = \"a\"\ntheme = \"light\"\n[providers.a]\nkind = \"openai\"\nmodel = \"m1\"\n[permissions]\nallow = [\"bash(ls*)\"]\n",
        )
        .unwrap();
        std::fs::write(
            &p,
            "[providers.a]\nmodel = \"m2\"\n[permissions]\nallow = [\"edit(src/**)\"]\nmode = \"auto\"\n",
        )
        .unwrap();
        let mut c = load_from(Some(&g), &p).unwrap();
        // Until trusted, the project's allow rule and looser mode wait.
        assert_eq!(c.file.permissions.allow.len(), 1);
        assert_eq!(c.mode(), Mode::Smart);
        assert_eq!(c.held().len(), 3, "{:?}", c.held());
        c.trust_project();
        assert_eq!(c.file.theme.as_deref(), Some("light"));
        let a = &c.file.providers["a"];
        assert_eq!(a.model.as_deref(), Some("m2"));
        assert_eq!(a.kind.as_deref(), Some("openai"));
        assert_eq!(c.file.permissions.allow.len(), 2);
        assert_eq!(c.mode(), Mode::Auto);
        assert!(!c.is_empty);
    }

    #[test]
    fn broken_file_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "[permissions]\nmode = \"yolo\"\n").unwrap();
        let err = load_from(None, &p).unwrap_err().to_string();
        assert!(err.contains("config.toml"), "{err}");
        assert!(err.contains("line 2"), "{err}");
    }
}
