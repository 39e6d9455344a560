//! `cairn` with no subcommand: the full-screen interface over the agent.

use anyhow::{Context, Result};
use tokio::sync::mpsc;

use crate::agent::{AgentCommand, AgentEvent, NoticeLevel, TurnOutcome};
use crate::cli::startup::{self, Overrides, Startup};
use crate::sessions::{LoadedSession, Sessions};
use crate::store::{SessionId, Store};
use crate::tui::TuiOptions;
use crate::tui::runtime::Handles;

/// How long quitting waits for the store to take what it still holds.
const UNSAVED_PATIENCE: std::time::Duration = std::time::Duration::from_secs(25);

pub async fn run(
    overrides: &Overrides,
    continue_latest: bool,
    resume: Option<String>,
) -> Result<()> {
    // A broken config stops here, before the screen changes.
    let mut s = startup::load(overrides)?;
    // Asked before anything the project names can run.
    if s.trust == crate::config::trust::Standing::Undecided {
        match crate::tui::trust::ask(&s.config).await? {
            Some(answer) => s.answer_trust(answer),
            None => return Ok(()),
        }
    }
    let s = startup::resolve(s, overrides).await?;
    let ui_store = startup::open_store();
    let mut notices = crate::tui::trust::notices(&s.config, s.trust, s.trust_problem.as_deref());
    let mut store = match ui_store {
        Ok(st) => Some(st),
        Err(e) => {
            notices.push((
                NoticeLevel::Warning,
                format!("Sessions will not be saved or listed: {e:#}"),
            ));
            None
        }
    };
    let resumed = match (&store, continue_latest, resume.as_deref()) {
        (Some(st), true, _) => latest(st, &s)?,
        (Some(st), false, Some(id)) if !id.is_empty() => Some(load(st, &st.resolve_id(id)?)?),
        (None, true, _) | (None, false, Some(_)) => {
            anyhow::bail!("cannot resume: the session store could not be opened")
        }
        _ => None,
    };
    let mut read_only = false;
    let resumed = match (resumed, store.as_mut()) {
        (Some(r), Some(st)) => match crate::cli::resume::offer(st, r)? {
            Some((r, ro)) => {
                read_only = ro;
                Some(r)
            }
            None => return Ok(()),
        },
        (r, _) => r,
    };
    if let (true, Some(r)) = (read_only, &resumed) {
        notices.push((
            NoticeLevel::Warning,
            format!(
                "Read-only: session {} is open in another cairn, so nothing you do here is saved.",
                r.summary.id
            ),
        ));
    }
    if continue_latest && resumed.is_none() {
        notices.push((
            NoticeLevel::Info,
            "No earlier session in this project to continue; this is a new one.".into(),
        ));
    }
    if let Some(r) = &resumed {
        notices.push((NoticeLevel::Info, r.resumed_notice()));
    }
    let open_sessions = matches!(resume.as_deref(), Some(""));
    notices.extend(sandbox_notices(&s));

    let (commands, events, sink, mcp, first_run_help, task) = match &s.provider {
        Some(p) => {
            let running = startup::start_agent(&s, p, true)?;
            if let (true, Some(sink)) = (read_only, &running.sink) {
                sink.set_read_only();
            }
            if let Some(e) = running.store_error {
                notices.push((
                    NoticeLevel::Warning,
                    format!("This session will not be saved: {e}"),
                ));
            }
            (
                running.commands,
                running.events,
                running.sink,
                Some(running.mcp),
                None,
                Some(running.task),
            )
        }
        None => {
            let (c, e) = no_provider();
            (c, e, None, None, Some(startup::setup_help()), None)
        }
    };
    if let Some(r) = &resumed {
        let _ = commands.send(AgentCommand::load(r));
    }
    let provider = s.provider.as_ref();
    let model_id = provider.map(|p| p.model.clone()).unwrap_or_default();
    let info = crate::llm::ModelCatalog::global().lookup(&model_id);
    let global = crate::config::global_dir();
    let opts = TuiOptions {
        provider: provider
            .map(|p| p.settings.name.clone())
            .unwrap_or_else(|| "no provider".into()),
        model: model_id,
        mode: s.mode,
        cwd: s.cwd.clone(),
        git_branch: git_branch(&s.cwd),
        context_window: info.context_window,
        theme: s.config.file.theme.clone().unwrap_or_else(|| "dark".into()),
        theme_dir: global.as_ref().map(|g| g.join("themes")),
        first_run_help,
        history_file: history_file(&s),
        keys: s.config.file.keys.clone(),
        handles: Handles {
            sessions: store.map(|st| Sessions::new(st, s.root.clone())),
            mcp: mcp.clone(),
            project_root: s.root.clone(),
            project_config: crate::config::project_config_path(&s.root),
            global_config: global.map(|g| g.join("config.toml")),
            history_file: None,
            scroll_regions: s.config.file.ui.scroll_regions(),
        },
        resumed,
        notices,
        open_sessions,
        sandbox: sandbox_view(&s),
    };
    let result = crate::tui::run(opts, commands, events).await;
    // Quitting mid-turn cancels it; let the agent answer the cancelled calls
    // and hand the last messages and file versions to the store first.
    if let Some(task) = task {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
    }
    let unsaved = sink.as_ref().map(|k| k.flush_within(UNSAVED_PATIENCE));
    if let Some(m) = &mcp {
        m.shutdown().await;
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

fn latest(store: &Store, s: &Startup) -> Result<Option<LoadedSession>> {
    match store.latest_session(&s.root)? {
        Some(summary) => Ok(Some(load(store, &summary.id)?)),
        None => Ok(None),
    }
}

fn load(store: &Store, id: &SessionId) -> Result<LoadedSession> {
    crate::sessions::load(store, id).with_context(|| format!("cannot load session {id}"))
}

/// With no provider the interface still runs: it explains the set-up and
/// answers prompts with the same explanation.
fn no_provider() -> (
    mpsc::UnboundedSender<AgentCommand>,
    mpsc::UnboundedReceiver<AgentEvent>,
) {
    let (ctx, mut crx) = mpsc::unbounded_channel::<AgentCommand>();
    let (etx, erx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut turn = 0;
        while let Some(cmd) = crx.recv().await {
            match cmd {
                AgentCommand::Submit { text, .. } => {
                    turn += 1;
                    let _ = etx.send(AgentEvent::TurnStarted { turn, prompt: text });
                    let _ = etx.send(AgentEvent::Notice {
                        level: NoticeLevel::Error,
                        text: "No model provider is configured, so nothing can answer. Set one up as described above, then start cairn again.".into(),
                    });
                    let _ = etx.send(AgentEvent::TurnFinished {
                        turn,
                        outcome: TurnOutcome::Failed {
                            error: "no provider".into(),
                        },
                    });
                }
                AgentCommand::Shutdown => return,
                _ => {}
            }
        }
    });
    (ctx, erx)
}

fn git_branch(cwd: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--abbrev-ref", "HEAD"])
        .current_dir(cwd)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|b| !b.is_empty())
}

/// Prompt history per project: `<state>/history/<hash of the root>.jsonl`.
fn history_file(s: &Startup) -> Option<std::path::PathBuf> {
    let dir = crate::config::state_dir()?.join("history");
    let hash = crate::tools::state::hash_bytes(s.root.to_string_lossy().as_bytes());
    Some(dir.join(format!("{hash:016x}.jsonl")))
}

fn sandbox_view(s: &Startup) -> crate::tui::sandbox_view::SandboxView {
    let policy = s.sandbox.policy(&s.root);
    let support = crate::sandbox::Support::detect();
    crate::tui::sandbox_view::SandboxView {
        label: s.sandbox.label(),
        off: s.sandbox.mode() == crate::config::SandboxMode::Off,
        report: crate::sandbox::status::report(&s.sandbox, policy.as_ref(), support),
    }
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
