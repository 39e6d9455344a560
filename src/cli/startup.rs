//! Shared start-up of both front ends: configuration, provider, tools, gate
//! and the agent task.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::sync::mpsc;

use crate::agent::store_sink::{SessionInfo, StoreSink};
use crate::agent::{Agent, AgentOptions, instructions};
use crate::config::trust::{Standing, TrustStore};
use crate::config::{self, Config};
use crate::llm::ResolvedProvider;
use crate::mcp::McpManager;
use crate::permission::Mode;
use crate::permission::gate::Gate;
use crate::permission::rules::Rules;
use crate::protocol::{AgentCommand, AgentEvent};
use crate::tools::Registry;
use crate::tools::env::SecretPolicy;

/// What the command line may override.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub mode: Option<Mode>,
    /// `--trust-project`: the project's settings apply for this run.
    pub trust_project: bool,
    /// `--no-sandbox`: commands run unconfined.
    pub no_sandbox: bool,
    /// `--max-turns`: model round trips in one turn.
    pub max_turns: Option<u32>,
    /// `--allow`: permission rules for this run only.
    pub allow: Vec<String>,
    /// `--effort`: how hard reasoning models think.
    pub effort: Option<crate::config::effort::Effort>,
    /// `--no-save`: the session is not recorded.
    pub no_save: bool,
}

pub struct Startup {
    pub cwd: PathBuf,
    pub root: PathBuf,
    pub config: Config,
    pub provider: Option<ResolvedProvider>,
    pub mode: Mode,
    /// Where the project's settings that need trust stand.
    pub trust: Standing,
    /// Why a trust answer could not be read or kept, when it could not.
    pub trust_problem: Option<String>,
    pub sandbox: crate::sandbox::Sandbox,
    /// `--trust-project` was given (a project's agents are trusted too).
    pub trust_flag: bool,
    /// The project's skills and commands that grant tools, as the trust
    /// question (and its fingerprint) covered them at the start.
    pub held_grants: Vec<crate::extensions::GrantEntry>,
    /// Claude Code's `permissions`, as the trust question showed them.
    pub claude_rules: crate::extensions::claude_permissions::ClaudeRules,
    /// `--no-save`: nothing goes to the session store.
    pub no_save: bool,
    /// `--model` / `--mode` (or `--yolo`) were given: a resumed session
    /// keeps them instead of its own.
    pub model_pinned: bool,
    pub mode_pinned: bool,
}

/// Reads the configuration and picks the provider. A broken config is an
/// error here, before anything starts.
pub async fn prepare(overrides: &Overrides) -> Result<Startup> {
    resolve(load(overrides)?, overrides).await
}

/// The same for a directory other than the current one (an editor's
/// session names its own).
pub async fn prepare_at(overrides: &Overrides, cwd: PathBuf) -> Result<Startup> {
    resolve(load_at(overrides, cwd)?, overrides).await
}

/// Reads the configuration and applies a stored trust answer (or
/// `--trust-project`); nothing from the project has run yet.
pub fn load(overrides: &Overrides) -> Result<Startup> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    load_at(overrides, cwd)
}

fn load_at(overrides: &Overrides, cwd: PathBuf) -> Result<Startup> {
    let root = instructions::project_root(&cwd);
    let mut config = config::load(&root)?;
    // A project's hooks and agents are held for trust like its settings,
    // with their files' content: a changed script or agent asks again.
    // Claude Code's permissions and the granting skills and commands are
    // read once: the question shows, and trust then allows, the same.
    let roots = roots_at(&root, &config);
    let claude_rules = crate::extensions::claude_permissions::read(&roots);
    let grants = crate::extensions::granting_entries(&roots);
    let (held, fingerprint) = crate::extensions::project_held_with(&roots, &claude_rules, &grants);
    config.hold_more(held, &fingerprint);
    let held_grants = grants.into_iter().map(|(e, _)| e).collect();
    let store = TrustStore::default_location();
    let (trust, trust_problem) =
        match config.apply_trust(store.as_ref().ok(), &root, overrides.trust_project) {
            Ok(t) => {
                let problem = store.err().filter(|_| t == Standing::Undecided);
                (t, problem.map(|e| e.to_string()))
            }
            Err(e) => (Standing::Undecided, Some(e.to_string())),
        };
    if let Some(search) = &config.file.search {
        if let Some(why) = search.problem() {
            anyhow::bail!("{why}");
        }
        if search.names_backend() {
            crate::tools::web_search::Backend::from_config(search, |k| std::env::var(k).ok())
                .map_err(|why| anyhow::anyhow!("{why}"))?;
        }
    }
    // The command line's own settings hold for this run, trusted or not.
    if overrides.effort.is_some() {
        config.file.effort = overrides.effort;
    }
    if overrides.max_turns.is_some() {
        config.file.max_turns = overrides.max_turns;
    }
    config
        .file
        .permissions
        .allow
        .extend(overrides.allow.iter().cloned());
    Ok(Startup {
        cwd,
        root,
        mode: overrides.mode.unwrap_or_else(|| config.mode()),
        provider: None,
        trust,
        trust_problem,
        trust_flag: overrides.trust_project,
        held_grants,
        claude_rules,
        no_save: overrides.no_save,
        model_pinned: overrides.model.is_some(),
        mode_pinned: overrides.mode.is_some(),
        sandbox: crate::sandbox::Sandbox::from_config(&config.file.sandbox, overrides.no_sandbox),
        config,
    })
    .inspect(|s| crate::tools::env::install(SecretPolicy::for_run(&s.config, None)))
}

/// Picks the provider from the (trust-settled) configuration.
pub async fn resolve(mut s: Startup, overrides: &Overrides) -> Result<Startup> {
    crate::llm::ModelCatalog::install_overrides(s.config.file.models.clone());
    // A key pasted at first start stands in for its unset variable.
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| config::keys::stored_key(k))
    };
    s.provider = crate::llm::resolve_provider(
        &s.config,
        overrides.provider.as_deref(),
        overrides.model.as_deref(),
        &env,
    )
    .await?;
    s.mode = overrides.mode.unwrap_or_else(|| s.config.mode());
    crate::tools::env::install(SecretPolicy::for_run(&s.config, s.provider.as_ref()));
    Ok(s)
}

impl Startup {
    /// Whether the project's settings that need trust apply in this run
    /// (trusted, or `--trust-project`).
    pub fn project_trusted(&self) -> bool {
        matches!(self.trust, Standing::Trusted | Standing::TrustedThisRun) || self.trust_flag
    }

    /// Stores the person's answer to the trust question and applies it.
    pub fn answer_trust(&mut self, trusted: bool) {
        let result = TrustStore::default_location()
            .and_then(|store| self.config.answer_trust(&store, &self.root, trusted));
        match result {
            Ok(t) => self.trust = t,
            Err(e) => {
                // The answer still holds for this run.
                if trusted {
                    self.config.trust_project();
                    self.trust = Standing::TrustedThisRun;
                } else {
                    self.trust = Standing::Refused;
                }
                self.trust_problem = Some(format!("{e}; the answer holds for this run only"));
            }
        }
    }

    /// What a run without the interface says about ignored settings.
    pub fn trust_note(&self) -> Option<String> {
        let ignored = matches!(self.trust, Standing::Undecided | Standing::Refused);
        let mut note = ignored.then(|| {
            config::trust::ignored_message(
                &self.config.project_path,
                self.config.held(),
                self.trust,
            )
        });
        if let Some(p) = &self.trust_problem {
            let text = format!("cairn: {p}");
            note = Some(match note {
                Some(n) => format!("{text}\n{n}"),
                None => text,
            });
        }
        note
    }
}

/// Where the provider's key comes from, for error messages: its variable,
/// or the file the first-start set-up stored it in.
fn key_source(config: &config::Config, name: &str) -> Option<String> {
    let var = crate::llm::resolve::key_env_of(config, name)?;
    if std::env::var(&var).is_ok_and(|v| !v.trim().is_empty()) {
        return Some(var);
    }
    match config::keys::keys_dir().map(|d| d.join(&var)) {
        Some(file) if file.exists() => Some(format!("{} (stored at set-up)", file.display())),
        _ => Some(var),
    }
}

/// How to set up a provider, for a first run.
pub fn setup_help() -> String {
    let cfg = config::global_dir()
        .map(|d| d.join("config.toml").display().to_string())
        .unwrap_or_else(|| "~/.config/cairn/config.toml".into());
    format!(
        "No model provider is configured.\n\n\
         Set one up in any of these ways:\n\
         • export ANTHROPIC_API_KEY=…   (Anthropic; ANTHROPIC_BASE_URL overrides the URL)\n\
         • export OPENAI_API_KEY=…      (OpenAI; OPENAI_BASE_URL for any compatible server)\n\
         • run a local server such as Ollama on 127.0.0.1:11434 (`ollama serve`)\n\
         • or name a provider in {cfg}:\n\n\
         \x20   provider = \"work\"\n\
         \x20   [providers.work]\n\
         \x20   kind = \"openai\"            # or \"anthropic\"\n\
         \x20   base_url = \"https://…/v1\"\n\
         \x20   api_key_env = \"WORK_API_KEY\"\n\
         \x20   model = \"…\"\n\n\
         Then start cairn again."
    )
}

/// A running agent and what the front end needs of it.
pub struct Running {
    pub commands: mpsc::UnboundedSender<AgentCommand>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// The recorder, when the session store could be opened.
    pub sink: Option<Arc<StoreSink>>,
    /// The MCP servers (started in the background).
    pub mcp: Arc<McpManager>,
    /// The language servers (none started until a tool touches a file).
    pub lsp: Arc<crate::lsp::LspManager>,
    /// Why sessions are not being recorded, when they are not.
    pub store_error: Option<String>,
    /// The agent's task; it ends after `Shutdown` once a running turn has
    /// wound down (its cancelled calls answered and recorded).
    pub task: tokio::task::JoinHandle<()>,
    /// The session's hooks, for `/hooks`.
    pub hooks: Arc<crate::extensions::hooks::Hooks>,
    /// Entries of Claude Code's `permissions` cairn could not use.
    pub rule_problems: Vec<String>,
}

/// How a front end that ends sessions of its own (an editor's thread
/// closing) holds one: the two ends of its conversation with the agent,
/// and what ends it in order.
pub type Parts = (
    mpsc::UnboundedSender<AgentCommand>,
    mpsc::UnboundedReceiver<AgentEvent>,
    Closer,
);

impl Running {
    pub fn into_parts(self) -> Parts {
        let closer = Closer {
            task: self.task,
            sink: self.sink,
            mcp: self.mcp,
            lsp: self.lsp,
        };
        (self.commands, self.events, closer)
    }
}

/// Ends a running session once `Shutdown` is sent: its turn winds down,
/// then its language servers stop, the store takes every write, and its
/// MCP servers stop.
pub struct Closer {
    task: tokio::task::JoinHandle<()>,
    sink: Option<Arc<StoreSink>>,
    mcp: Arc<McpManager>,
    lsp: Arc<crate::lsp::LspManager>,
}

impl Closer {
    /// Waits at most `patience` for each step that can hang.
    pub async fn close(self, patience: std::time::Duration) {
        let _ = tokio::time::timeout(patience, self.task).await;
        // The agent stops its language servers as it ends; these stop them
        // too when it did not end in time, and none starts after.
        self.lsp.shutdown().await;
        if let Some(sink) = self.sink {
            let _ = tokio::task::spawn_blocking(move || sink.flush_within(patience)).await;
        }
        self.mcp.shutdown().await;
    }
}

/// A new stored session for `s`, so a front end can name it before its
/// first prompt (an editor's session id is cairn's from the start).
pub fn new_stored_session(
    s: &Startup,
    provider: &ResolvedProvider,
) -> Result<crate::store::SessionId> {
    let mut store = open_store().context("the session store cannot be opened")?;
    store
        .create_session(&crate::store::NewSession {
            cwd: s.cwd.clone(),
            project_root: Some(s.root.clone()),
            provider: provider.settings.name.clone(),
            model: provider.model.clone(),
            parent_id: None,
        })
        .context("the session cannot be recorded")
}

/// Opens the session store at its usual place.
pub fn open_store() -> Result<crate::store::Store> {
    crate::cli::sessions::open_store()
}

/// Builds the agent and starts it on its own task.
pub fn start_agent(s: &Startup, provider: &ResolvedProvider, interactive: bool) -> Result<Running> {
    start_agent_with(s, provider, interactive, None, None)
}

/// [`start_agent`] whose file tools read and write through `files` (an
/// editor's buffers), still under every rule the disk tools keep, and
/// whose `bash` shows foreground commands in `terminals` (an editor's).
pub fn start_agent_with(
    s: &Startup,
    provider: &ResolvedProvider,
    interactive: bool,
    files: Option<Arc<dyn crate::tools::files::FileAccess>>,
    terminals: Option<Arc<dyn crate::tools::terminals::Terminals>>,
) -> Result<Running> {
    if interactive {
        // The picker's list of served models, found in the background.
        let settings = provider.settings.clone();
        tokio::spawn(async move {
            let cache = directories::BaseDirs::new().map(|d| d.cache_dir().join("cairn"));
            let listed = crate::llm::model_list::cached_or_fetch(&settings, cache.as_deref()).await;
            let served = crate::llm::model_list::served(settings.kind, &listed);
            crate::llm::ModelCatalog::install_served(served);
        });
    }
    let llm = crate::llm::build_provider(provider.settings.clone())
        .map_err(|e| anyhow::anyhow!("cannot start provider `{}`: {e}", provider.settings.name))?;
    let hints = crate::llm::explain::Hints {
        key_source: key_source(&s.config, &provider.settings.name),
    };
    let llm: Box<dyn crate::llm::Provider> =
        Box::new(crate::llm::explain::Explained::new(llm, hints));
    let model_info = crate::llm::ModelCatalog::global().lookup(&provider.model);
    let opts = AgentOptions {
        workspace: s.root.clone(),
        cwd: s.cwd.clone(),
        provider_name: provider.settings.name.clone(),
        model: provider.model.clone(),
        model_info,
        max_turns: s.config.max_turns(),
        max_tokens: s.config.file.max_tokens,
        reasoning: s.config.file.reasoning.unwrap_or(true),
        effort: s.config.file.effort,
        web_search: config::native_search(s.config.file.search.as_ref()),
        interactive,
        global_config_dir: config::global_dir(),
        trust_store: TrustStore::default_location()
            .ok()
            .map(|t| t.path().to_path_buf()),
        instructions_max_bytes: s.config.instructions_max_bytes(),
        rules_file: config::own_rules::path_for(&s.root),
        compact_threshold: s.config.compact_threshold(),
        small_window: s.config.small_window(),
        small_model: provider.small_model.clone(),
        auto_title: true,
        retry: retry_policy(&s.config),
        pinned: crate::agent::Pinned {
            model: s.model_pinned,
            mode: s.mode_pinned,
        },
        trusted_grants: s.project_trusted().then(|| s.held_grants.clone()),
    };
    let gate = build_gate(s)?;
    // Nothing starts here: a server starts with the first file of its
    // language that a tool touches.
    let trusted = s.project_trusted();
    let lsp = crate::lsp::LspManager::new(
        &s.config.file.lsp,
        s.root.clone(),
        s.sandbox.clone(),
        trusted,
    );
    let mut tools = registry(s);
    if s.config.file.lsp.enabled() {
        tools.register(Arc::new(crate::lsp::tool::LspTool::new(lsp.clone())));
    }
    let (mut agent, events) = Agent::new(opts, Arc::from(llm), tools, gate);
    let hooks = hooks(s);
    // Agents that need trust are in the question: with nothing to trust,
    // none of them does.
    let trusted = matches!(
        s.trust,
        Standing::Trusted | Standing::TrustedThisRun | Standing::NothingToTrust
    ) || s.trust_flag;
    if let Some(terminals) = terminals {
        agent = agent.with_terminals(terminals);
    }
    if let Some(files) = files {
        agent = agent.with_files(files);
    }
    agent = agent
        .with_sandbox(s.sandbox.clone())
        .with_commands(command_roots(s))
        .with_hooks(hooks.clone())
        .with_delegation(crate::agent::Delegation::new(
            command_roots(s),
            trusted,
            s.config.file.agents.max_parallel(),
        ));
    // `--no-save`: the store is not even opened.
    let opened = (!s.no_save).then(open_store);
    let (sink, store_error) = match opened {
        None => (None, None),
        Some(Ok(store)) => {
            let sink = Arc::new(StoreSink::start(
                store,
                SessionInfo {
                    cwd: s.cwd.clone(),
                    project_root: s.root.clone(),
                    provider: provider.settings.name.clone(),
                    model: provider.model.clone(),
                    mode: Some(s.mode.as_str().to_string()),
                },
                Some(agent.event_sender()),
            ));
            agent = agent.with_sink(sink.clone());
            (Some(sink), None)
        }
        Some(Err(e)) => (None, Some(format!("{e:#}"))),
    };
    // What crashed runs left in temporary files, off the start-up path.
    tokio::task::spawn_blocking(crate::tools::tempfiles::sweep_stale);
    let mcp = McpManager::start_contained(
        s.config.file.mcp.clone(),
        Some(s.root.clone()),
        Some(s.sandbox.clone()),
    );
    agent = agent.with_tool_source(mcp.clone());
    agent = agent.with_lsp(lsp.clone());
    let formatters = crate::format::Formatters::new(
        &s.config.file.format,
        s.root.clone(),
        s.sandbox.clone(),
        s.project_trusted(),
        Some(lsp.clone()),
    );
    let mut rule_problems = s.claude_rules.problems.clone();
    rule_problems.extend(formatters.problems());
    if !formatters.is_empty() {
        agent = agent.with_formatting(Arc::new(formatters));
    }
    let (commands, task) = agent.spawn();
    Ok(Running {
        commands,
        events,
        sink,
        store_error,
        mcp,
        lsp,
        task,
        hooks,
        rule_problems,
    })
}

fn retry_policy(config: &Config) -> crate::llm::retry::RetryPolicy {
    let d = crate::llm::retry::RetryPolicy::default();
    let r = &config.file.retry;
    crate::llm::retry::RetryPolicy {
        max_attempts: r.max_attempts.unwrap_or(d.max_attempts).max(1),
        base_delay: r
            .base_delay_ms
            .map(std::time::Duration::from_millis)
            .unwrap_or(d.base_delay),
        max_delay: r
            .max_delay_ms
            .map(std::time::Duration::from_millis)
            .unwrap_or(d.max_delay),
    }
}

fn build_gate(s: &Startup) -> Result<Gate> {
    let perms = &s.config.file.permissions;
    let mut allow = perms.allow.clone();
    let mut deny = perms.deny.clone();
    // Claude Code's settings: the person's own, the project's deny, and
    // the project's allow once trusted (it is in the trust question).
    let claude = &s.claude_rules;
    allow.extend(claude.user_allow.iter().cloned());
    deny.extend(claude.user_deny.iter().cloned());
    deny.extend(claude.project_deny.iter().cloned());
    if s.project_trusted() {
        allow.extend(claude.project_allow.iter().cloned());
    }
    let rules = Rules::parse(&allow, &deny)
        .map_err(|e| anyhow::anyhow!("{}", locate_rule_error(&s.config, &e.to_string())))?;
    let trusted = s
        .config
        .file
        .mcp
        .iter()
        .filter(|(_, m)| m.trusted)
        .map(|(name, _)| crate::mcp::tool_name(name, ""))
        .collect();
    Ok(Gate::new(s.mode, rules, s.config.repeat_limit())
        .with_trusted_tools(trusted)
        .with_home(directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf())))
}

/// Names the file and line of a bad permission rule.
fn locate_rule_error(config: &Config, message: &str) -> String {
    let files = config
        .global_path
        .iter()
        .chain(std::iter::once(&config.project_path));
    for path in files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let quoted: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
            if quoted.iter().any(|q| message.contains(q) && !q.is_empty()) {
                return format!(
                    "{}: line {}: [permissions] {message}",
                    path.display(),
                    n + 1
                );
            }
        }
    }
    format!("[permissions] {message}")
}

/// Where custom commands are read from (`crate::extensions::commands`).
pub fn command_roots(s: &Startup) -> crate::extensions::commands::Roots {
    roots_at(&s.root, &s.config)
}

/// The extension folders of the project at `root` and of the person.
pub fn roots_at(root: &std::path::Path, config: &Config) -> crate::extensions::commands::Roots {
    crate::extensions::commands::Roots {
        workspace: root.to_path_buf(),
        home: crate::paths::home_dir(),
        config_dir: config::global_dir(),
        claude: config.file.compat.claude(),
    }
}

/// Where hooks are read from (`crate::extensions::hooks`).
pub fn hook_files(root: &std::path::Path, config: &Config) -> crate::extensions::hooks::Files {
    crate::extensions::hooks::Files {
        workspace: root.to_path_buf(),
        user_config: config::global_dir().map(|d| d.join("config.toml")),
        home: crate::paths::home_dir(),
        claude: config.file.compat.claude(),
    }
}

/// The session's hooks: the person's, and the project's once trusted.
fn hooks(s: &Startup) -> Arc<crate::extensions::hooks::Hooks> {
    let trusted = matches!(
        s.trust,
        Standing::Trusted | Standing::TrustedThisRun | Standing::NothingToTrust
    );
    Arc::new(crate::extensions::hooks::Hooks::load(
        &hook_files(&s.root, &s.config),
        trusted,
        s.sandbox.clone(),
        // Beside cairn's data, not in it: a project's hook, in the
        // sandbox, may read its session's transcript but not the store.
        config::data_dir().and_then(|d| d.parent().map(|p| p.join("cairn-transcripts"))),
    ))
}

/// The built-in tools and `skill` — always, since a skill added during the
/// session is offered from the next request on (the system prompt lists
/// the skills each time).
fn registry(s: &Startup) -> Registry {
    let mut registry = Registry::builtin();
    let roots = command_roots(s);
    registry.register(Arc::new(crate::extensions::skills::tool::SkillTool::new(
        roots,
        s.cwd.clone(),
    )));
    if let Some(search) = s.config.file.search.as_ref().filter(|c| c.names_backend()) {
        // A broken `[search]` was refused when the config was read (`load`).
        if let Ok(backend) =
            crate::tools::web_search::Backend::from_config(search, |k| std::env::var(k).ok())
        {
            registry.register(Arc::new(crate::tools::web_search::WebSearchTool::new(
                backend,
            )));
        }
    }
    registry
}
