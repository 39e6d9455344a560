//! The trust question at start, before the agent and anything the project
//! names are started: its own short screen, then the terminal is handed
//! back for the main interface.

use crossterm::event::{Event, EventStream, KeyEventKind};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::agent::NoticeLevel;
use crate::config::trust::Standing;
use crate::startup::Startup;
use crate::tui::terminal;
use crate::tui::theme::{Theme, detect_color_depth};
use crate::tui::widgets::trust_dialog::{Answer, TrustDialog};

/// Asks whether to trust the project's settings. `None`: the person quit.
pub async fn ask(s: &Startup) -> anyhow::Result<Option<bool>> {
    let mut dialog = TrustDialog::new(&s.config.project_path, s.config.held().to_vec());
    let name = s.config.file.theme.clone().unwrap_or_else(|| "dark".into());
    let dir = crate::config::global_dir().map(|g| g.join("themes"));
    let theme = Theme::load(&name, dir.as_deref())
        .unwrap_or_default()
        .adapt(detect_color_depth());
    terminal::install_panic_hook();
    terminal::enter(false)?;
    let answer = question(&mut dialog, &theme).await;
    terminal::restore();
    Ok(match answer? {
        Answer::Trust => Some(true),
        Answer::DontTrust => Some(false),
        Answer::Quit => None,
    })
}

async fn question(dialog: &mut TrustDialog, theme: &Theme) -> anyhow::Result<Answer> {
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    term.clear()?;
    let mut input = EventStream::new();
    loop {
        term.draw(|f| {
            let area = f.area();
            f.buffer_mut().set_style(area, theme.base());
            dialog.render(area, f.buffer_mut(), theme);
        })?;
        match input.next().await {
            Some(Ok(Event::Key(k))) if k.kind != KeyEventKind::Release => {
                if let Some(a) = dialog.key(k) {
                    return Ok(a);
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Ok(Answer::Quit),
        }
    }
}

/// What the interface says at start about the project's settings.
pub fn notices(s: &Startup) -> Vec<(NoticeLevel, String)> {
    let mut out = Vec::new();
    let n = s.config.held().len();
    let path = crate::config::project::printable(&s.config.project_path.display().to_string());
    match s.trust {
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
    if let Some(p) = &s.trust_problem {
        out.push((NoticeLevel::Warning, p.clone()));
    }
    out
}
