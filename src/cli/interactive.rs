//! `cairn` with no subcommand: the full-screen interface over the agent.

use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::sync::mpsc;

use crate::cli::startup::{self, Overrides, Startup};
use crate::lsp::LspManager;
use crate::protocol::LoadedSession;
use crate::protocol::{AgentCommand, AgentEvent, NoticeLevel};
use crate::sessions::Sessions;
use crate::store::{SessionId, Store};
use crate::tui::TuiOptions;
use crate::tui::runtime::Handles;

/// How long quitting waits for the store to take what it still holds.
const UNSAVED_PATIENCE: std::time::Duration = std::time::Duration::from_secs(25);

pub async fn run(
    overrides: &Overrides,
    continue_latest: bool,
    resume: Option<String>,
    initial_prompt: Option<String>,
) -> Result<()> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "the interface needs a terminal; for scripts and pipes use `cairn run \"your request\"`"
        );
    }
    let Some(s) = configured(overrides).await? else {
        return Ok(());
    };
    let mut notices = crate::tui::trust::notices(&s.config, s.trust, s.trust_problem.as_deref());
    let mut store = match startup::open_store() {
        Ok(st) => Some(st),
        Err(e) => {
            notices.push((
                NoticeLevel::Warning,
                format!("Sessions will not be saved or listed: {e:#}"),
            ));
            None
        }
    };
    let Some((resumed, read_only)) =
        resumed_session(store.as_mut(), &s, continue_latest, resume.as_deref())?
    else {
        return Ok(());
    };
    notices.extend(resume_notices(resumed.as_ref(), read_only, continue_latest));
    notices.extend(sandbox_notices(&s));
    let agent = start(&s, read_only, &mut notices)?;
    if let Some(r) = &resumed {
        let load = if read_only {
            AgentCommand::load_read_only(r)
        } else {
            AgentCommand::load(r)
        };
        let _ = agent.commands.send(load);
    }
    let resumed_id = resumed.as_ref().map(|r| r.summary.id.clone());
    let open_sessions = matches!(resume.as_deref(), Some(""));
    let mut opts = tui_options(&s, store, resumed, notices, open_sessions, &agent);
    opts.read_only = read_only;
    opts.initial_prompt = initial_prompt;
    let Started {
        commands,
        events,
        sink,
        mcp,
        lsp,
        task,
        ..
    } = agent;
    let result = crate::tui::run(opts, commands, events).await;
    finish(result, task, sink, (mcp, lsp), resumed_id).await
}

/// The configuration with a provider: asks whether to trust the project
/// when that is undecided, and runs the first-start set-up when no
/// provider is configured. `None` when the person quit instead.
async fn configured(overrides: &Overrides) -> Result<Option<Startup>> {
    // A broken config stops here, before the screen changes.
    let mut s = startup::load(overrides)?;
    // Asked before anything the project names can run.
    let mut trust_answer = None;
    if s.trust == crate::config::trust::Standing::Undecided {
        match crate::tui::trust::ask(&s.config).await? {
            Some(answer) => {
                s.answer_trust(answer);
                trust_answer = Some(answer);
            }
            None => return Ok(None),
        }
    }
    let s = startup::resolve(s, overrides).await?;
    if s.provider.is_some() {
        return Ok(Some(s));
    }
    if !first_start_setup(&s).await? {
        eprintln!("{}", startup::setup_help());
        return Ok(None);
    }
    // Read again: the set-up wrote the provider into the config.
    let mut again = startup::load(overrides)?;
    if let Some(answer) = trust_answer {
        again.answer_trust(answer);
    }
    Ok(Some(startup::resolve(again, overrides).await?))
}

/// After the screen: the agent winds down (its last act stops the
/// language servers, once no tool can ask them anything), the store takes
/// what it still holds, MCP servers stop, and the way back to the session
/// is printed.
async fn finish(
    result: Result<()>,
    task: Option<tokio::task::JoinHandle<()>>,
    sink: Option<std::sync::Arc<crate::agent::store_sink::StoreSink>>,
    (mcp, lsp): (Option<Arc<crate::mcp::McpManager>>, Option<Arc<LspManager>>),
    resumed_id: Option<SessionId>,
) -> Result<()> {
    // Quitting mid-turn cancels it; let the agent answer the cancelled calls
    // and hand the last messages and file versions to the store first.
    if let Some(task) = task {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
    }
    // An agent that did not wind down in time: its servers stop anyway.
    if let Some(lsp) = &lsp {
        lsp.shutdown().await;
    }
    let unsaved = sink.as_ref().map(|k| k.flush_within(UNSAVED_PATIENCE));
    if let Some(m) = &mcp {
        m.shutdown().await;
    }
    let session = unsaved
        .as_ref()
        .and_then(|u| u.session.clone())
        .or(resumed_id);
    if let (Ok(()), Some(id)) = (&result, &session) {
        print_exit(id);
    }
    // The screen is gone: what could not be saved is said on stderr, and
    // the exit status is not 0.
    if let Some(status) = unsaved.filter(|s| s.unsaved > 0) {
        result?;
        anyhow::bail!(
            "{} writes of this session could not be saved: {}",
            status.unsaved,
            status
                .error
                .as_deref()
                .unwrap_or("the store did not answer")
        );
    }
    result
}

/// With no provider: the set-up screen, until one works (`true`) or the
/// person quits.
async fn first_start_setup(s: &Startup) -> Result<bool> {
    let (Some(config), Some(keys)) = (
        crate::config::global_dir().map(|g| g.join("config.toml")),
        crate::config::keys::keys_dir(),
    ) else {
        return Ok(false);
    };
    let theme = (s.config.file.theme.as_deref(), s.config.file.ui.colors);
    let setup = crate::tui::setup::Setup::new(crate::cli::setup::env_urls());
    crate::tui::setup::run(theme, setup, crate::cli::setup::check(config, keys)).await
}

/// The session `-c` or `--resume ID` names, and whether it opens read-only
/// (another cairn has it); `None` when the person chose to quit instead.
fn resumed_session(
    store: Option<&mut Store>,
    s: &Startup,
    continue_latest: bool,
    resume: Option<&str>,
) -> Result<Option<(Option<LoadedSession>, bool)>> {
    let resumed = match (&store, continue_latest, resume) {
        (Some(st), true, _) => latest(st, s)?,
        (Some(st), false, Some(id)) if !id.is_empty() => Some(load(st, &st.resolve_id(id)?)?),
        (None, true, _) | (None, false, Some(_)) => {
            anyhow::bail!("cannot resume: the session store could not be opened")
        }
        _ => None,
    };
    match (resumed, store) {
        (Some(r), Some(st)) => Ok(crate::cli::resume::offer(st, r)?.map(|(r, ro)| (Some(r), ro))),
        (r, _) => Ok(Some((r, false))),
    }
}

fn resume_notices(
    resumed: Option<&LoadedSession>,
    read_only: bool,
    continue_latest: bool,
) -> Vec<(NoticeLevel, String)> {
    let mut out = Vec::new();
    if let (true, Some(r)) = (read_only, resumed) {
        out.push((
            NoticeLevel::Warning,
            format!(
                "Read-only: session {} is open in another cairn, so nothing you do here is saved.",
                r.summary.id
            ),
        ));
    }
    if continue_latest && resumed.is_none() {
        out.push((
            NoticeLevel::Info,
            "No earlier session in this project to continue; this is a new one.".into(),
        ));
    }
    if let Some(r) = resumed {
        out.push((NoticeLevel::Info, r.resumed_notice()));
    }
    out
}

/// The running agent and what quitting waits for.
struct Started {
    commands: mpsc::UnboundedSender<AgentCommand>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    sink: Option<std::sync::Arc<crate::agent::store_sink::StoreSink>>,
    mcp: Option<std::sync::Arc<crate::mcp::McpManager>>,
    lsp: Option<Arc<LspManager>>,
    task: Option<tokio::task::JoinHandle<()>>,
    hooks: Option<std::sync::Arc<crate::extensions::hooks::Hooks>>,
}

fn start(
    s: &Startup,
    read_only: bool,
    notices: &mut Vec<(NoticeLevel, String)>,
) -> Result<Started> {
    let Some(p) = &s.provider else {
        anyhow::bail!("{}", startup::setup_help());
    };
    let running = startup::start_agent(s, p, true)?;
    if let (true, Some(sink)) = (read_only, &running.sink) {
        sink.set_read_only();
    }
    if let Some(e) = running.store_error {
        notices.push((
            NoticeLevel::Warning,
            format!("This session will not be saved: {e}"),
        ));
    }
    for problem in &running.hooks.problems {
        notices.push((
            NoticeLevel::Warning,
            format!("A hook was not loaded: {problem}"),
        ));
    }
    for problem in &running.rule_problems {
        notices.push((NoticeLevel::Warning, problem.clone()));
    }
    Ok(Started {
        commands: running.commands,
        events: running.events,
        sink: running.sink,
        mcp: Some(running.mcp),
        lsp: Some(running.lsp),
        task: Some(running.task),
        hooks: Some(running.hooks),
    })
}

fn tui_options(
    s: &Startup,
    store: Option<Store>,
    resumed: Option<LoadedSession>,
    notices: Vec<(NoticeLevel, String)>,
    open_sessions: bool,
    agent: &Started,
) -> TuiOptions {
    let provider = s.provider.as_ref();
    let model_id = provider.map(|p| p.model.clone()).unwrap_or_default();
    let info = crate::llm::ModelCatalog::global().lookup(&model_id);
    let global = crate::config::global_dir();
    TuiOptions {
        commands: crate::extensions::invocable(&super::startup::command_roots(s), &s.cwd),
        dialog_pause: dialog_pause(),
        provider: provider
            .map(|p| p.settings.name.clone())
            .unwrap_or_else(|| "no provider".into()),
        model: model_id,
        mode: s.mode,
        cwd: s.cwd.clone(),
        git_branch: git_branch(&s.cwd),
        context_window: info.context_window,
        theme: s.config.file.theme.clone().unwrap_or_default(),
        colors: s.config.file.ui.colors,
        theme_dir: global.as_ref().map(|g| g.join("themes")),
        first_run_help: None,
        history_file: history_file(s),
        keys: s.config.file.keys.clone(),
        handles: Handles {
            sessions: store.map(|st| {
                Sessions::new(st, s.root.clone())
                    .with_configured_export_dir(s.config.file.ui.export_dir.as_deref())
            }),
            mcp: agent.mcp.clone(),
            hooks: agent.hooks.clone(),
            project_root: s.root.clone(),
            command_roots: Some((super::startup::command_roots(s), s.cwd.clone())),
            project_config: crate::config::project_config_path(&s.root),
            own_rules: crate::config::own_rules::path_for(&s.root),
            global_config: global.map(|g| g.join("config.toml")),
            history_file: None,
            scroll_regions: s.config.file.ui.scroll_regions(),
            sandbox_probe: Some(sandbox_probe(s)),
        },
        resumed,
        notices,
        open_sessions,
        sandbox: first_sandbox_view(s),
        read_only: false,
        notify: s.config.file.ui.notify.unwrap_or_default(),
        on_exit: s.config.file.ui.on_exit.unwrap_or_default(),
        initial_prompt: None,
    }
}

/// Said on the restored terminal: which session this was and how to come
/// back to it. Nothing when nothing was recorded.
fn print_exit(id: &SessionId) {
    let Ok(store) = startup::open_store() else {
        return;
    };
    let Ok(summary) = store.session(id) else {
        return;
    };
    println!("{}", exit_message(id, summary.title.as_deref()));
}

fn exit_message(id: &SessionId, title: Option<&str>) -> String {
    let title = title
        .map(|t| crate::term_safe::escape(crate::text::first_line(t)))
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "(untitled)".into());
    format!("Session: {title}  ({id})\nContinue it with: cairn --resume {id}")
}

fn latest(store: &Store, s: &Startup) -> Result<Option<LoadedSession>> {
    match store.latest_session(&s.root)? {
        Some(summary) => Ok(Some(load(store, &summary.id)?)),
        None => Ok(None),
    }
}

fn load(store: &Store, id: &SessionId) -> Result<LoadedSession> {
    crate::sessions::load(store, id).with_context(|| format!("cannot load session {id}"))
}

/// The branch for the status line, read from the repository's `HEAD`
/// file itself: no git process, so nothing the repository's configuration
/// names (an include of a FIFO or the terminal) is opened. Only regular
/// files are read.
fn git_branch(cwd: &std::path::Path) -> Option<String> {
    fn regular(path: &std::path::Path) -> Option<String> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        (meta.is_file() && meta.len() < 4096)
            .then(|| std::fs::read_to_string(path).ok())
            .flatten()
    }
    let (dir, dotgit) = cwd
        .ancestors()
        .map(|d| (d, d.join(".git")))
        .find(|(_, g)| std::fs::symlink_metadata(g).is_ok())?;
    let git_dir = if dotgit.is_dir() {
        dotgit
    } else {
        let text = regular(&dotgit)?;
        let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
        dir.join(target)
    };
    let head = regular(&git_dir.join("HEAD"))?;
    let head = head.trim();
    match head.strip_prefix("ref: ") {
        Some(r) => Some(r.strip_prefix("refs/heads/").unwrap_or(r).to_string()),
        None if head.len() >= 7 => Some(head[..7].to_string()),
        None => None,
    }
    .filter(|b| !b.is_empty())
}

/// Prompt history per project: `<state>/history/<hash of the root>.jsonl`.
fn history_file(s: &Startup) -> Option<std::path::PathBuf> {
    let dir = crate::config::state_dir()?.join("history");
    let hash = crate::tools::state::hash_bytes(s.root.to_string_lossy().as_bytes());
    Some(dir.join(format!("{hash:016x}.jsonl")))
}

/// What the first frame shows of the sandbox: whether it is off. The rest
/// (which layer works here) comes from [`sandbox_probe`] a moment later.
fn first_sandbox_view(s: &Startup) -> crate::tui::sandbox_view::SandboxView {
    let off = s.sandbox.mode() == crate::config::SandboxMode::Off;
    crate::tui::sandbox_view::SandboxView {
        label: if off {
            s.sandbox.label()
        } else {
            String::new()
        },
        off,
        report: String::new(),
    }
}

/// How the sandbox stands here, worked out off the interface thread.
fn sandbox_probe(s: &Startup) -> crate::tui::sandbox_view::SandboxProbe {
    let sandbox = s.sandbox.clone();
    let root = s.root.clone();
    std::sync::Arc::new(move || {
        let policy = sandbox.policy(&root);
        let support = crate::sandbox::Support::detect();
        crate::tui::sandbox_view::SandboxView {
            label: sandbox.label(),
            off: sandbox.mode() == crate::config::SandboxMode::Off,
            report: crate::sandbox::status::report(&sandbox, policy.as_ref(), support),
        }
    })
}

/// Said once at start: commands run unconfined, or the project's config
/// asked for more than it may.
fn sandbox_notices(s: &Startup) -> Vec<(NoticeLevel, String)> {
    let mut out = Vec::new();
    let off = s.sandbox.mode() == crate::config::SandboxMode::Off;
    if off {
        out.push((
            NoticeLevel::Warning,
            "The sandbox is off: commands run with all of your rights.".to_string(),
        ));
    } else if !crate::sandbox::Support::detect().enforces_files() {
        out.push((
            NoticeLevel::Warning,
            "The sandbox is not enforced: this system offers no sandbox cairn can use, so \
             commands run unconfined and cairn asks as it would without one."
                .to_string(),
        ));
    }
    for ignored in &s.sandbox.config().ignored {
        out.push((
            NoticeLevel::Warning,
            format!("Ignored in the project's [sandbox] section: {ignored}"),
        ));
    }
    out
}

/// `CAIRN_DIALOG_PAUSE_MS`: how long a permission dialog that appears just
/// after a key press takes no answer (600 ms unless set).
fn dialog_pause() -> std::time::Duration {
    let ms = std::env::var("CAIRN_DIALOG_PAUSE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(600);
    std::time::Duration::from_millis(ms.min(5000))
}
