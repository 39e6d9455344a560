//! The trust question at start, before the agent and anything the project
//! names are started: its own short screen, then the terminal is handed
//! back for the main interface.

use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyEventKind};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::config::Config;
use crate::config::trust::Standing;
use crate::protocol::NoticeLevel;
use crate::tui::keys::KeyMap;
use crate::tui::panels::trust::{Answer, TrustDialog};
use crate::tui::render::terminal;
use crate::tui::theme::{Theme, Themes, detect_color_depth};

/// Asks whether to trust the project's settings. `None`: the person quit.
pub async fn ask(config: &Config) -> anyhow::Result<Option<bool>> {
    let mut dialog = TrustDialog::new(&config.project_path, config.held().to_vec());
    let root = config
        .project_path
        .parent()
        .and_then(std::path::Path::parent);
    dialog.asked_again = match (crate::config::trust::TrustStore::default_location(), root) {
        (Ok(store), Some(root)) => store.trusted_before(root),
        _ => false,
    };
    let dir = crate::config::global_dir().map(|g| g.join("themes"));
    terminal::install_panic_hook();
    terminal::enter(false)?;
    // After `enter`: the terminal's background is known by then.
    let mut themes = Themes::load(dir.as_deref(), detect_color_depth(config.file.ui.colors));
    themes.set_background(terminal::background());
    let theme = themes.chosen_or_automatic(config.file.theme.as_deref());
    let (keys, _) = KeyMap::with_overrides(&config.file.keys);
    let answer = question(&mut dialog, &theme, &keys).await;
    terminal::restore();
    Ok(match answer? {
        Answer::Trust => Some(true),
        Answer::DontTrust => Some(false),
        Answer::Quit => None,
    })
}

/// How long the keyboard must have been quiet, with the question on screen,
/// for a key to answer it. Typing ahead ("tests are failing", begun before
/// the question appeared) must not answer with its first `t`.
const SETTLE: Duration = Duration::from_millis(600);

async fn question(
    dialog: &mut TrustDialog,
    theme: &Theme,
    keys: &KeyMap,
) -> anyhow::Result<Answer> {
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    term.clear()?;
    let mut input = crate::tui::render::late_answers::LateFiltered::new(EventStream::new());
    // Set once the question is first on screen; then at each key.
    let mut last_input: Option<Instant> = None;
    loop {
        term.draw(|f| {
            let area = f.area();
            f.buffer_mut().set_style(area, theme.base());
            dialog.render(area, f.buffer_mut(), theme);
        })?;
        let shown = *last_input.get_or_insert_with(Instant::now);
        match input.next().await {
            Some(Ok(Event::Key(k))) if k.kind != KeyEventKind::Release => {
                let now = Instant::now();
                let settled = now.duration_since(shown) >= SETTLE;
                last_input = Some(now);
                match dialog.key(k, keys) {
                    Some(Answer::Quit) => return Ok(Answer::Quit),
                    Some(_) if !settled => dialog.typed_ahead = true,
                    Some(a) => return Ok(a),
                    None => {}
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Ok(Answer::Quit),
        }
    }
}

/// What the interface says at start about the project's settings.
pub fn notices(
    config: &Config,
    trust: Standing,
    problem: Option<&str>,
) -> Vec<(NoticeLevel, String)> {
    let mut out = Vec::new();
    let n = config.held().len();
    let path = crate::config::project::printable(&config.project_path.display().to_string());
    match trust {
        Standing::Refused | Standing::Undecided => out.push((
            NoticeLevel::Info,
            format!(
                "Not trusted: {n} setting{} in {path} ignored (its servers, allow rules, looser \
                 mode or providers). `cairn trust revoke` to be asked again.",
                if n == 1 { "" } else { "s" }
            ),
        )),
        Standing::TrustedThisRun => out.push((
            NoticeLevel::Info,
            format!("{path} applies in full for this run (--trust-project)."),
        )),
        Standing::Trusted | Standing::NothingToTrust => {}
    }
    if let Some(p) = problem {
        out.push((NoticeLevel::Warning, p.to_string()));
    }
    out
}
