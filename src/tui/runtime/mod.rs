//! The event loop: terminal events, agent events, answers from effects and
//! a timer in one `select!`; draws only when something changed, at most
//! every ~8 ms after input and ~33 ms while only streamed text changes. Every `Cmd` that `update` returns runs here, in `execute`.

mod effects;
mod pictures;

use std::io::Write;
use std::time::Duration;

use crossterm::event::{Event, EventStream};

use super::render::late_answers::LateFiltered;
use ratatui::Terminal;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::{Instant, MissedTickBehavior, interval, sleep_until};

use crate::protocol::{AgentCommand, AgentEvent};
use crate::tui::cmd::Cmd;
use crate::tui::model::Model;
use crate::tui::msg::Msg;
use crate::tui::render::flush::{self, FlushBackend, FlushOptions};
use crate::tui::render::terminal;
use crate::tui::update::update;
use crate::tui::view::view;

pub use effects::Handles;

/// Frames after the person's input come at most this close together.
const FRAME_GAP: Duration = Duration::from_millis(8);
/// Frames that only show streamed output: 30 a second still reads as
/// smooth text, and each frame costs bytes on the wire (the line being
/// streamed and the status line are rewritten every frame).
const STREAM_FRAME_GAP: Duration = Duration::from_millis(33);
const TICK: Duration = Duration::from_millis(100);

pub async fn run_loop(
    mut model: Model,
    commands: UnboundedSender<AgentCommand>,
    mut events: UnboundedReceiver<AgentEvent>,
    handles: Handles,
    startup: Vec<Cmd>,
) -> anyhow::Result<()> {
    terminal::install_panic_hook();
    terminal::enter(model.mouse_captured)?;
    let result = event_loop(&mut model, &commands, &mut events, handles, startup).await;
    terminal::restore();
    let _ = commands.send(AgentCommand::Shutdown);
    // Back on the normal screen: what should stay in the scrollback.
    let width = crossterm::terminal::size().map_or(80, |(w, _)| w);
    let text = crate::tui::exit_text::after_exit(&model, width);
    if !text.is_empty() {
        let mut out = std::io::stdout();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
    result
}

/// Whether the loop goes on after an effect.
enum Flow {
    Continue,
    Quit,
}

/// What effects run with: the terminal, the agent's channel, the services,
/// and the channel their answers come back on.
struct Runtime<'a> {
    term: Terminal<FlushBackend<std::io::Stdout>>,
    input: LateFiltered,
    clipboard: Option<arboard::Clipboard>,
    commands: &'a UnboundedSender<AgentCommand>,
    replies: UnboundedSender<Msg>,
    handles: Handles,
}

impl Runtime<'_> {
    /// Runs one effect `update` asked for. Effects that answer later send
    /// their `Msg` on `replies`.
    fn execute(&mut self, cmd: Cmd, model: &Model) -> anyhow::Result<Flow> {
        let tx = self.replies.clone();
        match cmd {
            Cmd::Quit => return Ok(Flow::Quit),
            Cmd::Send(c) => {
                let _ = self.commands.send(c);
            }
            Cmd::Session(req) => self.handles.session(req, tx),
            Cmd::ListFiles => self.handles.list_files(tx),
            Cmd::ReloadCommands => self.handles.reload_commands(tx),
            Cmd::ShowMcpStatus => self.handles.mcp_status(tx),
            Cmd::McpPrompt(command) => self.handles.mcp_prompt(command, tx),
            Cmd::RestartMcp(name) => {
                let _ = tx.send(self.handles.restart_mcp(&name));
            }
            Cmd::ShowPermissionRules => self.handles.permission_rules(tx),
            Cmd::ShowHooks => self.handles.hooks(tx),
            Cmd::SaveSetting { key, value } => self.handles.save_setting(key, value, tx),
            Cmd::CopyToClipboard(text) => {
                let system = terminal::copy_to_clipboard(&text, &mut self.clipboard);
                let _ = tx.send(Msg::Copied { system });
            }
            Cmd::SetMouseCapture(on) => terminal::set_mouse_capture(on)?,
            Cmd::Notify(text) => terminal::notify(model.notify, &text),
            Cmd::ReadImage(source) => pictures::read_image(source, &self.handles.project_root, tx),
            Cmd::AppendHistory(text) => {
                if let Some(path) = &self.handles.history_file
                    && let Err(e) = append_history(path, &text)
                {
                    tracing::warn!("cannot write prompt history {}: {e}", path.display());
                }
            }
            Cmd::OpenEditor(text) => {
                // The reader thread would steal the editor's keys.
                self.input.reopen();
                let edited = terminal::edit_in_editor(&text, model.mouse_captured);
                self.term.clear()?;
                let _ = tx.send(Msg::EditorClosed(edited));
            }
        }
        Ok(Flow::Continue)
    }

    /// Runs every effect in order; stops at `Quit`.
    fn execute_all(&mut self, cmds: Vec<Cmd>, model: &Model) -> anyhow::Result<Flow> {
        for cmd in cmds {
            if let Flow::Quit = self.execute(cmd, model)? {
                return Ok(Flow::Quit);
            }
        }
        Ok(Flow::Continue)
    }
}

/// Sets the model's clock: `update` reads time only from the model.
fn set_clock(model: &mut Model) {
    model.now = std::time::Instant::now();
    model.now_ms = chrono::Utc::now().timestamp_millis();
}

async fn event_loop(
    model: &mut Model,
    commands: &UnboundedSender<AgentCommand>,
    events: &mut UnboundedReceiver<AgentEvent>,
    handles: Handles,
    startup: Vec<Cmd>,
) -> anyhow::Result<()> {
    let (replies, mut reply_rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let mut rt = Runtime {
        term: flush_terminal(handles.scroll_regions)?,
        input: LateFiltered::new(EventStream::new()),
        clipboard: None,
        commands,
        replies,
        handles,
    };
    rt.handles.watch_mcp_prompts(rt.replies.clone());
    // What the terminal answered at start decides the first frame's theme.
    let facts = crate::tui::msg::TerminalFacts {
        background: terminal::background(),
        holds_lone_esc: terminal::holds_lone_esc(),
        enhanced_keys: terminal::enhanced_keys(),
    };
    let first = update(model, Msg::Terminal(facts));
    if let Flow::Quit = rt.execute_all(first, model)? {
        return Ok(());
    }
    if let Flow::Quit = rt.execute_all(startup, model)? {
        return Ok(());
    }
    // Not needed for the first frame: it may start a process.
    rt.handles.probe_sandbox(rt.replies.clone());
    let mut tick = interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut end_signals = super::render::suspend::EndSignals::new()?;
    let mut job_signals = super::render::suspend::JobSignals::new()?;
    let mut agent_open = true;
    let mut dirty = true;
    // Something the person did is waiting to be drawn.
    let mut urgent = true;
    let mut last_draw = Instant::now() - STREAM_FRAME_GAP;

    loop {
        let gap = if urgent { FRAME_GAP } else { STREAM_FRAME_GAP };
        if dirty && Instant::now() >= last_draw + gap {
            // What the agent sent while the frame waited goes into it: the
            // loop does not wake for each delta while a frame is pending.
            let mut msgs = Vec::new();
            drain_agent(events, &mut agent_open, &mut msgs);
            if let Flow::Quit = handle_all(&mut rt, model, msgs, &mut urgent)? {
                return Ok(());
            }
            set_clock(model);
            flush::draw(&mut rt.term, |f| view(model, f))?;
            last_draw = Instant::now();
            dirty = false;
            urgent = false;
        }
        let mut msgs = Vec::new();
        tokio::select! {
            ev = rt.input.next() => match ev {
                Some(Ok(ev)) if super::render::suspend::is_suspend_key(&ev) => {
                    super::render::suspend::suspend(model.mouse_captured)?;
                    rt.term.clear()?;
                    dirty = true;
                }
                Some(Ok(ev)) => msgs.extend(to_msg(ev)),
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            // Once a frame is pending, the agent's events wait for it.
            ev = events.recv(), if agent_open && !dirty => match ev {
                Some(ev) => {
                    msgs.push(Msg::Agent(ev));
                    // A burst of deltas costs one frame.
                    drain_agent(events, &mut agent_open, &mut msgs);
                }
                None => {
                    agent_open = false;
                    msgs.push(Msg::AgentGone);
                }
            },
            Some(msg) = reply_rx.recv() => msgs.push(msg),
            _ = tick.tick(), if model.needs_tick() => msgs.push(Msg::Tick(std::time::Instant::now())),
            _ = sleep_until(last_draw + gap), if dirty => {}
            _ = end_signals.recv() => return Ok(()),
            job = job_signals.recv() => {
                use super::render::suspend::JobSignal;
                match job {
                    JobSignal::Stop => super::render::suspend::suspend(model.mouse_captured)?,
                    JobSignal::Continue => terminal::reassert(model.mouse_captured)?,
                }
                rt.term.clear()?;
                dirty = true;
            }
        }
        dirty |= !msgs.is_empty();
        if let Flow::Quit = handle_all(&mut rt, model, msgs, &mut urgent)? {
            return Ok(());
        }
    }
}

/// Takes every event the agent has sent so far, without waiting.
fn drain_agent(
    events: &mut UnboundedReceiver<AgentEvent>,
    agent_open: &mut bool,
    msgs: &mut Vec<Msg>,
) {
    if !*agent_open {
        return;
    }
    loop {
        match events.try_recv() {
            Ok(ev) => msgs.push(Msg::Agent(ev)),
            Err(tokio::sync::mpsc::error::TryRecvError::Empty) => return,
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                *agent_open = false;
                msgs.push(Msg::AgentGone);
                return;
            }
        }
    }
}

/// Updates the model with each message and runs the effects it asks for;
/// stops at `Quit`. A message from the person makes the next frame urgent.
fn handle_all(
    rt: &mut Runtime<'_>,
    model: &mut Model,
    msgs: Vec<Msg>,
    urgent: &mut bool,
) -> anyhow::Result<Flow> {
    for msg in msgs {
        *urgent |= !matches!(msg, Msg::Agent(_) | Msg::Tick(_));
        set_clock(model);
        let cmds = update(model, msg);
        if let Flow::Quit = rt.execute_all(cmds, model)? {
            return Ok(Flow::Quit);
        }
    }
    Ok(Flow::Continue)
}

/// The terminal drawn through cairn's own flush, cleared.
fn flush_terminal(scroll_regions: bool) -> anyhow::Result<Terminal<FlushBackend<std::io::Stdout>>> {
    let options = FlushOptions {
        scroll_regions,
        synchronized: terminal::synchronized_output(),
    };
    let mut term = Terminal::new(FlushBackend::new(std::io::stdout(), options)?)?;
    term.clear()?;
    Ok(term)
}

fn to_msg(ev: Event) -> Option<Msg> {
    Some(match ev {
        Event::Key(k) => Msg::Key(k),
        Event::Paste(p) => Msg::Paste(p),
        Event::Mouse(m) => Msg::Mouse(m),
        Event::Resize(width, height) => Msg::Resize { width, height },
        Event::FocusGained => Msg::Focus(true),
        Event::FocusLost => Msg::Focus(false),
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
