//! Putting the terminal into full-screen mode and back — on exit, on panic
//! and on SIGTERM — and the effects that talk to it directly.

use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use crossterm::{cursor, execute};

use super::flush;

/// Whether the screen is currently set up, so restoring twice is harmless.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static ENHANCED_KEYS: AtomicBool = AtomicBool::new(false);
/// The terminal's answers (synchronized output, background), asked once.
static ANSWERS: OnceLock<flush::Answers> = OnceLock::new();

/// Whether the terminal said it supports synchronized output (DEC 2026).
pub fn synchronized_output() -> bool {
    ANSWERS.get().and_then(|a| a.sync).unwrap_or(false)
}

/// Whether the terminal reports Shift+Enter apart from Enter.
pub fn enhanced_keys() -> bool {
    ENHANCED_KEYS.load(Ordering::SeqCst)
}

/// GNU screen holds a lone Esc while mouse tracking is on, waiting to see
/// whether a key follows, and then sends both as Alt+key. tmux also names
/// itself `screen*` but sends Esc on its own.
pub fn holds_lone_esc() -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    !var("STY").is_empty() || (var("TERM").starts_with("screen") && var("TMUX").is_empty())
}

/// The background colour the terminal reported at start, if it did.
pub fn background() -> Option<(u8, u8, u8)> {
    ANSWERS.get().and_then(|a| a.background)
}

pub fn enter(mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    // Asked before anything reads input, and only the first time: later
    // the input reader is running and would take the answers.
    ANSWERS.get_or_init(|| flush::ask_terminal(flush::PROBE_TIMEOUT));
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        crossterm::event::EnableFocusChange,
        cursor::Hide
    )?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    // Shift+Enter is only distinguishable with the kitty protocol.
    if supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED_KEYS.store(true, Ordering::SeqCst);
    }
    ACTIVE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Leaves full-screen mode; safe to call at any time, any number of times.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    // No frame leaves a scroll region or a synchronized update open, but a
    // panic may come between the two halves of one.
    let _ = out.write_all(flush::RESET.as_bytes());
    if ENHANCED_KEYS.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        crossterm::event::DisableFocusChange,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
}

/// After SIGCONT: the stop may have come from outside (SIGSTOP, which
/// cairn never sees), and the shell put the terminal back to cooked mode
/// meanwhile. Takes raw mode and the alternate screen again; enters fully
/// when the terminal had been given back.
pub fn reassert(mouse: bool) -> io::Result<()> {
    if !ACTIVE.load(Ordering::SeqCst) {
        return enter(mouse);
    }
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnterAlternateScreen, cursor::Hide)?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    Ok(())
}

/// Sends a notification the way the config says (`[ui] notify`).
pub fn notify(how: crate::config::ui::Notify, text: &str) {
    if let Some(seq) = how.sequence(text) {
        let mut out = io::stdout();
        let _ = out.write_all(seq.as_bytes());
        let _ = out.flush();
    }
}

/// Restores the terminal before the panic message prints, so it is readable.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if crate::shell::panic_is_expected() {
            return;
        }
        restore();
        previous(info);
    }));
}

pub fn set_mouse_capture(on: bool) -> io::Result<()> {
    if on {
        execute!(io::stdout(), EnableMouseCapture)
    } else {
        execute!(io::stdout(), DisableMouseCapture)
    }
}

/// OSC 52 reaches the clipboard of the terminal the person sits at, even
/// over ssh; the system clipboard is tried too where there is one. True
/// when the system clipboard took the text: a terminal never says whether
/// it honoured OSC 52.
pub fn copy_to_clipboard(text: &str, system: &mut Option<arboard::Clipboard>) -> bool {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = io::stdout();
    let _ = write!(out, "\x1b]52;c;{encoded}\x07");
    let _ = out.flush();
    if system.is_none() {
        *system = arboard::Clipboard::new().ok();
    }
    let took = system
        .as_mut()
        .is_some_and(|cb| cb.set_text(text.to_string()).is_ok());
    if !took {
        *system = None;
    }
    took
}

/// Runs `$VISUAL`/`$EDITOR` on `text` with the screen handed over, and
/// returns the edited text. The editor runs as the person, outside the
/// sandbox, so it starts in the temporary file's folder, not the
/// workspace: editors read a project's own settings from where they start
/// (`.exrc`, `.nvim.lua`, `.helix/languages.toml` naming a language
/// server, `.zed/settings.json`), and a command the model ran could have
/// written those. It is found on cairn's own `PATH`, which holds no
/// workspace folder (`sandbox::own_path`).
pub fn edit_in_editor(text: &str, mouse: bool) -> Result<String, String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_string());
    let file = tempfile::Builder::new()
        .prefix("cairn-prompt-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| format!("cannot create a temporary file: {e}"))?;
    std::fs::write(file.path(), text).map_err(|e| format!("cannot write the prompt: {e}"))?;
    restore();
    // The editor string may carry arguments ("code --wait").
    let mut parts = editor.split_whitespace();
    let program = parts.next().unwrap_or("vi");
    let mut cmd = std::process::Command::new(program);
    cmd.args(parts).arg(file.path());
    if let Some(dir) = file.path().parent() {
        cmd.current_dir(dir);
    }
    let status = cmd.status();
    let back = enter(mouse);
    let status = status.map_err(|e| format!("cannot start `{editor}`: {e}"))?;
    back.map_err(|e| format!("cannot restore the screen: {e}"))?;
    if !status.success() {
        return Err(format!("`{editor}` exited with {status}; prompt unchanged"));
    }
    std::fs::read_to_string(file.path()).map_err(|e| format!("cannot read the edited prompt: {e}"))
}
