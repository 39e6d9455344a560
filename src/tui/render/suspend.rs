//! Ctrl+Z and the signals that end a session from outside. In raw mode the
//! terminal sends Ctrl+Z as a key instead of stopping the process, so
//! cairn puts the terminal back, stops itself with SIGTSTP as the shell
//! expects, and when `fg` continues it (SIGCONT) takes the screen again
//! and redraws everything.
//!
//! The same holds for the signals a person or a script sends from outside:
//! SIGTSTP (`kill -TSTP`) suspends exactly like Ctrl+Z, SIGCONT after any
//! stop (even SIGSTOP, which cannot be caught) takes the screen back, and
//! SIGINT, SIGQUIT, SIGTERM and SIGHUP end the session as quitting does.

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
    // SIGTSTP is caught (see `JobSignals`), so raising it would only come
    // back here; SIGSTOP stops the process the same way for the shell.
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP).map_err(std::io::Error::from)?;
    // Here once `fg` sent SIGCONT.
    terminal::enter(mouse)
}

/// SIGTERM, SIGHUP (the terminal or SSH connection went away), and SIGINT
/// or SIGQUIT sent from outside (in raw mode Ctrl+C and Ctrl+\ are keys):
/// all end the interface the way quitting does — the running turn is
/// cancelled, tools and MCP servers stopped, the session saved, the
/// terminal restored.
pub struct EndSignals {
    term: Signal,
    hup: Signal,
    int: Signal,
    quit: Signal,
}

impl EndSignals {
    pub fn new() -> std::io::Result<EndSignals> {
        Ok(EndSignals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.hup.recv() => {}
            _ = self.int.recv() => {}
            _ = self.quit.recv() => {}
        }
    }
}

/// What job control sends from outside.
pub enum JobSignal {
    /// SIGTSTP: suspend as Ctrl+Z does.
    Stop,
    /// SIGCONT: take the screen again (after a stop cairn did not see).
    Continue,
}

pub struct JobSignals {
    tstp: Signal,
    cont: Signal,
}

impl JobSignals {
    pub fn new() -> std::io::Result<JobSignals> {
        Ok(JobSignals {
            tstp: signal(SignalKind::from_raw(libc::SIGTSTP))?,
            cont: signal(SignalKind::from_raw(libc::SIGCONT))?,
        })
    }

    pub async fn recv(&mut self) -> JobSignal {
        tokio::select! {
            _ = self.tstp.recv() => JobSignal::Stop,
            _ = self.cont.recv() => JobSignal::Continue,
        }
    }
}
