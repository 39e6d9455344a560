//! Ctrl+Z and the signals that end a session from outside. In raw mode the
//! terminal sends Ctrl+Z as a key instead of stopping the process, so
//! cairn puts the terminal back, stops itself with SIGTSTP as the shell
//! expects, and when `fg` continues it (SIGCONT) takes the screen again
//! and redraws everything.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tokio::signal::unix::{Signal, SignalKind, signal};

use super::terminal;

/// Whether `ev` is Ctrl+Z.
pub fn is_suspend_key(ev: &Event) -> bool {
    matches!(
        ev,
        Event::Key(KeyEvent {
            code: KeyCode::Char('z'),
            modifiers,
            kind: KeyEventKind::Press,
            ..
        }) if modifiers.contains(KeyModifiers::CONTROL)
    )
}

/// Restores the terminal, stops until continued, then enters full-screen
/// mode again. The caller redraws the whole screen.
pub fn suspend(mouse: bool) -> std::io::Result<()> {
    terminal::restore();
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGTSTP).map_err(std::io::Error::from)?;
    // Here once `fg` sent SIGCONT.
    terminal::enter(mouse)
}

/// SIGTERM and SIGHUP (the terminal or SSH connection went away): both end
/// the interface the way quitting does — the running turn is cancelled,
/// tools and MCP servers stopped, the session saved, the terminal restored.
pub struct EndSignals {
    term: Signal,
    hup: Signal,
}

impl EndSignals {
    pub fn new() -> std::io::Result<EndSignals> {
        Ok(EndSignals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.hup.recv() => {}
        }
    }
}
