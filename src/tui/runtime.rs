//! The event loop: terminal events, agent events and a timer in one
//! `select!`; draws only when something changed, at most every ~8 ms.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::{Instant, MissedTickBehavior, interval, sleep_until};

use crate::agent::{AgentCommand, AgentEvent};
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;
use crate::tui::msg::Msg;
use crate::tui::services::Services;
use crate::tui::terminal;
use crate::tui::update::update;
use crate::tui::view::view;

/// Frames after the person's input come at most this close together.
const FRAME_GAP: Duration = Duration::from_millis(8);
/// Frames that only show streamed output: 60 a second is smooth, and half
/// the drawing of 120.
const STREAM_FRAME_GAP: Duration = Duration::from_millis(16);
const TICK: Duration = Duration::from_millis(100);

pub async fn run_loop(
    mut model: Model,
    commands: UnboundedSender<AgentCommand>,
    mut events: UnboundedReceiver<AgentEvent>,
    history_file: Option<PathBuf>,
    services: Services,
    startup: Vec<Cmd>,
) -> anyhow::Result<()> {
    terminal::install_panic_hook();
    terminal::enter(model.mouse_captured)?;
    let result = event_loop(
        &mut model,
        &commands,
        &mut events,
        history_file.as_deref(),
        &services,
        startup,
    )
    .await;
    terminal::restore();
    let _ = commands.send(AgentCommand::Shutdown);
    result
}

async fn event_loop(
    model: &mut Model,
    commands: &UnboundedSender<AgentCommand>,
    events: &mut UnboundedReceiver<AgentEvent>,
    history_file: Option<&std::path::Path>,
    services: &Services,
    startup: Vec<Cmd>,
) -> anyhow::Result<()> {
    let (service_tx, mut service_rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    for cmd in startup {
        if let Cmd::Service(s) = cmd {
            services.run(s, service_tx.clone());
        }
    }
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    term.clear()?;
    let mut input = EventStream::new();
    let mut tick = interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut end_signals = super::suspend::EndSignals::new()?;
    let mut clipboard: Option<arboard::Clipboard> = None;
    let mut agent_open = true;
    let mut dirty = true;
    // Something the person did is waiting to be drawn.
    let mut urgent = true;
    let mut last_draw = Instant::now() - STREAM_FRAME_GAP;

    loop {
        let gap = if urgent { FRAME_GAP } else { STREAM_FRAME_GAP };
        if dirty && Instant::now() >= last_draw + gap {
            model.now = std::time::Instant::now();
            term.draw(|f| view(model, f))?;
            last_draw = Instant::now();
            dirty = false;
            urgent = false;
        }
        let mut msgs = Vec::new();
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) if super::suspend::is_suspend_key(&ev) => {
                    super::suspend::suspend(model.mouse_captured)?;
                    term.clear()?;
                    dirty = true;
                }
                Some(Ok(ev)) => msgs.extend(to_msg(ev)),
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            ev = events.recv(), if agent_open => match ev {
                Some(ev) => {
                    msgs.push(Msg::Agent(ev));
                    // A burst of deltas costs one frame.
                    while let Ok(ev) = events.try_recv() {
                        msgs.push(Msg::Agent(ev));
                    }
                }
                None => {
                    agent_open = false;
                    msgs.push(Msg::AgentGone);
                }
            },
            Some(msg) = service_rx.recv() => msgs.push(msg),
            _ = tick.tick(), if model.needs_tick() => msgs.push(Msg::Tick(std::time::Instant::now())),
            _ = sleep_until(last_draw + gap), if dirty => {}
            _ = end_signals.recv() => return Ok(()),
        }
        for msg in msgs {
            dirty = true;
            urgent |= !matches!(msg, Msg::Agent(_) | Msg::Tick(_));
            model.now = std::time::Instant::now();
            for cmd in update(model, msg) {
                match cmd {
                    Cmd::Quit => return Ok(()),
                    Cmd::Service(s) => services.run(s, service_tx.clone()),
                    Cmd::Send(c) => {
                        let _ = commands.send(c);
                    }
                    Cmd::CopyToClipboard(text) => {
                        terminal::copy_to_clipboard(&text, &mut clipboard)
                    }
                    Cmd::SetMouseCapture(on) => terminal::set_mouse_capture(on)?,
                    Cmd::AppendHistory(text) => {
                        if let Some(path) = history_file
                            && let Err(e) = append_history(path, &text)
                        {
                            tracing::warn!("cannot write prompt history {}: {e}", path.display());
                        }
                    }
                    Cmd::OpenEditor(text) => {
                        // The reader thread would steal the editor's keys.
                        drop(std::mem::replace(&mut input, EventStream::new()));
                        let edited = terminal::edit_in_editor(&text, model.mouse_captured);
                        term.clear()?;
                        update(model, Msg::EditorClosed(edited));
                    }
                }
            }
        }
    }
}

fn to_msg(ev: Event) -> Option<Msg> {
    Some(match ev {
        Event::Key(k) => Msg::Key(k),
        Event::Paste(p) => Msg::Paste(p),
        Event::Mouse(m) => Msg::Mouse(m),
        Event::Resize(width, height) => Msg::Resize { width, height },
        Event::FocusGained | Event::FocusLost => return None,
    })
}

/// The per-project prompt history: one JSON string per line, oldest first.
pub fn load_history(path: &std::path::Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .collect()
}

pub fn append_history(path: &std::path::Path, prompt: &str) -> std::io::Result<()> {
    let mut f = crate::private::open_append(path)?;
    let line = serde_json::to_string(prompt).map_err(std::io::Error::other)?;
    writeln!(f, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_round_trips_multiline_prompts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.jsonl");
        append_history(&path, "first").ok();
        append_history(&path, "two\nlines").ok();
        assert_eq!(
            load_history(&path),
            vec!["first".to_string(), "two\nlines".to_string()]
        );
        std::fs::write(&path, "not json\n\"ok\"\n").ok();
        assert_eq!(load_history(&path), vec!["ok".to_string()]);
    }
}
